"""The concurrent-run limit: waiting for a slot, the maximum wait, cancellation, backends."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.lowlevel
import pytest

from reactloop._errors import ConfigurationError, ErrorCode, RunLimitError
from reactloop._policies._limits import RunLimiter

pytestmark = pytest.mark.anyio

MODULE_LIMITER = RunLimiter(1)  # made outside any event loop, used on both backends


async def hold(limiter: RunLimiter, release: anyio.Event) -> None:
    async with limiter.slot():
        await release.wait()


async def until(condition: Callable[[], bool]) -> None:
    """Yield to other tasks until `condition()` holds (no real clock involved)."""
    while not condition():
        await anyio.lowlevel.checkpoint()


async def test_the_run_past_the_limit_waits_for_a_free_slot() -> None:
    limiter, release, entered = RunLimiter(2), anyio.Event(), anyio.Event()

    async def extra() -> None:
        async with limiter.slot():
            entered.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(hold, limiter, release)
        tasks.start_soon(hold, limiter, release)
        await until(lambda: limiter.running == 2)
        tasks.start_soon(extra)
        await until(lambda: limiter.waiting == 1)
        assert not entered.is_set()
        release.set()
        await entered.wait()


async def test_waiting_past_max_wait_raises_a_typed_error() -> None:
    limiter, release = RunLimiter(1, max_wait=0.01), anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(hold, limiter, release)
        await until(lambda: limiter.running == 1)
        with pytest.raises(RunLimitError) as raised:
            async with limiter.slot():
                pass
        release.set()
    assert raised.value.code is ErrorCode.TIMEOUT
    assert "max_wait=0.01 s" in str(raised.value)
    assert "max_runs=1" in str(raised.value)


async def test_max_wait_zero_fails_at_once_when_full_but_enters_when_free() -> None:
    limiter = RunLimiter(1, max_wait=0)
    async with limiter.slot():
        with pytest.raises(RunLimitError):
            async with limiter.slot():
                pass
    async with limiter.slot():
        assert limiter.running == 1


async def test_cancelling_a_waiter_propagates_and_frees_its_place() -> None:
    limiter, release = RunLimiter(1), anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(hold, limiter, release)
        await until(lambda: limiter.running == 1)
        with anyio.CancelScope() as scope:

            async def cancel_once_waiting() -> None:
                await until(lambda: limiter.waiting == 1)
                scope.cancel()

            tasks.start_soon(cancel_once_waiting)
            async with limiter.slot():
                pytest.fail("a cancelled waiter must not enter")
        assert scope.cancelled_caught
        assert limiter.waiting == 0
        release.set()
    assert limiter.running == 0


async def test_the_slot_is_released_when_the_run_raises() -> None:
    limiter = RunLimiter(1, max_wait=0)
    with pytest.raises(ValueError, match="run failed"):
        async with limiter.slot():
            raise ValueError("run failed")
    async with limiter.slot():
        assert limiter.running == 1


async def test_one_task_may_hold_several_slots_for_nested_runs() -> None:
    limiter = RunLimiter(2)
    async with limiter.slot(), limiter.slot():
        assert limiter.running == 2


async def test_a_limiter_made_outside_an_event_loop_works_on_each_backend() -> None:
    release = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(hold, MODULE_LIMITER, release)
        await until(lambda: MODULE_LIMITER.running == 1)
        tasks.start_soon(hold, MODULE_LIMITER, release)
        await until(lambda: MODULE_LIMITER.waiting == 1)
        release.set()
    assert MODULE_LIMITER.running == 0


@pytest.mark.parametrize(
    ("max_runs", "max_wait"), [(0, None), (-1, None), (1.5, None), (True, None), (1, -1.0)]
)
def test_bad_settings_name_the_setting_and_value(max_runs: int, max_wait: float | None) -> None:
    with pytest.raises(ConfigurationError, match=r"RunLimiter\.max_"):
        RunLimiter(max_runs, max_wait=max_wait)


def test_nan_max_wait_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="nan"):
        RunLimiter(1, max_wait=float("nan"))

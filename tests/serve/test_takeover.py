"""A run whose worker died mid-run (its lease let go, the run still running in the store, as
`claimable_runs()` lists it) is taken over by the worker a client reconnects to: resumed there,
so the client gets the rest of the run instead of following a journal that never grows. The
lease decides who drives it: two workers reconnected to at once drive it once. Two RunHosts
(or three) over one SQLite file; the dead worker is a host whose task group was cancelled."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from reactloop._core import RunFinished, RunStatus
from reactloop._serve import LiveRun, RunHost, ServeOptions
from reactloop.stores import MemoryStore, SqliteStore
from tests.serve.hosting import (
    HANG,
    Gate,
    finished,
    loop_of,
    read_all,
    turn,
    waiting_function_model,
)

pytestmark = pytest.mark.anyio

OPTIONS = ServeOptions(follow_interval=0.01)


def worker(path: Path, name: str, gate: Gate) -> RunHost:
    """A worker: a host whose loop waits in a tool until the gate opens, on the SQLite file."""
    store = SqliteStore(path, worker_id=name)
    return RunHost(loop_of(waiting_function_model(), gate.tool(), store=store), OPTIONS)


async def died(path: Path, gate: Gate) -> None:
    """Run r1 on a worker that dies (its task group cancelled) while the tool runs."""
    store = SqliteStore(path, worker_id="one")
    first = RunHost(loop_of(waiting_function_model(), gate.tool(), store=store), OPTIONS)
    async with first.running():
        await first.submit(turn("wait", run_id="r1", session_id="s1"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
    assert [summary.run_id for summary in await store.claimable_runs()] == ["r1"]
    await store.aclose()


async def test_a_reconnect_to_a_run_whose_worker_died_takes_it_over_and_gets_the_rest(
    tmp_path: Path,
) -> None:
    gate = Gate()
    await died(tmp_path / "runs.db", gate)
    gate.opened.set()
    second = worker(tmp_path / "runs.db", "two", gate)
    async with second.running():
        live = await second.find("r1", "ann", {})
        assert live is not None
        assert live.stream is not None or live.done  # driven here, not followed
        end = await finished(live)
    assert second.store is not None
    stored = await second.store.load("r1")
    await second.store.aclose()
    assert end.result.output == "Done waiting." and stored.status is RunStatus.FINISHED
    assert gate.calls == ["a", "a"]  # cut off on the dead worker, run again once here
    whole = await read_all(live)
    assert sum(isinstance(event, RunFinished) for event in whole) == 1


async def test_two_workers_reconnected_to_at_once_drive_the_run_once(tmp_path: Path) -> None:
    gate = Gate()
    await died(tmp_path / "runs.db", gate)
    gate.opened.set()
    second, third = (worker(tmp_path / "runs.db", name, gate) for name in ("two", "three"))
    lives: list[LiveRun] = []

    async def reconnect(host: RunHost) -> None:
        found = await host.find("r1", "ann", {})
        assert found is not None
        lives.append(found)

    async with second.running(), third.running():
        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(reconnect, second)
                tasks.start_soon(reconnect, third)
        ends = [await finished(live) for live in lives]
    for host in (second, third):
        assert host.store is not None
        await host.store.aclose()
    assert [end.result.output for end in ends] == ["Done waiting.", "Done waiting."]
    assert gate.calls == ["a", "a"]  # one more run of the tool: one worker took it over


async def test_a_run_still_running_in_a_store_without_leases_is_followed_not_taken() -> None:
    """A MemoryStore's running run is driven in this process (it has no leases to tell a dead
    driver from a live one): a host that does not drive it follows it."""
    gate = Gate()
    store = MemoryStore()
    first = RunHost(loop_of(waiting_function_model(), gate.tool(), store=store), OPTIONS)
    second = RunHost(loop_of(waiting_function_model(), gate.tool(), store=store), OPTIONS)
    async with first.running(), second.running():
        live = await first.submit(turn("wait", run_id="r1"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        followed = await second.find("r1", "ann", {})
        assert followed is not None and followed.stream is None
        gate.opened.set()
        await finished(live)
        end = await finished(followed)
    assert end.result.output == "Done waiting." and gate.calls == ["a"]

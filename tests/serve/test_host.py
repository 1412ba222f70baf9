"""The run host drives runs beyond the request that started them: a retried start attaches, a
dropped client leaves its run going or stops it, an approval reaches the paused run once (on
this worker or another sharing the SQLite file), and a user touches only their own runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from reactloop import Approve, StopReason
from reactloop._core import RunFinished, RunPaused, ToolCallFinished
from reactloop._serve import (
    Action,
    DisconnectPolicy,
    ForbiddenError,
    LiveRun,
    NotPendingError,
    RequestRejectedError,
    RunHost,
    ServeOptions,
    TooManyRunsError,
    UnknownRunError,
)
from reactloop.approval import ApprovalOptions
from reactloop.errors import ConfigurationError
from reactloop.stores import MemoryStore, SqliteStore
from tests.serve.hosting import (
    HANG,
    Gate,
    Payments,
    answer,
    finished,
    loop_of,
    paying_model,
    read_all,
    turn,
    waiting_function_model,
    waiting_model,
)

pytestmark = pytest.mark.anyio

KEY = "a-state-key-of-at-least-32-bytes-for-tests"


class Clock:
    """The host's monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def paused(host: RunHost, run_id: str = "r1", user: str = "ann") -> tuple[LiveRun, str]:
    """Start a paying run and read it to its pause; the held call's id."""
    live = await host.submit(turn("pay 5", run_id=run_id, session_id="s1"), user, {})
    end = await finished(live)
    assert end.result.paused
    return live, end.result.pending[0].call_id


async def test_a_run_goes_on_when_its_last_follower_drops_and_the_policy_keeps_it_running() -> None:
    gate = Gate()
    host = RunHost(loop_of(waiting_model(), gate.tool(), store=MemoryStore()))
    assert host.on_disconnect is DisconnectPolicy.KEEP_RUNNING  # the default with a store
    async with host.running():
        live = await host.submit(turn("wait"), "ann", {})
        host.attach(live)
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        host.detach(live, disconnected=True)
        gate.opened.set()
        end = await finished(live)
    assert end.result.stop_reason is StopReason.COMPLETED and end.result.output == "Done waiting."


async def test_a_run_is_interrupted_when_its_last_follower_drops_and_the_policy_interrupts() -> (
    None
):
    gate = Gate()
    model = waiting_model()
    host = RunHost(loop_of(model, gate.tool()))
    assert host.on_disconnect is DisconnectPolicy.INTERRUPT  # the default without a store
    async with host.running():
        live = await host.submit(turn("wait"), "ann", {})
        host.attach(live)
        host.attach(live)
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        host.detach(live, disconnected=True)  # one follower is left: the run goes on
        assert live.stream is not None
        host.detach(live, disconnected=True)
        gate.opened.set()
        end = await finished(live)
    assert end.result.stop_reason is StopReason.INTERRUPTED
    assert model.remaining == 1  # the answer after the tool was never asked for


async def test_a_retried_start_with_the_same_run_id_attaches_to_the_run() -> None:
    gate = Gate()
    model = waiting_model()
    host = RunHost(loop_of(model, gate.tool(), store=MemoryStore()))
    async with host.running():
        lives: list[LiveRun] = []

        async def start() -> None:
            lives.append(await host.submit(turn("wait", run_id="order-7"), "ann", {}))

        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(start)
                tasks.start_soon(start)
        gate.opened.set()
        await finished(lives[0])
        again = await host.submit(turn("wait", run_id="order-7"), "ann", {})  # after its end
        end = await finished(again)
    assert lives[0] is lives[1] and again is lives[0]
    assert end.result.output == "Done waiting." and gate.calls == ["a"]
    assert len(model.requests) == 2  # one run: its two steps, asked once each


async def test_a_retried_start_on_another_worker_follows_the_run_instead_of_starting_it(
    tmp_path: Path,
) -> None:
    gate = Gate()
    first, second = SqliteStore(tmp_path / "runs.db"), SqliteStore(tmp_path / "runs.db")
    model, other_model = waiting_model(), waiting_model()
    host = RunHost(loop_of(model, gate.tool(), store=first))
    other = RunHost(
        loop_of(other_model, gate.tool(), store=second), ServeOptions(follow_interval=0.01)
    )
    async with host.running(), other.running():
        await host.submit(turn("wait", run_id="order-7"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        followed = await other.submit(turn("wait", run_id="order-7"), "ann", {})
        gate.opened.set()
        end = await finished(followed)
    await first.aclose()
    await second.aclose()
    assert end.result.output == "Done waiting." and not other_model.requests
    assert gate.calls == ["a"]


async def test_an_approval_submitted_twice_at_once_runs_the_call_once() -> None:
    payments = Payments()
    host = RunHost(loop_of(paying_model(), payments.tool(), store=MemoryStore()))
    async with host.running():
        _, call_id = await paused(host)
        lives: list[LiveRun] = []

        async def approve() -> None:
            lives.append(await host.submit(answer("r1", {call_id: Approve()}), "ann", {}))

        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(approve)
                tasks.start_soon(approve)
        ends = [await finished(live) for live in lives]
    assert payments.paid == [5]
    assert [end.result.output for end in ends] == ["Paid 5.", "Paid 5."]


async def test_an_approval_given_to_two_workers_sharing_a_sqlite_file_runs_the_call_once(
    tmp_path: Path,
) -> None:
    payments = Payments()
    first, second = SqliteStore(tmp_path / "runs.db"), SqliteStore(tmp_path / "runs.db")
    options = ServeOptions(follow_interval=0.01)
    host = RunHost(loop_of(paying_model(), payments.tool(), store=first), options)
    other = RunHost(loop_of(paying_model(), payments.tool(), store=second), options)
    async with host.running(), other.running():
        _, call_id = await paused(host)
        lives: list[LiveRun] = []

        async def approve(worker: RunHost) -> None:
            lives.append(await worker.submit(answer("r1", {call_id: Approve()}), "ann", {}))

        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(approve, host)
                tasks.start_soon(approve, other)
        ends = [await finished(live) for live in lives]
        stored = await first.load("r1")
    await first.aclose()
    await second.aclose()
    assert payments.paid == [5]
    assert {end.result.output for end in ends} == {"Paid 5."}
    assert stored.output == "Paid 5."


async def test_an_approval_for_a_call_that_is_not_pending_is_refused() -> None:
    payments = Payments()
    host = RunHost(loop_of(paying_model(), payments.tool(), store=MemoryStore()))
    async with host.running():
        await paused(host)
        with pytest.raises(NotPendingError) as refused:
            await host.submit(answer("r1", {"call_forged": Approve()}), "ann", {})
    assert refused.value.status == 409 and "call_forged" in refused.value.message
    assert payments.paid == []


async def test_an_approval_repeated_on_another_worker_after_the_run_went_on_is_ignored() -> None:
    payments, store = Payments(), MemoryStore()
    host = RunHost(loop_of(paying_model(), payments.tool(), store=store))
    other = RunHost(loop_of(paying_model(), payments.tool(), store=store))
    async with host.running(), other.running():
        _, call_id = await paused(host)
        await finished(await host.submit(answer("r1", {call_id: Approve()}), "ann", {}))
        again = await other.submit(answer("r1", {call_id: Approve()}), "ann", {})
        end = await finished(again)
    assert payments.paid == [5] and end.result.output == "Paid 5."


async def test_another_users_run_is_forbidden() -> None:
    payments = Payments()
    host = RunHost(loop_of(paying_model(), payments.tool(), store=MemoryStore()))
    async with host.running():
        _, call_id = await paused(host, user="ann")
        with pytest.raises(ForbiddenError) as approving:
            await host.submit(answer("r1", {call_id: Approve()}), "mallory", {})
        with pytest.raises(ForbiddenError):
            await host.find("r1", "mallory", {})
        with pytest.raises(ForbiddenError):
            await host.cancel("r1", "mallory", {})
        with pytest.raises(ForbiddenError):
            await host.submit(turn("next turn", session_id="s1"), "mallory", {})
    assert approving.value.status == 403 and payments.paid == []


async def test_the_authorize_hook_decides_who_may_act() -> None:
    asked: list[Any] = []

    async def only_reads(request: Any) -> bool:
        asked.append(request)
        return bool(request.action is Action.READ)

    loop = loop_of(paying_model(), Payments().tool(), store=MemoryStore())
    host = RunHost(loop, ServeOptions(authorize=only_reads))
    async with host.running():
        with pytest.raises(ForbiddenError):
            await host.submit(turn("pay 5", session_id="s1"), "ann", {"x-team": "blue"})
    assert asked[0].action.value == "start" and asked[0].headers == {"x-team": "blue"}


async def test_a_user_with_max_runs_streaming_is_refused_another() -> None:
    gate = Gate()
    model = waiting_model()
    host = RunHost(loop_of(model, gate.tool()), ServeOptions(max_runs_per_user=1))
    async with host.running():
        live = await host.submit(turn("wait"), "ann", {})
        with pytest.raises(TooManyRunsError) as refused:
            await host.submit(turn("wait again"), "ann", {})
        gate.opened.set()
        await finished(live)
    assert refused.value.status == 429 and len(model.requests) == 2


async def test_a_new_turn_of_a_session_whose_run_is_paused_is_a_conflict() -> None:
    host = RunHost(loop_of(paying_model(), Payments().tool(), store=MemoryStore()))
    async with host.running():
        await paused(host)
        with pytest.raises(RequestRejectedError) as busy:
            await host.submit(turn("something else", session_id="s1"), "ann", {})
    assert busy.value.status == 409 and "paused" in busy.value.message


async def test_a_run_not_live_here_is_replayed_from_the_store(tmp_path: Path) -> None:
    payments = Payments()
    first, second = SqliteStore(tmp_path / "runs.db"), SqliteStore(tmp_path / "runs.db")
    host = RunHost(loop_of(paying_model(), payments.tool(), store=first))
    other = RunHost(loop_of(paying_model(), payments.tool(), store=second))
    async with host.running(), other.running():
        live, _ = await paused(host)
        replay = await other.find("r1", "ann", {})
        assert replay is not None and replay.done
        events = await read_all(replay)
        missing = await other.find("nobody", "ann", {})
    await first.aclose()
    await second.aclose()
    assert missing is None
    end = events[-1]
    assert isinstance(end, RunFinished) and isinstance(events[-2], RunPaused)
    assert live.result is not None and end.result.output == "Paying."
    assert end.result.pending == live.result.pending and end.result.messages == live.result.messages


async def test_a_run_another_worker_drives_is_followed_to_its_end(tmp_path: Path) -> None:
    gate = Gate()
    first, second = SqliteStore(tmp_path / "runs.db"), SqliteStore(tmp_path / "runs.db")
    host = RunHost(loop_of(waiting_model(), gate.tool(), store=first))
    other = RunHost(
        loop_of(waiting_model(), gate.tool(), store=second), ServeOptions(follow_interval=0.01)
    )
    async with host.running(), other.running():
        await host.submit(turn("wait", run_id="r1", session_id="s1"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        followed = await other.find("r1", "ann", {})
        active = await other.session_run("s1", "ann", {})
        assert followed is not None and not followed.done and active is followed
        gate.opened.set()
        events = await read_all(followed)
    await first.aclose()
    await second.aclose()
    results = [e.result.content for e in events if isinstance(e, ToolCallFinished)]
    assert results == ["waited for a"]
    assert isinstance(events[-1], RunFinished) and events[-1].result.output == "Done waiting."


async def test_without_a_store_a_paused_runs_token_stays_here_and_an_approval_resumes_it() -> None:
    payments = Payments()
    clock = Clock()
    loop = loop_of(paying_model(), payments.tool(), approval=ApprovalOptions(state_key=KEY))
    host = RunHost(loop, ServeOptions(clock=clock, keep_events_seconds=10))
    async with host.running():
        live, call_id = await paused(host)
        assert live.result is not None and live.result.state is None  # never shown to clients
        clock.now += 60  # the paused run's events are gone: its token is not
        assert await host.find("r1", "ann", {}) is None
        resumed = await host.submit(answer(None, {call_id: Approve()}, session_id="s1"), "ann", {})
        end = await finished(resumed)
        with pytest.raises(NotPendingError):
            await host.submit(answer("r1", {"call_forged": Approve()}), "ann", {})
    assert end.result.output == "Paid 5." and payments.paid == [5]


async def test_without_a_store_an_approval_submitted_twice_at_once_resumes_the_run_once() -> None:
    payments = Payments()
    loop = loop_of(paying_model(), payments.tool(), approval=ApprovalOptions(state_key=KEY))
    host = RunHost(loop)
    async with host.running():
        _, call_id = await paused(host)
        lives: list[LiveRun] = []

        async def approve() -> None:
            lives.append(await host.submit(answer("r1", {call_id: Approve()}), "ann", {}))

        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(approve)
                tasks.start_soon(approve)
        ends = [await finished(live) for live in lives]
    assert payments.paid == [5] and lives[0] is lives[1]
    assert ends[0].result.output == "Paid 5."


async def test_a_finished_run_is_kept_for_reconnects_until_keep_events_seconds_pass() -> None:
    clock = Clock()
    host = RunHost(
        loop_of(waiting_model(), Gate().tool()), ServeOptions(clock=clock, keep_events_seconds=30)
    )
    async with host.running():
        live = await host.submit(turn("pay", run_id="r1"), "ann", {})
        live.interrupt()
        await finished(live)
        clock.now += 29
        kept = await host.find("r1", "ann", {})
        clock.now += 2
        gone = await host.find("r1", "ann", {})
    assert kept is live and gone is None


async def test_cancel_interrupts_a_run_this_worker_drives() -> None:
    gate = Gate()
    host = RunHost(loop_of(waiting_model(), gate.tool(), store=MemoryStore()))
    async with host.running():
        live = await host.submit(turn("wait", run_id="r1"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        await host.cancel("r1", "ann", {})
        gate.opened.set()
        end = await finished(live)
        with pytest.raises(UnknownRunError):
            await host.cancel("nobody", "ann", {})
    assert end.result.stop_reason is StopReason.INTERRUPTED


async def test_submit_outside_running_says_what_is_missing() -> None:
    host = RunHost(loop_of(waiting_model(), Gate().tool()))
    with pytest.raises(ConfigurationError, match="running"):
        await host.submit(turn("wait"), "ann", {})


async def test_a_replay_nobody_streams_any_more_stops_reading_the_store(tmp_path: Path) -> None:
    gate = Gate()
    first, second = SqliteStore(tmp_path / "runs.db"), SqliteStore(tmp_path / "runs.db")
    host = RunHost(loop_of(waiting_model(), gate.tool(), store=first))
    options = ServeOptions(follow_interval=0.01)
    other = RunHost(loop_of(waiting_model(), gate.tool(), store=second), options)
    async with host.running(), other.running():
        live = await host.submit(turn("wait", run_id="r1"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        followed = await other.find("r1", "ann", {})
        assert followed is not None
        other.attach(followed)
        other.detach(followed, disconnected=True)
        events = await read_all(followed)  # ends without the run's end: no one reads it
        gate.opened.set()
        end = await finished(live)  # the worker driving it goes on
    await first.aclose()
    await second.aclose()
    assert not any(isinstance(event, RunFinished) for event in events)
    assert end.result.output == "Done waiting."


async def test_a_session_with_nothing_streaming_has_no_active_run_and_keeps_its_messages() -> None:
    host = RunHost(loop_of(paying_model(), Payments().tool(), store=MemoryStore()))
    async with host.running():
        assert await host.session_run("s1", "ann", {}) is None
        live = await host.submit(turn("pay 5", run_id="r1", session_id="s1"), "ann", {})
        await finished(live)
        active = await host.session_run("s1", "ann", {})
        messages = await host.session_messages("s1", "ann", {})
        with pytest.raises(ForbiddenError):
            await host.session_messages("s1", "mallory", {})
    assert active is None
    assert live.result is not None and messages == live.result.messages


async def test_a_run_paused_here_and_resumed_by_another_worker_is_followed_from_the_store(
    tmp_path: Path,
) -> None:
    gate = Gate()
    first, second = SqliteStore(tmp_path / "runs.db"), SqliteStore(tmp_path / "runs.db")
    options = ServeOptions(follow_interval=0.01)
    host = RunHost(
        loop_of(waiting_function_model(), gate.tool(approval=True), store=first), options
    )
    other = RunHost(loop_of(waiting_function_model(), gate.tool(approval=True), store=second))
    async with host.running(), other.running():
        start = await host.submit(turn("wait", run_id="r1", session_id="s1"), "ann", {})
        call_id = (await finished(start)).result.pending[0].call_id
        await other.submit(answer("r1", {call_id: Approve()}), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        active = await host.session_run("s1", "ann", {})
        found = await host.find("r1", "ann", {})
        assert active is not None and active is found and active is not start
        gate.opened.set()
        end = await finished(active)
    await first.aclose()
    await second.aclose()
    assert end.result.output == "Done waiting." and gate.calls == ["a"]


async def test_a_start_refused_is_refused_to_a_request_that_attached_to_it_meanwhile() -> None:
    host = RunHost(loop_of(paying_model(), Payments().tool(), store=MemoryStore()))
    async with host.running():
        await paused(host)
        outcomes: list[object] = []

        async def start() -> None:
            try:
                live = await host.submit(turn("again", run_id="r2", session_id="s1"), "ann", {})
            except RequestRejectedError as refused:
                outcomes.append(refused.status)
            else:
                await read_all(live)
                outcomes.append(live.error)

        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(start)
                tasks.start_soon(start)
    assert 409 in outcomes and len(outcomes) == 2
    assert all(outcome == 409 or isinstance(outcome, Exception) for outcome in outcomes)


async def test_a_cancel_for_a_run_another_worker_drives_is_a_conflict(tmp_path: Path) -> None:
    gate = Gate()
    first, second = SqliteStore(tmp_path / "runs.db"), SqliteStore(tmp_path / "runs.db")
    host = RunHost(loop_of(waiting_model(), gate.tool(), store=first))
    other = RunHost(loop_of(waiting_model(), gate.tool(), store=second))
    async with host.running(), other.running():
        live = await host.submit(turn("wait", run_id="r1"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        with pytest.raises(RequestRejectedError) as elsewhere:
            await other.cancel("r1", "ann", {})
        gate.opened.set()
        end = await finished(live)
        await other.cancel("r1", "ann", {})  # a run that has stopped: nothing to do
    await first.aclose()
    await second.aclose()
    assert elsewhere.value.status == 409 and end.result.output == "Done waiting."


async def test_a_worker_whose_resume_finds_the_run_ended_by_another_shows_what_it_did(
    tmp_path: Path,
) -> None:
    """The race of two workers answering one held call: the second read the run paused, but the
    first resumed and finished it before the second's resume began, which then streams only
    the run's end. Its clients still see the call's result and the answer (from the store)."""
    payments = Payments()
    first, second = SqliteStore(tmp_path / "runs.db"), SqliteStore(tmp_path / "runs.db")
    host = RunHost(loop_of(paying_model(), payments.tool(), store=first))
    other = RunHost(loop_of(paying_model(), payments.tool(), store=second))
    async with host.running(), other.running():
        _, call_id = await paused(host)
        late = answer("r1", {call_id: Approve()})
        target = await other._target(late)  # the second worker reads the run paused ...
        await finished(await host.submit(answer("r1", {call_id: Approve()}), "ann", {}))
        live = await other._resume(target, late, "ann", {})  # ... and resumes it too late
        with anyio.fail_after(HANG):
            end = await finished(live)
        shown = live.events[live.resumed_at :]
    await first.aclose()
    await second.aclose()
    assert payments.paid == [5] and end.result.output == "Paid 5."
    results = [event.result for event in shown if isinstance(event, ToolCallFinished)]
    assert [result.call_id for result in results] == [call_id] and not results[0].is_error

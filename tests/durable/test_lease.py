"""Many workers on one PostgreSQL database: a run is driven by the worker holding its lease.

Each worker is a `PostgresStore` with its own connection and worker id, as a separate process
would have; the leases are the server's, so two stores in one test race as two machines would.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from reactloop._core._approvals import Approve, Decision
from reactloop._core._decisions import StopReason
from reactloop._core._messages import ModelRequest, ToolCall, Usage
from reactloop._core._records import PhaseDataSaved, RunCreated, RunEnded, RunStatus
from reactloop._core._state import RunContext, RunState
from reactloop._durable._journal import Journal
from reactloop._durable._lease import _beat
from reactloop._durable._stores import MemoryStore, PostgresStore
from reactloop._errors import ConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._workers import resume_claimable
from reactloop._stored_errors import LeaseHeldError, LeaseLostError, SessionBusyError, StoreError
from reactloop._tools._tool import tool
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel
from tests.helpers.postgres_server import expire

pytestmark = pytest.mark.anyio
Workers = Callable[..., PostgresStore]


def created(run_id: str, session_id: str | None = None) -> RunCreated:
    return RunCreated(run_id, "hi", None, (), 0.0, session_id=session_id)


async def test_a_new_run_is_leased_to_its_worker_and_no_other_may_take_it(
    worker: Workers,
) -> None:
    first, second = worker("w1"), worker("w2")
    await first.create_run(created("r1"))
    with pytest.raises(LeaseHeldError, match="leased by worker 'w1'") as held:
        await second.acquire_lease("r1")
    assert held.value.run_id == "r1" and 0 < held.value.seconds_left <= 30
    await first.acquire_lease("r1")  # its own lease: renewed


async def test_an_expired_lease_is_claimed_and_the_old_worker_can_no_longer_append(
    worker: Workers, postgres_url: str
) -> None:
    first, second = worker("w1"), worker("w2")
    await first.create_run(created("r1"))
    expire(postgres_url, "r1")
    await second.acquire_lease("r1")
    with pytest.raises(LeaseLostError, match=r"'w1' lost its lease \(now leased by worker 'w2'\)"):
        await first.append("r1", [PhaseDataSaved({"n": 1})])
    assert await first.renew_lease("r1") is False
    assert len((await second.load("r1")).records) == 1
    await second.append("r1", [PhaseDataSaved({"n": 2})])


async def test_the_append_that_ends_a_run_frees_its_lease(worker: Workers) -> None:
    first, second = worker("w1"), worker("w2")
    await first.create_run(created("r1"))
    await first.append("r1", [RunEnded(StopReason.INTERRUPTED, "", None, Usage(), 1.0)])
    assert await first.renew_lease("r1") is False
    await second.acquire_lease("r1")


async def test_claimable_runs_are_the_unended_ones_no_worker_holds(
    worker: Workers, postgres_url: str
) -> None:
    first, other = worker("w1"), worker("w2")
    for run_id in ("live", "dead", "ended", "freed"):
        await first.create_run(created(run_id))
    expire(postgres_url, "dead")
    await first.append("ended", [RunEnded(StopReason.INTERRUPTED, "", None, Usage(), 1.0)])
    await first.release_lease("freed")
    claimable = await other.claimable_runs()
    assert [s.run_id for s in claimable] == ["dead", "freed"]
    assert all(s.status is RunStatus.RUNNING for s in claimable)
    assert [s.run_id for s in await other.claimable_runs(limit=1)] == ["dead"]


async def abandoned(loop: ReActLoop) -> str:
    """A run cut off while its one tool call is in flight (cancelled); its id."""
    block = loop.config.tools["block"]
    assert isinstance(block, FakeTool)
    async with anyio.create_task_group() as tasks, loop.start("go") as handle:
        while block.running == 0:
            await anyio.lowlevel.checkpoint()
        tasks.cancel_scope.cancel()
    return handle.run_id


async def abandoned_in_model_call(store: PostgresStore) -> str:
    """A run cut off during its first model call (nothing after `RunCreated` saved); its id."""
    asked = anyio.Event()

    async def answer(request: ModelRequest) -> str:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    loop = ReActLoop(FunctionModel(answer), store=store)
    async with anyio.create_task_group() as tasks, loop.start("go") as handle:
        await asked.wait()
        tasks.cancel_scope.cancel()
    return handle.run_id


def blocking_loop(store: PostgresStore) -> ReActLoop:
    block = FakeTool("block", gate=anyio.Event())
    return ReActLoop(ScriptedModel([ToolCall("block", id="c1")]), tools=[block], store=store)


async def test_two_workers_racing_to_resume_one_run_exactly_one_drives_it(
    worker: Workers, postgres_url: str
) -> None:
    run_id = await abandoned_in_model_call(worker("w0"))
    expire(postgres_url, run_id, owner="w0")  # w0 died: its lease ran out
    lost, calls, outcomes = anyio.Event(), list[str](), list[object]()
    models: list[ScriptedModel] = []

    @tool
    async def slow(context: RunContext[Any]) -> str:
        """Wait until the other worker has tried (and failed) to take the run."""
        calls.append(context.run_id)
        await lost.wait()
        return "slow done"

    async def resume(name: str) -> None:
        model = ScriptedModel([ToolCall("slow", id="c2"), "done"])
        models.append(model)
        loop = ReActLoop(model, tools=[slow], store=worker(name))
        try:
            outcomes.append((await loop.resume(run_id)).output)
        except LeaseHeldError as error:
            outcomes.append(error)
            lost.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(resume, "w1")
        tasks.start_soon(resume, "w2")
    assert len(outcomes) == 2 and "done" in outcomes
    assert any(isinstance(outcome, LeaseHeldError) for outcome in outcomes)
    assert calls == [run_id]  # one driver: the tool ran once
    assert sorted(model.position for model in models) == [0, 2]  # the other asked nothing
    assert (await worker("w3").load(run_id)).status is RunStatus.FINISHED


async def test_a_cancelled_run_frees_its_lease_at_once(worker: Workers) -> None:
    run_id = await abandoned(blocking_loop(worker("w1")))
    assert [s.run_id for s in await worker("w2").claimable_runs()] == [run_id]


async def test_a_run_being_driven_keeps_its_lease_renewed_and_cannot_be_taken(
    worker: Workers, postgres_url: str
) -> None:
    beats: list[float] = []
    renewed = anyio.Event()

    async def sleep(seconds: float) -> None:
        """The heartbeat's sleep: the first beat goes at once, the second waits forever."""
        beats.append(seconds)
        if len(beats) > 1:
            renewed.set()
            await anyio.sleep_forever()

    store = worker("w1", lease_seconds=6.0)
    block = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([ToolCall("block", id="c1"), "done"])
    loop = ReActLoop(model, tools=[block], store=store, sleep=sleep)
    async with loop.start("go") as handle:
        with anyio.fail_after(30):  # a safety net only: the heartbeat sets it at once
            await renewed.wait()
        expire(postgres_url, handle.run_id)  # were it not renewed again, it would lapse
        assert await store.renew_lease(handle.run_id)
        other = ReActLoop(ScriptedModel([]), tools=[block], store=worker("w2"))
        with pytest.raises(LeaseHeldError, match="leased by worker 'w1'"):
            await other.resume(handle.run_id)
        assert block.gate is not None
        block.gate.set()
        assert (await handle.result()).output == "done"
    assert beats[:2] == [2.0, 2.0]  # a third of the lease


async def test_a_session_turn_is_refused_while_another_worker_drives_one(
    worker: Workers,
) -> None:
    first, second = worker("w1"), worker("w2")
    await first.create_run(created("r1", session_id="s1"))
    with pytest.raises(SessionBusyError, match="'s1'"):
        await second.create_run(created("r2", session_id="s1"))
    await first.append("r1", [RunEnded(StopReason.COMPLETED, "", "ok", Usage(), 1.0)])
    await second.create_run(created("r2", session_id="s1"))


async def test_a_worker_round_resumes_the_runs_whose_worker_died_and_no_others(
    worker: Workers, postgres_url: str
) -> None:
    dead = [await abandoned_in_model_call(worker("w0")) for _ in range(2)]
    for run_id in dead:
        expire(postgres_url, run_id, owner="w0")
    busy = worker("w1")
    await busy.create_run(created("live"))
    model = FunctionModel(lambda request: "recovered")
    loop = ReActLoop(model, store=worker("w2"))
    results = await resume_claimable(loop)
    assert sorted(result.run_id for result in results) == sorted(dead)
    assert all(result.output == "recovered" for result in results)
    assert await resume_claimable(loop) == []
    assert (await busy.load("live")).status is RunStatus.RUNNING


async def test_a_worker_round_needs_a_store_shared_by_workers() -> None:
    with pytest.raises(ConfigurationError, match="PostgresStore"):
        await resume_claimable(ReActLoop(ScriptedModel([]), store=MemoryStore()))


async def test_resuming_a_finished_run_leaves_no_lease_behind(worker: Workers) -> None:
    first = ReActLoop(ScriptedModel(["hi"]), store=worker("w1"))
    done = await first.run("go")
    assert (await first.resume(done.run_id)).output == "hi"
    await worker("w2").acquire_lease(done.run_id)


class FlakyStore:
    """Just what the heartbeat uses: renewals that fail once, succeed, then find no lease."""

    lease_seconds = 3.0

    def __init__(self) -> None:
        self.answers: list[bool | StoreError] = [StoreError("down"), True, False]
        self.renewals = 0

    async def renew_lease(self, run_id: str) -> bool:
        self.renewals += 1
        answer = self.answers.pop(0)
        if isinstance(answer, StoreError):
            raise answer
        return answer


async def test_the_heartbeat_retries_a_failed_renewal_and_stops_once_the_lease_is_gone() -> None:
    store, slept = FlakyStore(), list[float]()

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    journal = Journal(MemoryStore(), RunState("r1", [], None))
    await _beat(store, journal, sleep)  # type: ignore[arg-type]
    assert store.renewals == 3 and slept == [1.0, 1.0, 1.0]
    assert journal.lease_until == -math.inf  # gone: the next model call checks, and stops


async def test_two_workers_approving_one_paused_run_run_the_call_once(worker: Workers) -> None:
    released, ran, outcomes = anyio.Event(), list[str](), list[object]()

    @tool(requires_approval=True)
    async def pay(amount: int) -> str:
        """Pay; waits until the other worker has tried (and failed) to take the run."""
        ran.append(str(amount))
        await released.wait()
        return "paid"

    first = ReActLoop(ScriptedModel([ToolCall("pay", '{"amount": 5}', "c1")]), tools=[pay],
                      store=worker("w0"))  # fmt: skip
    paused = await first.run("go")
    decisions: dict[str, Decision] = {"c1": Approve()}

    async def resume(name: str) -> None:
        loop = ReActLoop(ScriptedModel(["done"]), tools=[pay], store=worker(name))
        try:
            outcomes.append((await loop.resume(paused.run_id, decisions=decisions)).output)
        except LeaseHeldError as error:
            outcomes.append(error)
            released.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(resume, "w1")
        tasks.start_soon(resume, "w2")
    assert ran == ["5"] and "done" in outcomes
    assert any(isinstance(outcome, LeaseHeldError) for outcome in outcomes)

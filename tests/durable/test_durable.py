"""Durable runs: resume continues from the journal without repeating finished work, and sessions
continue a conversation. Every test runs on each store (memory, a real SQLite file)."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import attrs
import pytest
from hypothesis import HealthCheck, given, settings

from reactloop import Limits
from reactloop._core._contracts import RunStore
from reactloop._core._decisions import PROCEED, PhaseDecision, StopReason
from reactloop._core._messages import ToolCall, ToolMessage, ToolSpec, Usage, UserMessage
from reactloop._core._records import ResultSaved, RunStatus, StepClosed
from reactloop._core._repair import INTERRUPTED_RESULT
from reactloop._core._state import Finishing, RunContext, RunResult
from reactloop._durable._stores import MemoryStore, SqliteStore
from reactloop._errors import ConfigurationError, ErrorCode, ProviderUnavailableError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._phases import default_phases, default_start_phases
from reactloop._phases.reasoning import ReasoningPhase
from reactloop._policies._caps import CapPolicy
from reactloop._policies._stop import TokenBudget
from reactloop._stored_errors import (
    MissingToolError,
    RunInProgressError,
    RunNotFoundError,
    SessionBusyError,
)
from reactloop.examples.planning import PlanningPhase
from reactloop.testing import FakeTool, ScriptedModel, reply
from tests.helpers.strategies import CutBatch, cut_batches

pytestmark = pytest.mark.anyio


class Counted(FakeTool):
    """A FakeTool that also notes its name in a shared list each time it is invoked."""

    ran: list[str] | None = None

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        assert self.ran is not None
        self.ran.append(self.name)
        return await super().invoke(arguments, context)


def batch_tools(batch: CutBatch, ran: list[str], *, cut: bool = False) -> list[FakeTool]:
    """One tool per call; in the first run (`cut`), the non-fast ones block until cancelled."""
    tools: list[FakeTool] = []
    for i, kind in enumerate(batch.kinds):
        gate = anyio.Event() if cut and kind != "fast" else None
        tool = Counted(f"t{i}", gate=gate, idempotent=kind == "idempotent")
        tool.ran = ran
        tools.append(tool)
    return tools


async def cancelled_once(
    loop: ReActLoop, store: RunStore, blocked: list[FakeTool], saved: int
) -> str:
    """Start a run, wait until the blocked tools run and `saved` results are saved, cancel."""
    async with anyio.create_task_group() as tasks, loop.start("go") as handle:
        while any(tool.running == 0 for tool in blocked) or (
            await saved_results(store, handle.run_id) < saved
        ):
            await anyio.lowlevel.checkpoint()
        tasks.cancel_scope.cancel()
    return handle.run_id


async def no_wait(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


def tool_results(result: RunResult) -> dict[str, ToolMessage]:
    return {m.call_id: m for m in result.messages if isinstance(m, ToolMessage)}


def assert_paired(result: RunResult) -> None:
    """Every call of the transcript has exactly one result."""
    calls = [c.id for m in result.messages for c in getattr(m, "tool_calls", ())]
    results = [m.call_id for m in result.messages if isinstance(m, ToolMessage)]
    assert sorted(calls) == sorted(results)


async def saved_results(store: RunStore, run_id: str) -> int:
    records = (await store.load(run_id)).records
    return sum(isinstance(record, ResultSaved) for record in records)


async def cancelled_while(tool: FakeTool, loop: ReActLoop, saved: int = 0) -> str:
    """Start a run, wait until `tool` is running and `saved` results are saved, cancel the run;
    its id. The tool's gate is open afterwards: a call wrongly run again on resume returns at
    once (an assertion fails) instead of waiting forever."""
    store = loop.config.store
    assert store is not None
    async with anyio.create_task_group() as tasks, loop.start("go") as handle:
        while tool.running == 0 or await saved_results(store, handle.run_id) < saved:
            await anyio.lowlevel.checkpoint()
        run_id = handle.run_id
        tasks.cancel_scope.cancel()
    open_gate(tool)
    return run_id


def open_gate(tool: FakeTool) -> None:
    """Let every later call of `tool` return at once."""
    assert tool.gate is not None
    tool.gate.set()


async def test_an_interrupted_run_resumes_without_asking_the_model_again(
    any_store: RunStore,
) -> None:
    search = FakeTool("search", gate=anyio.Event())
    first = ReActLoop(ScriptedModel([reply("", ToolCall("search", id="c1"))]), tools=[search])
    loop = ReActLoop(first.config.model, tools=[search], store=any_store)
    async with loop.start("go") as handle:
        while search.running == 0:
            await anyio.lowlevel.checkpoint()
        handle.interrupt()
        assert search.gate is not None
        search.gate.set()
        interrupted = await handle.result()
    assert interrupted.stop_reason is StopReason.INTERRUPTED
    assert (await any_store.load(interrupted.run_id)).status is RunStatus.INTERRUPTED
    model = ScriptedModel(["done"])
    resumed = await ReActLoop(model, tools=[search], store=any_store).resume(interrupted.run_id)
    assert resumed.output == "done" and resumed.stop_reason is StopReason.COMPLETED
    assert len(search.calls) == 1 and len(model.requests) == 1
    assert tool_results(resumed)["c1"].text == "ok"
    assert (await any_store.load(interrupted.run_id)).status is RunStatus.FINISHED


async def test_a_call_cut_off_by_cancellation_is_reported_interrupted_not_run_again(
    any_store: RunStore,
) -> None:
    block = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([reply("", ToolCall("ok", id="c1"), ToolCall("block", id="c2"))])
    ok = FakeTool("ok")
    loop = ReActLoop(model, tools=[ok, block], store=any_store)
    run_id = await cancelled_while(block, loop, saved=1)
    assert (await any_store.load(run_id)).status is RunStatus.RUNNING
    again = ScriptedModel(["done"])
    resumed = await ReActLoop(again, tools=[ok, block], store=any_store).resume(run_id)
    results = tool_results(resumed)
    assert results["c1"].text == "ok" and len(ok.calls) == 1
    assert results["c2"].text == INTERRUPTED_RESULT and results["c2"].is_error
    interrupted = {r.call_id: r for step in resumed.steps for r in step.tool_results}["c2"]
    assert (interrupted.name, interrupted.is_error, interrupted.error_code) == (
        "block",
        True,
        ErrorCode.TOOL_ERROR,
    )
    assert len(block.calls) == 1  # the first, cut-off call only
    assert_paired(resumed)
    assert resumed.output == "done"


async def test_a_resumed_step_is_not_stopped_by_a_cap_its_own_response_reached(
    any_store: RunStore,
) -> None:
    block, later = FakeTool("block", gate=anyio.Event(), exclusive=True), FakeTool("later")
    calls = (ToolCall("block", id="c1"), ToolCall("later", id="c2"))  # c2 waits for c1's batch
    costly = reply("", *calls, usage=Usage(input_tokens=100))
    options: dict[str, Any] = {
        "stop_when": TokenBudget(50),
        "limits": Limits(on_cap=CapPolicy.STOP_NOW),
    }
    tools = [block, later]
    loop = ReActLoop(ScriptedModel([costly]), tools=tools, store=any_store, **options)
    run_id = await cancelled_while(block, loop)
    assert not later.calls
    resumed = await ReActLoop(ScriptedModel([]), tools=tools, store=any_store, **options).resume(
        run_id
    )
    # The step passed its guards before its response: its calls go on, then the cap stops it.
    assert len(later.calls) == 1 and tool_results(resumed)["c2"].text == "ok"
    assert resumed.stop_reason is StopReason.TOKEN_BUDGET and len(resumed.steps) == 1


class FinishResumedSteps:
    """A phase that marks a resumed step as the run's last (as a cap does to a step)."""

    async def __call__(self, run: Run) -> PhaseDecision:
        draft = run.state.current
        if draft is not None and draft.recovered is not None:
            run.state.finishing = Finishing(StopReason.MAX_ITERATIONS, "last step")
        return PROCEED


async def test_a_resumed_step_marked_last_ends_with_its_saved_answers_text(
    any_store: RunStore,
) -> None:
    block = FakeTool("block", gate=anyio.Event())
    phases = default_phases()
    reasoning = next(i for i, phase in enumerate(phases) if isinstance(phase, ReasoningPhase))
    phases.insert(reasoning, FinishResumedSteps())
    model = ScriptedModel([reply("checking", ToolCall("block", id="c1"))])
    run_id = await cancelled_while(block, ReActLoop(model, tools=[block], store=any_store))
    again = ReActLoop(ScriptedModel([]), tools=[block], store=any_store, phases=phases)
    resumed = await again.resume(run_id)
    assert (resumed.stop_reason, resumed.output) == (StopReason.MAX_ITERATIONS, "checking")


@attrs.frozen
class ContractOnly:
    """A tool written to the `Tool` contract alone, around a FakeTool: no `idempotent` flag."""

    inner: FakeTool

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def spec(self) -> ToolSpec:
        return self.inner.spec

    @property
    def timeout(self) -> float | None:
        return self.inner.timeout

    @property
    def exclusive(self) -> bool:
        return self.inner.exclusive

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        return self.inner.parse_arguments(arguments)

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        return await self.inner.invoke(arguments, context)


async def test_a_tool_that_does_not_say_it_is_idempotent_is_not_run_again_on_resume(
    any_store: RunStore,
) -> None:
    block = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([ToolCall("block", id="c1")])
    run_id = await cancelled_while(
        block, ReActLoop(model, tools=[ContractOnly(block)], store=any_store)
    )
    rerun = FakeTool("block", result="fresh")  # a call run again returns: a failure, not a hang
    again = ReActLoop(ScriptedModel(["done"]), tools=[ContractOnly(rerun)], store=any_store)
    resumed = await again.resume(run_id)
    assert tool_results(resumed)["c1"].text == INTERRUPTED_RESULT
    assert not rerun.calls and resumed.output == "done"


async def test_an_idempotent_tool_cut_off_is_run_again_on_resume(any_store: RunStore) -> None:
    block = FakeTool("block", gate=anyio.Event(), idempotent=True)
    loop = ReActLoop(ScriptedModel([ToolCall("block", id="c1")]), tools=[block], store=any_store)
    run_id = await cancelled_while(block, loop)
    rerun = FakeTool("block", idempotent=True, result="fresh")
    resumed = await ReActLoop(ScriptedModel(["done"]), tools=[rerun], store=any_store).resume(
        run_id
    )
    assert tool_results(resumed)["c1"].text == "fresh"
    assert len(rerun.calls) == 1


async def test_a_run_timed_out_mid_batch_resumes_and_keeps_the_finished_results(
    any_store: RunStore,
) -> None:
    ok, block = FakeTool("ok"), FakeTool("block", gate=anyio.Event())
    calls = (ToolCall("ok", id="a"), ToolCall("ok", id="b"), ToolCall("block", id="c"))
    model = ScriptedModel([reply("", *calls)])
    # The run's clock is the event loop's: the timeout leaves room for a loaded machine to reach
    # the batch, and the premise (the blocking call had started) is checked, not assumed.
    loop = ReActLoop(model, tools=[ok, block], store=any_store, limits=Limits(run_timeout=0.3))
    timed_out = await loop.run("go")
    assert timed_out.stop_reason is StopReason.RUN_TIMEOUT
    assert len(block.calls) == 1, "the run timed out before its blocking call started"
    assert (await any_store.load(timed_out.run_id)).status is RunStatus.FAILED
    again = ScriptedModel(["done"])
    # A call run again on resume would return at once (an open gate): a failure, never a hang.
    open_gate = anyio.Event()
    open_gate.set()
    unblocked = FakeTool("block", gate=open_gate)
    resumed = await ReActLoop(again, tools=[ok, unblocked], store=any_store).resume(
        timed_out.run_id
    )
    assert len(ok.calls) == 2 and not unblocked.calls
    assert tool_results(resumed)["c"].text == INTERRUPTED_RESULT
    assert_paired(resumed)
    assert resumed.output == "done" and len(again.requests) == 1


async def test_a_run_failed_by_the_model_resumes_from_its_last_saved_response(
    any_store: RunStore,
) -> None:
    search = FakeTool("search")
    down = [ProviderUnavailableError("down") for _ in range(3)]
    model = ScriptedModel([reply("", ToolCall("search", id="c1")), *down])
    failed = await ReActLoop(model, tools=[search], store=any_store, sleep=no_wait).run("go")
    assert failed.stop_reason is StopReason.ERROR
    assert (await any_store.load(failed.run_id)).status is RunStatus.FAILED
    again = ScriptedModel(["done"])
    resumed = await ReActLoop(again, tools=[search], store=any_store).resume(failed.run_id)
    assert resumed.output == "done" and len(search.calls) == 1 and len(again.requests) == 1
    assert [s.index for s in resumed.steps] == [1, 2]
    assert isinstance(again.requests[0].messages[-1], ToolMessage)


async def test_a_finished_run_resumed_returns_its_stored_result(any_store: RunStore) -> None:
    model = ScriptedModel([reply("", ToolCall("search", id="c1")), "done"])
    search = FakeTool("search")
    done = await ReActLoop(model, tools=[search], store=any_store).run("go")
    untouched = ScriptedModel([])
    again = await ReActLoop(untouched, tools=[search], store=any_store).resume(done.run_id)
    assert (again.output, again.stop_reason, again.messages) == (
        done.output,
        done.stop_reason,
        done.messages,
    )
    assert again.steps == done.steps and again.usage == done.usage
    assert not untouched.requests and len(search.calls) == 1


async def test_resume_stream_gives_the_events_of_the_rest_of_the_run(any_store: RunStore) -> None:
    failed = await ReActLoop(
        ScriptedModel([ProviderUnavailableError("down")] * 3), store=any_store, sleep=no_wait
    ).run("go")
    loop = ReActLoop(ScriptedModel(["done"]), store=any_store)
    async with loop.resume_stream(failed.run_id) as events:
        kinds = [type(event).__name__ async for event in events]
        result = await events.result()
    assert result.output == "done" and kinds[-1] == "RunFinished" and "TextStreamed" in kinds


async def test_resuming_with_a_loop_that_lacks_a_used_tool_is_a_typed_error(
    any_store: RunStore,
) -> None:
    block = FakeTool("block", gate=anyio.Event())
    loop = ReActLoop(ScriptedModel([ToolCall("block")]), tools=[block], store=any_store)
    run_id = await cancelled_while(block, loop)
    with pytest.raises(MissingToolError, match="'block'") as caught:
        await ReActLoop(ScriptedModel([]), store=any_store).resume(run_id)
    assert caught.value.missing == ("block",)


async def test_resuming_an_unknown_run_is_a_typed_error(any_store: RunStore) -> None:
    with pytest.raises(RunNotFoundError, match="'nope'"):
        await ReActLoop(ScriptedModel([]), store=any_store).resume("nope")


async def test_resume_without_a_store_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="store"):
        await ReActLoop(ScriptedModel([])).resume("any")


async def test_resume_takes_deps_again_and_nothing_else(any_store: RunStore) -> None:
    with pytest.raises(ConfigurationError, match="session_id"):
        await ReActLoop(ScriptedModel([]), store=any_store).resume("x", session_id="s")  # type: ignore[call-arg]


async def test_a_session_continues_the_conversation_of_its_earlier_turns(
    any_store: RunStore,
) -> None:
    model = ScriptedModel(["hello Ann", "your name is Ann"])
    loop = ReActLoop(model, store=any_store)
    await loop.run("I am Ann", session_id="s1")
    second = await loop.run("who am I?", session_id="s1")
    sent = model.requests[1].messages
    assert [type(m).__name__ for m in sent] == ["UserMessage", "AssistantMessage", "UserMessage"]
    assert sent[0] == UserMessage("I am Ann") and second.output == "your name is Ann"
    history = await any_store.session_history("s1")
    assert [m.text for m in history] == [
        "I am Ann",
        "hello Ann",
        "who am I?",
        "your name is Ann",
    ]


async def test_sessions_do_not_see_each_other(any_store: RunStore) -> None:
    model = ScriptedModel(["a", "b"])
    loop = ReActLoop(model, store=any_store)
    await loop.run("one", session_id="s1")
    await loop.run("two", session_id="s2")
    assert model.requests[1].messages == (UserMessage("two"),)


async def test_a_second_concurrent_run_of_a_session_fails_with_session_busy(
    any_store: RunStore,
) -> None:
    gate = FakeTool("wait", gate=anyio.Event())
    loop = ReActLoop(ScriptedModel([ToolCall("wait"), "done"]), tools=[gate], store=any_store)
    async with loop.start("first", session_id="s1") as handle:
        while gate.running == 0:
            await anyio.lowlevel.checkpoint()
        with pytest.raises(SessionBusyError, match="'s1'"):
            await loop.run("second", session_id="s1")
        assert gate.gate is not None
        gate.gate.set()
        assert (await handle.result()).output == "done"
    later = ReActLoop(ScriptedModel(["next"]), store=any_store)
    assert (await later.run("third", session_id="s1")).output == "next"


async def test_a_session_with_a_history_given_too_is_a_configuration_error(
    any_store: RunStore,
) -> None:
    loop = ReActLoop(ScriptedModel([]), store=any_store)
    with pytest.raises(ConfigurationError, match="history"):
        await loop.run("hi", history=[UserMessage("before")], session_id="s1")


class Remember:
    """A custom phase keeping a counter in the run's phase data."""

    async def __call__(self, run: Run) -> PhaseDecision:
        data = run.state.phase_data
        data["seen"] = [*data.get("seen", []), run.state.iteration]
        return PROCEED


async def test_custom_phase_data_is_saved_and_restored_on_resume(any_store: RunStore) -> None:
    model = ScriptedModel([ToolCall("search"), *[ProviderUnavailableError("down")] * 3])
    loop = ReActLoop(
        model,
        tools=[FakeTool("search")],
        store=any_store,
        sleep=no_wait,
        phases=[Remember(), *ReActLoop(model).phases],
    )
    failed = await loop.run("go")
    assert (await any_store.load(failed.run_id)).phase_data == {"seen": [1, 2]}
    again = ReActLoop(ScriptedModel(["done"]), tools=[FakeTool("search")], store=any_store)
    again.phases = (Remember(), *again.phases)
    await again.resume(failed.run_id)
    assert (await any_store.load(failed.run_id)).phase_data == {"seen": [1, 2, 2]}


async def test_a_planning_phase_plan_survives_a_resume(any_store: RunStore) -> None:
    model = ScriptedModel(["1. look", ToolCall("search"), *[ProviderUnavailableError("x")] * 3])
    start = [*default_start_phases(), PlanningPhase()]
    options: dict[str, Any] = {"tools": [FakeTool("search")], "store": any_store}
    failed = await ReActLoop(model, start_phases=start, sleep=no_wait, **options).run("go")
    again = ScriptedModel(["done"])
    await ReActLoop(again, start_phases=start, **options).resume(failed.run_id)
    assert again.requests[0].instructions is not None
    assert "1. look" in again.requests[0].instructions
    assert (await any_store.load(failed.run_id)).phase_data == {"plan": "1. look"}


async def test_a_store_url_makes_a_sqlite_store_the_loop_closes(tmp_path: Any) -> None:
    path = tmp_path / "runs.db"
    async with ReActLoop(ScriptedModel(["hi"]), store=f"sqlite:///{path}") as loop:
        result = await loop.run("go")
    store = loop.config.store
    assert store is not None and path.exists()
    assert (await store.load(result.run_id)).output == "hi"


async def test_a_memory_url_makes_a_memory_store() -> None:
    loop = ReActLoop(ScriptedModel([]), store="memory://")
    assert isinstance(loop.config.store, MemoryStore)


async def test_resuming_a_run_this_process_still_drives_is_a_typed_error(
    any_store: RunStore,
) -> None:
    block = FakeTool("block", gate=anyio.Event())
    loop = ReActLoop(ScriptedModel([ToolCall("block"), "done"]), tools=[block], store=any_store)
    async with loop.start("go") as handle:
        while block.running == 0:
            await anyio.lowlevel.checkpoint()
        with pytest.raises(RunInProgressError, match=handle.run_id):
            await loop.resume(handle.run_id)
        assert block.gate is not None
        block.gate.set()
        assert (await handle.result()).output == "done"
    assert (await loop.resume(handle.run_id)).output == "done"


async def test_resume_stream_of_a_finished_run_streams_its_end(any_store: RunStore) -> None:
    done = await ReActLoop(ScriptedModel(["hi"]), store=any_store).run("go")
    loop = ReActLoop(ScriptedModel([]), store=any_store)
    async with loop.resume_stream(done.run_id) as events:
        kinds = [type(event).__name__ async for event in events]
        result = await events.result()
    assert kinds == ["RunFinished"] and result.output == "hi"


async def test_runs_are_listed_by_status_given_as_text(any_store: RunStore) -> None:
    done = await ReActLoop(ScriptedModel(["hi"]), store=any_store).run("go")
    listed = await any_store.list_runs(status="finished")  # type: ignore[arg-type]
    assert [summary.run_id for summary in listed] == [done.run_id]


async def test_a_run_whose_stream_was_left_early_resumes(any_store: RunStore) -> None:
    search = FakeTool("search")
    model = ScriptedModel([ToolCall("search", id="c1"), "never asked"])
    loop = ReActLoop(model, tools=[search], store=any_store)
    async with loop.stream("go") as events:
        async for event in events:
            if type(event).__name__ == "ToolCallFinished":
                break
    left = await events.result()
    assert left.stop_reason is StopReason.STREAM_CLOSED
    assert (await any_store.load(left.run_id)).status is RunStatus.INTERRUPTED
    resumed = await ReActLoop(ScriptedModel(["done"]), tools=[search], store=any_store).resume(
        left.run_id
    )
    assert resumed.output == "done" and len(search.calls) == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=cut_batches)
async def test_every_tool_runs_exactly_once_across_a_cut_and_a_resume(
    batch: CutBatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    ran: list[str] = []
    for store in (MemoryStore(), SqliteStore(tmp_path_factory.mktemp("runs") / "runs.db")):
        ran.clear()
        first = batch_tools(batch, ran, cut=True)
        calls = [ToolCall(f"t{i}", "{}", f"c{i}") for i in range(len(batch.kinds))]
        loop = ReActLoop(ScriptedModel([reply("", *calls)]), tools=first, store=store)
        blocked = [tool for tool in first if tool.gate is not None]
        run_id = await cancelled_once(loop, store, blocked, saved=batch.kinds.count("fast"))
        again = ReActLoop(ScriptedModel(["done"]), tools=batch_tools(batch, ran), store=store)
        resumed = await again.resume(run_id)
        assert resumed.output == "done"
        assert_paired(resumed)
        results = tool_results(resumed)
        for i, kind in enumerate(batch.kinds):
            runs = ran.count(f"t{i}")
            if kind == "fast":
                assert runs == 1 and results[f"c{i}"].text == "ok"
            elif kind == "blocks":
                assert runs == 1 and results[f"c{i}"].text == INTERRUPTED_RESULT
            else:
                assert runs == 2 and results[f"c{i}"].text == "ok"


async def test_a_resumed_step_writes_no_saved_result_again(any_store: RunStore) -> None:
    block = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([reply("", ToolCall("ok", id="c1"), ToolCall("block", id="c2"))])
    ok = FakeTool("ok")
    run_id = await cancelled_while(
        block, ReActLoop(model, tools=[ok, block], store=any_store), saved=1
    )
    await ReActLoop(ScriptedModel(["done"]), tools=[ok, block], store=any_store).resume(run_id)
    records = (await any_store.load(run_id)).records
    written = [r.result.call_id for r in records if isinstance(r, ResultSaved)]
    finals = [
        r.call_id for rec in records if isinstance(rec, StepClosed) for r in rec.final_results
    ]
    assert written == ["c1", "c2"] and finals == []

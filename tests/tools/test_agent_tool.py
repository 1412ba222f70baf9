"""Agents as tools: `loop.as_tool()` runs a whole loop as one tool call of another loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import attrs
import orjson
import pytest

from reactloop import CapPolicy, Limits
from reactloop._cassettes._cassette import Cassette
from reactloop._core._approvals import Approve
from reactloop._core._contracts import Hook
from reactloop._core._decisions import StopReason
from reactloop._core._events import AgentCall, Event, NestedEvent, RunFinished, RunStarted
from reactloop._core._messages import ToolCall, ToolMessage, Usage, UserMessage
from reactloop._core._records import ResultSaved, SubRunLinked
from reactloop._core._state import RunContext, RunResult, ToolResult
from reactloop._durable._stores import MemoryStore
from reactloop._errors import (
    AgentDepthError,
    AgentRunError,
    ConfigurationError,
    ErrorCode,
    ReactLoopError,
    ToolArgumentsError,
)
from reactloop._loop._agent_tool import DEFAULT_MAX_DEPTH, AgentTool
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._output._spec import FINAL_TOOL
from reactloop._tools._nesting import SubRunOutcome
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel, call, reply
from tests.conftest import Store

pytestmark = pytest.mark.anyio


def ask(agent: str, task: str, call_id: str = "c1") -> ToolCall:
    return ToolCall(agent, orjson.dumps({"input": task}).decode(), call_id)


def researcher(*script: Any, **options: Any) -> ReActLoop[Any]:
    return ReActLoop(ScriptedModel(list(script)), **options)


def parent_of(agent: AgentTool, *script: Any, **options: Any) -> ReActLoop[Any]:
    return ReActLoop(ScriptedModel(list(script)), tools=[agent], **options)


def only_result(result: RunResult[Any]) -> ToolResult:
    [tool_result] = [r for step in result.steps for r in step.tool_results]
    return tool_result


async def until(condition: Callable[[], bool]) -> None:
    """Yield to the other tasks until `condition` holds (no clock involved)."""
    while not condition():
        await anyio.lowlevel.checkpoint()


async def test_the_sub_runs_output_is_the_tool_result() -> None:
    agent = researcher("Paris is sunny").as_tool(name="researcher", description="Finds facts.")
    result = await parent_of(agent, ask("researcher", "weather in Paris"), "done").run("go")
    assert only_result(result).content == "Paris is sunny" and not only_result(result).is_error
    assert result.output == "done"


async def test_the_tool_offers_one_required_input_string() -> None:
    agent = researcher().as_tool(name="researcher", description="Finds facts.")
    assert agent.spec.name == "researcher" and agent.spec.description == "Finds facts."
    assert agent.spec.parameters["required"] == ["input"]
    assert agent.spec.parameters["properties"]["input"]["type"] == "string"


async def test_the_sub_runs_usage_is_added_to_the_parents() -> None:
    sub = researcher(reply("fact", usage=Usage(10, 5)))
    agent = sub.as_tool(name="researcher", description="Finds facts.")
    first = reply("", ask("researcher", "x"), usage=Usage(1, 1))
    result = await parent_of(agent, first, reply("done", usage=Usage(2, 2))).run("go")
    assert result.usage == Usage(13, 8)
    assert result.steps[0].usage == Usage(11, 6)  # the step that called the agent
    assert only_result(result).usage == Usage(10, 5)


async def test_a_failed_sub_runs_usage_still_counts() -> None:
    sub = researcher(reply("", call("missing"), usage=Usage(4, 4)))  # then its script runs out
    agent = sub.as_tool(name="researcher", description="Finds facts.")
    result = await parent_of(agent, ask("researcher", "x"), "done").run("go")
    assert only_result(result).is_error and result.usage == Usage(4, 4)


async def test_the_sub_runs_transcript_is_kept_apart_in_the_result() -> None:
    agent = researcher("fact").as_tool(name="researcher", description="Finds facts.")
    result = await parent_of(agent, ask("researcher", "find it", "c7"), "done").run("go")
    assert not any(m == UserMessage("find it") for m in result.messages)
    sub = result.sub_runs["c7"]
    assert sub.messages[0] == UserMessage("find it") and sub.output == "fact"
    assert only_result(result).sub_run_id == sub.run_id != result.run_id


async def test_a_failed_sub_run_gives_an_error_result_naming_why() -> None:
    errors: list[tuple[Run, ReactLoopError]] = []

    class Errors(Hook):
        async def on_error(self, run: Run, error: ReactLoopError) -> None:
            errors.append((run, error))

    agent = researcher().as_tool(name="researcher", description="Finds facts.")
    parent = parent_of(agent, ask("researcher", "x"), "done", hooks=[Errors()])
    result = await parent.run("go")
    outcome = only_result(result)
    assert outcome.is_error and outcome.error_code is ErrorCode.TOOL_ERROR
    assert "'researcher'" in outcome.content and "no response left" in outcome.content
    [(run, error)] = errors  # told once, with the parent's run
    assert isinstance(error, AgentRunError) and error.run_id == outcome.sub_run_id
    assert run.state.run_id == result.run_id


async def test_an_agent_tool_that_raises_gives_an_error_result_naming_it() -> None:
    class LinksFail(MemoryStore):
        async def append(self, run_id: str, records: Any) -> None:
            if any(isinstance(record, SubRunLinked) for record in records):
                raise OSError("disk full")
            await super().append(run_id, records)

    agent = researcher("fact").as_tool(name="researcher", description="Finds facts.")
    parent = parent_of(agent, ask("researcher", "x"), "done", store=LinksFail())
    result = await parent.run("go")
    outcome = only_result(result)
    assert result.stop_reason is StopReason.COMPLETED and outcome.is_error
    assert "researcher" in outcome.content and "disk full" in outcome.content


async def test_a_sub_run_without_an_answer_is_an_error_result() -> None:
    sub = researcher(
        reply("", call("t")), max_iterations=1, limits=Limits(on_cap=CapPolicy.STOP_NOW)
    )
    agent = sub.as_tool(name="researcher", description="Finds facts.")
    outcome = only_result(await parent_of(agent, ask("researcher", "x"), "done").run("go"))
    assert outcome.is_error and "ended without an answer (max_iterations" in outcome.content


@attrs.frozen
class City:
    name: str
    population: int


async def test_a_typed_output_comes_back_as_json() -> None:
    sub = researcher(call(FINAL_TOOL, name="Paris", population=2), output_type=City)
    agent = sub.as_tool(name="researcher", description="Finds a city.")
    result = await parent_of(agent, ask("researcher", "x"), "done").run("go")
    assert orjson.loads(only_result(result).content) == {"name": "Paris", "population": 2}
    assert result.sub_runs["c1"].output == City("Paris", 2)


async def test_the_answer_is_cut_at_the_parents_result_limit() -> None:
    agent = researcher("x" * 50).as_tool(name="researcher", description="Finds facts.")
    parent = parent_of(agent, ask("researcher", "q"), "done", limits=Limits(max_result_chars=10))
    assert only_result(await parent.run("go")).content.startswith("x" * 10 + "\n[truncated")


def nested_events(events: list[Event]) -> list[NestedEvent]:
    return [event for event in events if isinstance(event, NestedEvent)]


async def test_sub_run_events_reach_the_parents_stream_with_their_path() -> None:
    leaf = researcher("leaf answer").as_tool(name="leaf", description="Deepest.")
    middle = researcher(ask("leaf", "deeper", "c2"), "middle answer", tools=[leaf])
    agent = middle.as_tool(name="middle", description="In between.")
    events: list[Event] = []
    async with parent_of(agent, ask("middle", "go on", "c1"), "done").stream("go") as stream:
        async for event in stream:
            events.append(event)
    result = await stream.result()
    nested = nested_events(events)
    assert all(not isinstance(event.event, NestedEvent) for event in nested)
    middle_id = result.sub_runs["c1"].run_id
    leaf_id = result.sub_runs["c1"].sub_runs["c2"].run_id
    top = (AgentCall("middle", "c1", middle_id),)
    assert next(e.event for e in nested if e.path == top) == RunStarted(middle_id, "go on")
    deep = [e for e in nested if e.depth == 2]
    assert deep and all(e.path == (*top, AgentCall("leaf", "c2", leaf_id)) for e in deep)
    assert isinstance(deep[-1].event, RunFinished) and deep[-1].event.result.output == "leaf answer"


class Listening(Hook):
    """Records whether each run it sees has a stream listening."""

    def __init__(self) -> None:
        self.seen: list[bool] = []

    async def before_run(self, run: Run) -> None:
        self.seen.append(run.listening)


async def test_a_sub_run_builds_no_events_when_the_parent_is_not_streamed() -> None:
    hook = Listening()
    agent = researcher("fact", hooks=[hook]).as_tool(name="researcher", description="Facts.")
    await parent_of(agent, ask("researcher", "x"), "done").run("go")
    assert hook.seen == [False]


def gated_researcher(gate: FakeTool) -> ReActLoop[Any]:
    return researcher(call("gate"), "sub answer", tools=[gate])


async def test_interrupting_the_parent_interrupts_its_running_sub_run() -> None:
    gate = FakeTool("gate", gate=anyio.Event())
    sub = gated_researcher(gate)
    agent = sub.as_tool(name="researcher", description="Facts.")
    parent = parent_of(agent, ask("researcher", "x"), "parent answer")
    async with parent.start("go") as handle:
        await until(lambda: gate.running == 1)
        handle.interrupt("enough")
        assert gate.gate is not None
        gate.gate.set()
        result = await handle.result()
    assert result.stop_reason is StopReason.INTERRUPTED
    sub_result = result.sub_runs["c1"]
    assert sub_result.stop_reason is StopReason.INTERRUPTED
    assert isinstance(sub.config.model, ScriptedModel) and sub.config.model.remaining == 1
    assert only_result(result).is_error and "interrupted" in only_result(result).content


class InterruptFirst(Hook):
    async def before_tool_call(self, run: Run, call: ToolCall) -> None:
        run.request_interrupt()


async def test_a_sub_run_starting_after_the_parent_was_interrupted_stops_at_once() -> None:
    sub = researcher("never used")
    agent = sub.as_tool(name="researcher", description="Facts.")
    parent = parent_of(agent, ask("researcher", "x"), "unused", hooks=[InterruptFirst()])
    async with parent.start("go") as handle:
        pass
    result = await handle.result()
    assert result.sub_runs["c1"].stop_reason is StopReason.INTERRUPTED
    assert isinstance(sub.config.model, ScriptedModel) and sub.config.model.remaining == 1


async def test_cancelling_the_parent_cancels_the_sub_run() -> None:
    gate = FakeTool("gate", gate=anyio.Event())
    agent = gated_researcher(gate).as_tool(name="researcher", description="Facts.")
    parent = parent_of(agent, ask("researcher", "x"), "parent answer")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(parent.run, "go")
        await until(lambda: gate.running == 1)
        tasks.cancel_scope.cancel()
    assert gate.running == 0 and gate.calls == [{}]


def chain(depth: int, max_depth: int) -> ReActLoop[Any]:
    """A parent over `depth` nested agents, each calling the next, the last answering."""
    agent: AgentTool | None = None
    for level in range(depth, 0, -1):
        tools = [] if agent is None else [agent]
        script = ["answer"] if agent is None else [ask(agent.name, "x", f"c{level}"), "relayed"]
        agent = researcher(*script, tools=tools).as_tool(
            name=f"agent{level}", description="Next level.", max_depth=max_depth
        )
    assert agent is not None
    return parent_of(agent, ask(agent.name, "x", "c0"), "done")


async def test_nesting_within_the_depth_limit_runs() -> None:
    result = await chain(3, max_depth=3).run("go")
    assert only_result(result).content == "relayed" and not only_result(result).is_error


async def test_the_depth_limit_stops_runaway_nesting_with_an_error_result() -> None:
    result = await chain(3, max_depth=2).run("go")
    deepest = result.sub_runs["c0"].sub_runs["c1"]
    [refused] = [r for step in deepest.steps for r in step.tool_results]
    assert refused.is_error and refused.sub_run_id is None and refused.name == "agent3"
    assert "nested 3 runs deep, over its max_depth of 2" in refused.content


async def test_the_default_depth_limit_allows_three_levels() -> None:
    assert DEFAULT_MAX_DEPTH == 3
    assert not only_result(await chain(3, max_depth=DEFAULT_MAX_DEPTH).run("go")).is_error
    result = await chain(4, max_depth=DEFAULT_MAX_DEPTH).run("go")
    deepest = result.sub_runs["c0"].sub_runs["c1"].sub_runs["c2"]
    assert "nested 4 runs deep, over its max_depth of 3" in only_result(deepest).content


async def test_the_depth_error_is_typed() -> None:
    agent = researcher("x").as_tool(name="agent", description="d", max_depth=1)
    errors: list[ReactLoopError] = []

    class Errors(Hook):
        async def on_error(self, run: Run, error: ReactLoopError) -> None:
            errors.append(error)

    outer_with_hook = researcher(ask("agent", "x"), "done", tools=[agent], hooks=[Errors()])
    top = outer_with_hook.as_tool(name="outer", description="d", max_depth=1)
    await parent_of(top, ask("outer", "x"), "done").run("go")
    assert isinstance(errors[0], AgentDepthError)
    assert (errors[0].depth, errors[0].max_depth) == (2, 1)


async def test_the_sub_run_is_stored_in_the_parents_store_linked_to_its_call(
    any_store: Store,
) -> None:
    store = any_store
    agent = researcher("fact").as_tool(name="researcher", description="Facts.")
    result = await parent_of(agent, ask("researcher", "find", "c9"), "done", store=store).run("go")
    sub_id = only_result(result).sub_run_id
    assert sub_id is not None
    stored = await store.load(sub_id)
    assert stored.parent == SubRunLinked(result.run_id, "c9", "researcher")
    assert stored.messages[0] == UserMessage("find") and stored.output == "fact"
    parent_records = (await store.load(result.run_id)).records
    [saved] = [r for r in parent_records if isinstance(r, ResultSaved)]
    assert saved.result.sub_run_id == sub_id and saved.result.sub_run is None
    assert (await store.load(result.run_id)).parent is None


async def test_a_sub_loop_with_its_own_store_keeps_its_runs_there() -> None:
    own, parents = MemoryStore(), MemoryStore()
    agent = researcher("fact", store=own).as_tool(name="researcher", description="Facts.")
    result = await parent_of(agent, ask("researcher", "x"), "done", store=parents).run("go")
    sub_id = only_result(result).sub_run_id
    assert sub_id is not None and (await own.load(sub_id)).parent is not None
    assert [run.run_id for run in await parents.list_runs()] == [result.run_id]


async def test_a_resumed_parent_counts_the_sub_runs_usage_once() -> None:
    store = MemoryStore()
    pay = FakeTool("pay", result="paid", requires_approval=True)
    agent = researcher(reply("fact", usage=Usage(10, 0))).as_tool(
        name="researcher", description="d"
    )
    first = reply("", ask("researcher", "x", "c1"), ToolCall("pay", "{}", "c2"), usage=Usage(1, 0))
    parent = ReActLoop(ScriptedModel([first, "done"]), tools=[agent, pay], store=store)
    paused = await parent.run("go")
    assert paused.paused and paused.usage == Usage(11, 0)
    result = await parent.resume(paused.run_id, decisions={"c2": Approve()})
    assert result.output == "done" and result.usage == Usage(11, 0)
    assert (await store.load(result.run_id)).usage == Usage(11, 0)


async def test_the_tool_runs_on_its_own_outside_a_loop() -> None:
    agent = researcher("fact").as_tool(name="researcher", description="Facts.")
    outcome = await agent.invoke({"input": "x"}, RunContext(run_id="r", deps=None))
    assert isinstance(outcome, SubRunOutcome) and outcome.content == "fact"


async def test_the_parents_deps_reach_the_sub_runs_tools() -> None:
    seen: list[object] = []

    def answer(request: Any) -> Any:
        return "done" if any(isinstance(m, ToolMessage) for m in request.messages) else call("t")

    class Deps(Hook):
        async def before_run(self, run: Run) -> None:
            seen.append(run.context.deps)

    sub = ReActLoop(FunctionModel(answer), tools=[FakeTool("t")], hooks=[Deps()])
    agent = sub.as_tool(name="researcher", description="Facts.")
    await parent_of(agent, ask("researcher", "x"), "done").run("go", deps={"db": 1})
    assert seen == [{"db": 1}]


@pytest.mark.parametrize(
    "arguments",
    ["", "[]", "{}", '{"input": 3}', '{"input": "x", "other": 1}', "not json"],
)
def test_arguments_other_than_one_input_string_are_refused(arguments: str) -> None:
    agent = researcher().as_tool(name="researcher", description="Facts.")
    with pytest.raises(ToolArgumentsError, match="researcher"):
        agent.parse_arguments(arguments or "[]")


def test_the_input_is_parsed() -> None:
    agent = researcher().as_tool(name="researcher", description="Facts.")
    assert agent.parse_arguments('{"input": "find"}') == {"input": "find"}


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"name": "bad name", "description": "d"}, "as_tool.name"),
        ({"name": "ok", "description": ""}, "as_tool.description"),
        ({"name": "ok", "description": "d", "max_depth": 0}, "as_tool.max_depth"),
        ({"name": "ok", "description": "d", "timeout": -1}, "as_tool.timeout"),
    ],
)
def test_bad_options_are_configuration_errors_naming_them(
    options: dict[str, Any], option: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        researcher().as_tool(**options)
    assert caught.value.option == option


def test_an_unknown_option_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="max_dept"):
        researcher().as_tool(name="a", description="d", max_dept=2)  # type: ignore[call-arg]


async def test_a_cassette_keeps_the_call_result_without_the_sub_runs_result() -> None:
    agent = researcher("fact").as_tool(name="researcher", description="Facts.")
    outcome = only_result(await parent_of(agent, ask("researcher", "x"), "done").run("go"))
    cassette = Cassette("go", (), tool_results={outcome.call_id: outcome})
    [read] = Cassette.from_json(cassette.to_json()).tool_results.values()
    assert read == outcome and read.sub_run is None and read.sub_run_id == outcome.sub_run_id


async def test_a_sub_run_cut_off_mid_way_still_counts_its_usage() -> None:
    gate = FakeTool("gate", gate=anyio.Event())
    sub = researcher(reply("", call("gate"), usage=Usage(7, 3)), "unused", tools=[gate])
    agent = sub.as_tool(name="researcher", description="Facts.")
    parent = parent_of(agent, reply("", ask("researcher", "x"), usage=Usage(1, 1)), "unused")
    async with parent.stream("go") as events:
        await until(lambda: gate.running == 1)
    result = await events.result()
    assert result.stop_reason is StopReason.STREAM_CLOSED and result.usage == Usage(8, 4)


class InterruptAfterQuick(Hook):
    def __init__(self) -> None:
        self.asked = anyio.Event()

    async def after_tool_call(self, run: Run, call: ToolCall, result: ToolResult) -> None:
        if call.name == "quick":
            run.request_interrupt("from a hook")
            self.asked.set()


async def test_an_interrupt_requested_on_the_run_reaches_its_running_sub_run() -> None:
    gate, quick = FakeTool("gate", gate=anyio.Event()), FakeTool("quick", gate=anyio.Event())
    sub = gated_researcher(gate)
    agent = sub.as_tool(name="researcher", description="Facts.")
    step = reply("", ask("researcher", "x"), call("quick"))
    interrupting = InterruptAfterQuick()
    parent = ReActLoop(ScriptedModel([step, "unused"]), tools=[agent, quick], hooks=[interrupting])
    async with parent.start("go") as handle:
        await until(lambda: gate.running == 1)  # the sub-run's tool runs: now interrupt
        assert gate.gate is not None and quick.gate is not None
        quick.gate.set()  # `quick` returns, and its hook asks the run to stop
        await interrupting.asked.wait()
        gate.gate.set()
        result = await handle.result()
    assert result.stop_reason is StopReason.INTERRUPTED
    assert result.sub_runs[step.message.tool_calls[0].id].stop_reason is StopReason.INTERRUPTED

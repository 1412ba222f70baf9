"""Hook merging: priority order, chained overrides, stop over reject over override, failures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import pytest

from reactloop import (
    AssistantMessage,
    Event,
    Hook,
    Message,
    Override,
    ReActLoop,
    Reject,
    RunResult,
    StopReason,
    StopRun,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._core._decisions import NextIteration, Proceed, Stop
from reactloop._errors import (
    AuthenticationError,
    ContractError,
    ErrorCode,
    ReactLoopError,
    ToolExecutionError,
    ToolRefusedError,
)
from reactloop._policies._hooks import HookSet
from reactloop._resolver import DefaultErrorMessages
from reactloop.errors import HookError
from reactloop.events import HookFailed, RunFinished
from reactloop.hooks import HookFailure, HookPoint
from reactloop.models import ModelRequest, ModelResponse
from reactloop.phases import Run, ToolResult
from reactloop.testing import FakeTool, ScriptedModel, call, make_run, reply

pytestmark = pytest.mark.anyio


class Tag(Hook):
    def __init__(self, tag: str, log: list[str], priority: int = 0) -> None:
        self.tag, self.log = tag, log
        self.priority = priority  # type: ignore[misc]

    async def after_reasoning(self, run: Run, response: ModelResponse) -> Override[ModelResponse]:
        self.log.append(self.tag)
        return Override(reply(response.message.text + self.tag))


def hooks(*items: Hook) -> HookSet:
    return HookSet.of(items)


async def test_lower_priority_runs_first_and_overrides_chain() -> None:
    log: list[str] = []
    run = make_run()
    verdict = await hooks(Tag("b", log, 2), Tag("a", log, 1)).after_reasoning(run, reply("x"))
    assert log == ["a", "b"]
    assert verdict.value.message.text == "xab"


async def test_stop_wins_over_reject_and_override() -> None:
    class Stopper(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> StopRun:
            return StopRun("halt")

    class Rejecter(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Reject:
            return Reject("no")

    verdict = await hooks(Rejecter(), Stopper()).before_tool_call(make_run(), call("t"))
    assert verdict.stop == StopRun("halt")


async def test_none_changes_nothing() -> None:
    class Quiet(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> None:
            return None

    original = call("t")
    verdict = await hooks(Quiet()).before_tool_call(make_run(), original)
    assert (verdict.value, verdict.stop, verdict.reject) == (original, None, None)


class Broken(Hook):
    async def before_tool_call(self, run: Run, c: ToolCall) -> None:
        raise RuntimeError("policy service down")


class BrokenOpen(Broken):
    on_raise = HookFailure.FAIL_OPEN


async def test_failing_hook_fails_closed_by_default() -> None:
    verdict = await hooks(Broken()).before_tool_call(make_run(), call("t"))
    assert verdict.stop is not None
    assert isinstance(verdict.error, HookError) and "policy service down" in verdict.error.message


async def test_fail_open_hook_is_ignored_and_reported() -> None:
    events: list[Event] = []
    verdict = await hooks(BrokenOpen()).before_tool_call(make_run(events=events), call("t"))
    assert verdict.stop is None
    assert [type(e) for e in events] == [HookFailed]


async def test_fail_closed_hook_ends_the_run_with_a_hook_error() -> None:
    model = ScriptedModel([reply("", call("t"))])
    loop = ReActLoop(model, tools=[FakeTool("t")], hooks=[Broken()])
    result = await loop.run("go")
    assert result.stop_reason is StopReason.ERROR
    assert isinstance(result.error, HookError)


async def test_hook_returning_garbage_is_a_typed_error() -> None:
    class Garbage(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> str:  # type: ignore[override]
            return "yes"

    loop = ReActLoop(
        ScriptedModel([reply("", call("t"))]), tools=[FakeTool("t")], hooks=[Garbage()]
    )
    result = await loop.run("go")
    assert isinstance(result.error, HookError) and "got 'yes'" in result.error.message


def test_only_implemented_points_are_indexed() -> None:
    hook_set = hooks(Tag("a", []))
    assert len(hook_set.by_point[HookPoint.AFTER_REASONING]) == 1
    assert not hook_set.has(HookPoint.BEFORE_TOOL_CALL)


class Recorder(Hook):
    """Records the results its after-run point sees and the errors its on-error point sees."""

    def __init__(self) -> None:
        self.results: list[RunResult] = []
        self.errors: list[ReactLoopError] = []

    async def after_run(self, run: Run, result: RunResult) -> None:
        self.results.append(result)

    async def on_error(self, run: Run, error: ReactLoopError) -> None:
        self.errors.append(error)


async def test_run_returns_its_result_when_an_after_run_hook_is_registered() -> None:
    recorder = Recorder()
    result = await ReActLoop(ScriptedModel(["hi"]), hooks=[recorder]).run("go")
    assert (result.output, result.stop_reason) == ("hi", StopReason.COMPLETED)
    assert recorder.results == [result]


async def test_a_failing_fail_closed_after_run_hook_marks_the_result_failed() -> None:
    class Audit(Hook):
        async def after_run(self, run: Run, result: RunResult) -> None:
            raise RuntimeError("audit log down")

    result = await ReActLoop(ScriptedModel(["hi"]), hooks=[Audit()]).run("go")
    assert result.output == "hi" and isinstance(result.error, HookError)


async def test_an_after_run_hook_failure_keeps_the_runs_own_error() -> None:
    class Audit(Hook):
        async def after_run(self, run: Run, result: RunResult) -> None:
            raise RuntimeError("audit log down")

    model = ScriptedModel([AuthenticationError("bad key")])
    result = await ReActLoop(model, hooks=[Audit()]).run("go")
    assert isinstance(result.error, AuthenticationError)


async def test_a_fail_closed_hook_error_keeps_the_original_as_its_cause() -> None:
    verdict = await hooks(Broken()).before_tool_call(make_run(), call("t"))
    assert isinstance(verdict.error, HookError)
    assert isinstance(verdict.error.__cause__, RuntimeError)
    assert str(verdict.error.__cause__) == "policy service down"
    assert (verdict.error.hook, verdict.error.point) == ("Broken", "before_tool_call")


async def test_only_the_first_fail_closed_error_is_kept() -> None:
    class Second(Broken):
        priority = 1

    verdict = await hooks(Second(), Broken()).before_tool_call(make_run(), call("t"))
    assert verdict.error is not None and verdict.error.hook == "Broken"
    assert verdict.stop == StopRun(verdict.error.message)


async def test_fail_closed_failure_stops_even_when_a_later_hook_continues() -> None:
    class Later(Hook):
        priority = 1

        async def before_tool_call(self, run: Run, c: ToolCall) -> None:
            return None

    verdict = await hooks(Broken(), Later()).before_tool_call(make_run(), call("t"))
    assert verdict.stop is not None and verdict.error is not None


async def test_the_first_stop_and_the_first_reject_win() -> None:
    class Stop1(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> StopRun:
            return StopRun("first")

    class Stop2(Hook):
        priority = 1

        async def before_tool_call(self, run: Run, c: ToolCall) -> StopRun:
            return StopRun("second")

    class Reject1(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Reject:
            return Reject("first")

    class Reject2(Hook):
        priority = 1

        async def before_tool_call(self, run: Run, c: ToolCall) -> Reject:
            return Reject("second")

    verdict = await hooks(Stop2(), Stop1()).before_tool_call(make_run(), call("t"))
    assert verdict.stop == StopRun("first")
    verdict = await hooks(Reject2(), Reject1()).before_tool_call(make_run(), call("t"))
    assert verdict.reject == Reject("first") and verdict.stop is None


async def test_on_error_hooks_hear_a_failed_run() -> None:
    recorder = Recorder()
    model = ScriptedModel([AuthenticationError("bad key")])
    result = await ReActLoop(model, hooks=[recorder]).run("go")
    assert recorder.errors == [result.error]


async def test_on_error_hooks_hear_a_tool_that_raised() -> None:
    recorder = Recorder()
    model = ScriptedModel([call("t"), "done"])
    tools = [FakeTool("t", raises=ValueError("no such city"))]
    await ReActLoop(model, tools=tools, hooks=[recorder]).run("go")
    [error] = recorder.errors
    assert isinstance(error, ToolExecutionError) and "no such city" in error.message


async def test_a_failing_on_error_hook_is_reported_and_the_others_still_run() -> None:
    class Flaky(Hook):
        async def on_error(self, run: Run, error: ReactLoopError) -> None:
            raise RuntimeError("pager down")

    recorder = Recorder()
    events: list[Event] = []
    run = make_run(hooks=[Flaky(), recorder], events=events)
    error = ToolRefusedError("t", "because")
    await run.config.hooks.on_error(run, error)
    assert recorder.errors == [error]
    [failed] = [e for e in events if isinstance(e, HookFailed)]
    assert (failed.hook, failed.point) == ("Flaky", "on_error")


async def test_hooks_of_each_point_see_their_own_arguments() -> None:
    seen: list[tuple[str, object]] = []

    class Watch(Hook):
        async def before_run(self, run: Run) -> None:
            seen.append(("before_run", run.state.messages[-1]))

        async def before_reasoning(self, run: Run, request: ModelRequest) -> None:
            seen.append(("before_reasoning", type(request.messages[-1]).__name__))

        async def before_tool_call(self, run: Run, c: ToolCall) -> None:
            seen.append(("before_tool_call", c.name))

        async def after_tool_call(self, run: Run, c: ToolCall, result: ToolResult) -> None:
            seen.append(("after_tool_call", (c.name, result.content)))

    model = ScriptedModel([call("t"), "done"])
    await ReActLoop(model, tools=[FakeTool("t", result="R")], hooks=[Watch()]).run("go")
    assert seen == [
        ("before_run", UserMessage("go")),
        ("before_reasoning", "UserMessage"),
        ("before_tool_call", "t"),
        ("after_tool_call", ("t", "R")),
        ("before_reasoning", "ToolMessage"),
    ]


# --- the contract of each hook point --------------------------------------------------------

POINTS = [p for p in HookPoint if p is not HookPoint.ON_ERROR]


class Returns(Hook):
    """Returns `decision` at `point` and None everywhere else."""

    def __init__(self, point: HookPoint, decision: object, fail_open: bool = False) -> None:
        self.point, self.decision = point, decision
        if fail_open:
            self.on_raise = HookFailure.FAIL_OPEN  # type: ignore[misc]

    def _at(self, point: HookPoint) -> Any:
        return self.decision if point is self.point else None

    async def before_run(self, run: Run) -> Any:
        return self._at(HookPoint.BEFORE_RUN)

    async def after_run(self, run: Run, result: RunResult) -> Any:
        return self._at(HookPoint.AFTER_RUN)

    async def before_reasoning(self, run: Run, request: ModelRequest) -> Any:
        return self._at(HookPoint.BEFORE_REASONING)

    async def after_reasoning(self, run: Run, response: ModelResponse) -> Any:
        return self._at(HookPoint.AFTER_REASONING)

    async def before_tool_call(self, run: Run, c: ToolCall) -> Any:
        return self._at(HookPoint.BEFORE_TOOL_CALL)

    async def after_tool_call(self, run: Run, c: ToolCall, r: ToolResult) -> Any:
        return self._at(HookPoint.AFTER_TOOL_CALL)


ALLOWED: dict[HookPoint, set[type]] = {
    HookPoint.BEFORE_RUN: {StopRun},
    HookPoint.AFTER_RUN: set(),
    HookPoint.BEFORE_REASONING: {Override, StopRun},
    HookPoint.AFTER_REASONING: {Override, StopRun},
    HookPoint.BEFORE_TOOL_CALL: {Override, Reject, StopRun},
    HookPoint.AFTER_TOOL_CALL: {Override, StopRun},
}
KINDS: list[object] = [
    Override(None),
    Reject("no"),
    StopRun("halt"),
    "yes",
    42,
    ToolCall("t", id="call_t"),
    True,
]
FORBIDDEN = [
    pytest.param(point, kind, id=f"{point.value}-{kind!r}")
    for point in POINTS
    for kind in KINDS
    if type(kind) not in ALLOWED[point]
]


def two_step_loop(*hooks: Hook) -> ReActLoop:
    """A run that passes every hook point: one tool call, then an answer."""
    model = ScriptedModel([reply("", call("t", q=1)), "done"])
    return ReActLoop(model, tools=[FakeTool("t")], hooks=hooks)


@pytest.mark.parametrize(("point", "decision"), FORBIDDEN)
async def test_a_decision_the_point_does_not_allow_ends_the_run(
    point: HookPoint, decision: object
) -> None:
    result = await two_step_loop(Returns(point, decision)).run("go")
    assert result.stop_reason is StopReason.ERROR
    error = result.error
    assert isinstance(error, HookError) and isinstance(error, ContractError)
    assert (error.hook, error.point, error.value) == ("Returns", point.value, decision)
    assert f"hook Returns at {point.value}" in error.message and repr(decision) in error.message


@pytest.mark.parametrize(("point", "decision"), FORBIDDEN[:6])
async def test_a_fail_open_hook_breaking_its_contract_is_reported_and_ignored(
    point: HookPoint, decision: object
) -> None:
    events: list[Event] = []
    async with two_step_loop(Returns(point, decision, fail_open=True)).stream("go") as stream:
        events = [event async for event in stream]
    failed = [e for e in events if isinstance(e, HookFailed)]
    assert [(f.point, type(f.error)) for f in failed] == [(point.value, HookError)]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.result.output == "done"


PHASE_DECISIONS = [
    pytest.param(
        Stop(StopReason.COMPLETED),
        "Stop is a phase's decision; a hook stops the run with StopRun",
        id="Stop",
    ),
    pytest.param(Proceed(), "return None to let the run go on", id="Proceed"),
    pytest.param(NextIteration(), "return None to let the run go on", id="NextIteration"),
]


@pytest.mark.parametrize(("decision", "hint"), PHASE_DECISIONS)
async def test_a_phase_decision_from_a_hook_names_the_hook_decision(
    decision: object, hint: str
) -> None:
    result = await two_step_loop(Returns(HookPoint.BEFORE_TOOL_CALL, decision)).run("go")
    assert isinstance(result.error, HookError) and result.error.rule.endswith(f" ({hint})")


WRONG_OVERRIDES = [
    pytest.param(HookPoint.BEFORE_REASONING, reply("x"), "holds a ModelRequest", id="request"),
    pytest.param(HookPoint.AFTER_REASONING, ModelRequest(()), "holds a ModelResponse", id="resp"),
    pytest.param(HookPoint.BEFORE_TOOL_CALL, "t", "holds a ToolCall", id="call"),
    pytest.param(HookPoint.AFTER_TOOL_CALL, call("t"), "holds a ToolResult", id="result"),
]


@pytest.mark.parametrize(("point", "value", "rule"), WRONG_OVERRIDES)
async def test_an_override_of_the_wrong_type_ends_the_run(
    point: HookPoint, value: object, rule: str
) -> None:
    result = await two_step_loop(Returns(point, Override(value))).run("go")
    assert result.stop_reason is StopReason.ERROR
    assert isinstance(result.error, HookError) and rule in result.error.message


async def test_an_after_run_contract_break_marks_a_completed_run_failed() -> None:
    result = await two_step_loop(Returns(HookPoint.AFTER_RUN, StopRun("late"))).run("go")
    assert (result.stop_reason, result.output) == (StopReason.ERROR, "done")
    assert isinstance(result.error, HookError) and result.user_message is not None


async def test_an_after_tool_call_stop_stops_the_run() -> None:
    result = await two_step_loop(Returns(HookPoint.AFTER_TOOL_CALL, StopRun("enough"))).run("go")
    assert (result.stop_reason, result.stop_detail) == (StopReason.HOOK_STOPPED, "enough")
    assert len(result.steps) == 1


async def test_a_raising_after_tool_call_hook_fails_closed() -> None:
    class Raises(Hook):
        async def after_tool_call(self, run: Run, c: ToolCall, r: ToolResult) -> None:
            raise RuntimeError("audit log down")

    result = await two_step_loop(Raises()).run("go")
    assert result.stop_reason is StopReason.ERROR
    assert isinstance(result.error, HookError) and "audit log down" in result.error.message
    assert isinstance(result.error.__cause__, RuntimeError)


# --- an override keeps the tool pair --------------------------------------------------------


def pairs_of(messages: Sequence[Message]) -> tuple[list[str], list[str]]:
    """The call ids the assistant messages ask for, and the call ids the results answer."""
    asked = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answered = [m.call_id for m in messages if isinstance(m, ToolMessage)]
    return asked, answered


async def test_an_override_with_arguments_keeps_the_pair_in_the_next_request() -> None:
    class Clamp(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Override[ToolCall]:
            return Override(c.with_arguments({"limit": 5}))

    fake = FakeTool("t")
    model = ScriptedModel([reply("", call("t", limit=999)), "done"])
    result = await ReActLoop(model, tools=[fake], hooks=[Clamp()]).run("go")
    assert fake.calls == [{"limit": 5}] and result.output == "done"
    asked, answered = pairs_of(model.requests[1].messages)
    assert asked == answered and len(asked) == 1


class NewIdentity(Hook):
    def __init__(self, field: str) -> None:
        self.field = field

    async def before_tool_call(self, run: Run, c: ToolCall) -> Override[ToolCall]:
        if self.field == "id":
            return Override(ToolCall.of(c.name, {"limit": 5}))
        return Override(ToolCall.of("other", {"limit": 5}, id=c.id))


@pytest.mark.parametrize("field", ["id", "name"])
async def test_an_override_changing_the_calls_identity_is_rejected(field: str) -> None:
    fake = FakeTool("t")
    model = ScriptedModel([reply("", call("t", limit=999)), "done"])
    hooks = [NewIdentity(field)]
    result = await ReActLoop(model, tools=[fake, FakeTool("other")], hooks=hooks).run("go")
    assert result.stop_reason is StopReason.ERROR and fake.calls == []
    error = result.error
    assert isinstance(error, HookError) and error.hook == "NewIdentity"
    assert error.rule == "an override may change a call's arguments, never its id or name"
    assert f"{field} changed from" in error.message and error.rule in error.message
    asked, answered = pairs_of(result.messages)
    assert asked == answered


@pytest.mark.parametrize("field", ["call_id", "name"])
async def test_an_override_changing_the_results_identity_is_rejected(field: str) -> None:
    class Renumber(Hook):
        async def after_tool_call(
            self, run: Run, c: ToolCall, r: ToolResult
        ) -> Override[ToolResult]:
            if field == "call_id":
                return Override(attrs.evolve(r, call_id="changed", content="x"))
            return Override(attrs.evolve(r, name="changed", content="x"))

    result = await two_step_loop(Renumber()).run("go")
    assert result.stop_reason is StopReason.ERROR
    error = result.error
    assert isinstance(error, HookError)
    assert error.rule == "an override may change a result's content, never its call_id or name"
    assert f"{field} changed from" in error.message and "'changed'" in error.message
    asked, answered = pairs_of(result.messages)
    assert asked == answered


# --- what each point is given and what a failure reports -----------------------------------


class Raises(Hook):
    """Raises `error` at `point` (fail-open unless told otherwise), and does nothing elsewhere."""

    def __init__(self, point: HookPoint, error: Exception, fail_open: bool = True) -> None:
        self.point, self.error = point, error
        if fail_open:
            self.on_raise = HookFailure.FAIL_OPEN  # type: ignore[misc]

    def _at(self, point: HookPoint) -> None:
        if point is self.point:
            raise self.error

    async def before_run(self, run: Run) -> None:
        self._at(HookPoint.BEFORE_RUN)

    async def after_run(self, run: Run, result: RunResult) -> None:
        self._at(HookPoint.AFTER_RUN)

    async def before_reasoning(self, run: Run, request: ModelRequest) -> None:
        self._at(HookPoint.BEFORE_REASONING)

    async def after_reasoning(self, run: Run, response: ModelResponse) -> None:
        self._at(HookPoint.AFTER_REASONING)

    async def before_tool_call(self, run: Run, c: ToolCall) -> None:
        self._at(HookPoint.BEFORE_TOOL_CALL)

    async def after_tool_call(self, run: Run, c: ToolCall, r: ToolResult) -> None:
        self._at(HookPoint.AFTER_TOOL_CALL)


@pytest.mark.parametrize("point", POINTS, ids=lambda p: p.value)
async def test_a_fail_open_hook_that_raises_at_any_point_is_reported_as_itself(
    point: HookPoint,
) -> None:
    boom = RuntimeError("audit log down")
    async with two_step_loop(Raises(point, boom)).stream("go") as stream:
        events = [event async for event in stream]
    failed = [e for e in events if isinstance(e, HookFailed)]
    assert failed and {(f.hook, f.point, f.error) for f in failed} == {
        ("Raises", point.value, boom)
    }
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.result.output == "done"


async def test_a_fail_open_failure_does_not_skip_the_hooks_after_it() -> None:
    class Halt(Hook):
        priority = 1

        async def before_tool_call(self, run: Run, c: ToolCall) -> StopRun:
            return StopRun("halt")

    run = make_run()
    failing = Raises(HookPoint.BEFORE_TOOL_CALL, RuntimeError("x"))
    verdict = await hooks(failing, Halt()).before_tool_call(run, call("t"))
    assert verdict.stop == StopRun("halt") and verdict.error is None


async def test_every_point_is_given_the_run_itself() -> None:
    seen: list[tuple[str, object]] = []

    class Watch(Hook):
        async def before_run(self, run: Run) -> None:
            seen.append(("before_run", run))

        async def after_run(self, run: Run, result: RunResult) -> None:
            seen.append(("after_run", run))

        async def before_reasoning(self, run: Run, request: ModelRequest) -> None:
            seen.append(("before_reasoning", run))

        async def after_reasoning(self, run: Run, response: ModelResponse) -> None:
            seen.append(("after_reasoning", run))

        async def before_tool_call(self, run: Run, c: ToolCall) -> None:
            seen.append(("before_tool_call", run))

        async def after_tool_call(self, run: Run, c: ToolCall, r: ToolResult) -> None:
            seen.append(("after_tool_call", run))

        async def on_error(self, run: Run, error: ReactLoopError) -> None:
            seen.append(("on_error", run))

    model = ScriptedModel([reply("", call("t", q=1)), "done"])
    tools = [FakeTool("t", raises=ValueError("x"))]
    await ReActLoop(model, tools=tools, hooks=[Watch()]).run("go")
    assert {point for point, _ in seen} == {p.value for p in HookPoint}
    runs = {id(run) for _, run in seen}
    assert len(runs) == 1 and all(isinstance(run, Run) for _, run in seen)


async def test_a_failing_on_error_hook_reports_its_own_exception() -> None:
    boom = RuntimeError("pager down")

    class Flaky(Hook):
        async def on_error(self, run: Run, error: ReactLoopError) -> None:
            raise boom

    events: list[Event] = []
    run = make_run(hooks=[Flaky()], events=events)
    await run.config.hooks.on_error(run, ToolRefusedError("t", "because"))
    assert [e.error for e in events if isinstance(e, HookFailed)] == [boom]


RULES = {
    HookPoint.BEFORE_RUN: "a before_run hook returns one of None, StopRun",
    HookPoint.AFTER_RUN: "a after_run hook returns one of None",
    HookPoint.BEFORE_REASONING: "a before_reasoning hook returns one of None, Override, StopRun",
    HookPoint.BEFORE_TOOL_CALL: "a before_tool_call hook returns one of None, Override, Reject, "
    "StopRun",
}


@pytest.mark.parametrize("point", list(RULES), ids=lambda p: p.value)
async def test_a_decision_the_point_does_not_allow_names_what_it_allows(point: HookPoint) -> None:
    result = await two_step_loop(Returns(point, "yes")).run("go")
    error = result.error
    assert isinstance(error, HookError) and error.rule == RULES[point]
    assert error.rule in error.message


async def test_an_override_of_the_wrong_type_names_the_hook_point_and_value() -> None:
    result = await two_step_loop(Returns(HookPoint.BEFORE_TOOL_CALL, Override("t"))).run("go")
    error = result.error
    assert isinstance(error, HookError)
    assert (error.hook, error.point, error.value) == ("Returns", "before_tool_call", "t")


async def test_an_override_changing_the_calls_id_names_the_point_and_the_new_call() -> None:
    replaced = ToolCall.of("t", {"limit": 5})

    class Renumber(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Override[ToolCall]:
            return Override(replaced)

    result = await two_step_loop(Renumber()).run("go")
    error = result.error
    assert isinstance(error, HookError)
    assert (error.point, error.value) == ("before_tool_call", replaced)


async def test_a_failing_after_run_hook_states_its_error_in_the_result() -> None:
    result = await two_step_loop(Raises(HookPoint.AFTER_RUN, RuntimeError("x"), False)).run("go")
    assert result.error is not None and result.stop_detail == result.error.message


async def test_a_failing_after_run_hook_speaks_with_the_loops_own_error_messages() -> None:
    messages = DefaultErrorMessages({ErrorCode.HOOK_REJECTED: "Audit is down, try later."})
    model = ScriptedModel(["done"])
    hook = Raises(HookPoint.AFTER_RUN, RuntimeError("x"), fail_open=False)
    result = await ReActLoop(model, hooks=[hook], error_messages=messages).run("go")
    assert result.user_message == "Audit is down, try later."

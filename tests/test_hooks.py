"""Hook merging: priority order, chained overrides, stop over reject over override, failures."""

from __future__ import annotations

import pytest

from reactloop import (
    Continue,
    Event,
    Hook,
    HookError,
    HookFailed,
    HookFailure,
    HookPoint,
    ModelRequest,
    ModelResponse,
    Override,
    ReActLoop,
    Reject,
    Run,
    RunResult,
    StopReason,
    StopRun,
    ToolCall,
    ToolResult,
    UserMessage,
)
from reactloop._errors import (
    AuthenticationError,
    ReactLoopError,
    ToolExecutionError,
    ToolRefusedError,
)
from reactloop._hooks import HookSet
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


async def test_continue_and_none_change_nothing() -> None:
    class Quiet(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Continue:
            return Continue()

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
    assert isinstance(result.error, HookError) and "returned 'yes'" in result.error.message


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

        async def before_tool_call(self, run: Run, c: ToolCall) -> Continue:
            return Continue()

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

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
    ModelResponse,
    Override,
    ReActLoop,
    Reject,
    Run,
    StopReason,
    StopRun,
    ToolCall,
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
    assert isinstance(result.error, HookError) and "got 'yes'" in result.error.message


def test_only_implemented_points_are_indexed() -> None:
    hook_set = hooks(Tag("a", []))
    assert len(hook_set.by_point[HookPoint.AFTER_REASONING]) == 1
    assert not hook_set.has(HookPoint.BEFORE_TOOL_CALL)

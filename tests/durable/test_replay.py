"""A run rebuilt from its journal is the run as it ended: messages, steps, usage and repairs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from reactloop import Limits
from reactloop._core._contracts import Hook, RunStore
from reactloop._core._decisions import Reject, StopRun
from reactloop._core._messages import Message, ToolCall, Usage, blank_reason
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._phases import default_start_phases
from reactloop.examples.planning import PlanningPhase
from reactloop.testing import FakeTool, ScriptedModel, reply
from tests.helpers.strategies import AgentScript, agent_scripts, damaged_histories

pytestmark = pytest.mark.anyio


class Gatekeeper(Hook):
    """Rejects calls of `guarded`; stops the run at a call of `halt`."""

    async def before_tool_call(self, run: Run, call: ToolCall) -> Reject | StopRun | None:
        if call.name == "guarded":
            return Reject("not allowed")
        return StopRun("halt requested") if call.name == "halt" else None


CALLS = {
    "ok": ToolCall("ok"),
    "raises": ToolCall("boom"),
    "unknown": ToolCall("nope"),
    "bad_arguments": ToolCall("ok", "[1]"),
    "rejected": ToolCall("guarded"),
    "stops_run": ToolCall("halt"),
}


def loop_for(script: AgentScript, store: RunStore) -> ReActLoop:
    usages = iter(Usage(i, o) for i, o in script.usages)
    replies = [reply("plan", usage=next(usages))] if script.plans else []
    for step in script.steps:
        calls = [ToolCall(CALLS[kind].name, CALLS[kind].arguments) for kind in step]
        replies.append(reply("", *calls, usage=next(usages)))
    replies.append(reply("done", usage=next(usages)))
    tools = [FakeTool("ok"), FakeTool("boom", raises=RuntimeError("down"))]
    tools += [FakeTool("guarded"), FakeTool("halt")]
    options: dict[str, Any] = {
        "hooks": [Gatekeeper()],
        "limits": Limits(max_tool_calls=script.max_tool_calls),
    }
    if script.plans:
        options["start_phases"] = [*default_start_phases(), PlanningPhase()]
    return ReActLoop(ScriptedModel(replies), tools=tools, store=store, **options)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(script=agent_scripts(), history=damaged_histories())
async def test_the_stored_run_is_the_run_as_it_ended(
    any_store: RunStore, script: AgentScript, history: list[Message]
) -> None:
    given = [message for message in history if blank_reason(message) is None]
    result = await loop_for(script, any_store).run("go", history=given)
    stored = await any_store.load(result.run_id)
    assert stored.messages == result.messages
    assert stored.steps == result.steps
    assert stored.usage == result.usage
    assert stored.output == result.output and stored.stop_reason is result.stop_reason
    assert stored.created.repairs == result.repairs
    again = await ReActLoop(ScriptedModel([]), store=any_store).resume(result.run_id)
    if again.stop_reason is result.stop_reason and result.error is None:
        assert again.messages == result.messages and again.steps == result.steps
        assert again.setup_usage == result.setup_usage
        assert again.tools_used == result.tools_used

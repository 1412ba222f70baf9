"""Events of streamed runs add up: tool events pair by call id, step usage adds up to the total."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings

from reactloop import (
    Event,
    Hook,
    Limits,
    ReActLoop,
    Reject,
    RunResult,
    StopReason,
    StopRun,
    ToolCall,
    ToolMessage,
    Usage,
)
from reactloop.events import RunFinished, StepFinished, ToolCallFinished, ToolCallStarted
from reactloop.examples.planning import PlanningPhase
from reactloop.phases import Run, default_start_phases
from reactloop.testing import FakeTool, ScriptedModel, reply
from tests.helpers.strategies import AgentScript, agent_scripts, examples

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


def loop_for(script: AgentScript) -> ReActLoop:
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
    return ReActLoop(ScriptedModel(replies), tools=tools, **options)


async def streamed(loop: ReActLoop) -> tuple[list[Event], RunResult]:
    async with loop.stream("go") as stream:
        events = [event async for event in stream]
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    return events, finished.result


def assert_tool_events_pair(events: list[Event]) -> None:
    """Each result event follows exactly one started event of its call id, and vice versa."""
    started: Counter[str] = Counter()
    finished: Counter[str] = Counter()
    for event in events:
        if isinstance(event, ToolCallStarted):
            assert started[event.call.id] == 0, f"started twice: {event.call.id}"
            started[event.call.id] += 1
        elif isinstance(event, ToolCallFinished):
            call_id = event.result.call_id
            assert started[call_id] == 1, f"result without started event: {call_id}"
            assert finished[call_id] == 0, f"two results: {call_id}"
            finished[call_id] += 1
    assert started == finished


def assert_usage_adds_up(events: list[Event], result: RunResult) -> None:
    """Steps plus the out-of-step usage are the total, in the result and in the events."""
    in_steps = sum((step.usage for step in result.steps), Usage())
    assert in_steps + result.setup_usage == result.usage
    reported = sum((e.usage for e in events if isinstance(e, StepFinished)), Usage())
    assert reported == in_steps


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=agent_scripts())
async def test_streamed_runs_pair_tool_events_and_add_up_usage(script: AgentScript) -> None:
    events, result = await streamed(loop_for(script))
    assert_tool_events_pair(events)
    assert_usage_adds_up(events, result)


async def test_every_scripted_kind_of_call_pairs_its_events() -> None:
    kinds = ("ok", "raises", "unknown", "bad_arguments", "rejected", "stops_run")
    script = AgentScript((kinds,), ((1, 1), (1, 1)), max_tool_calls=None, plans=False)
    events, _ = await streamed(loop_for(script))
    started = [e.call.id for e in events if isinstance(e, ToolCallStarted)]
    assert len(started) == len(kinds)
    assert_tool_events_pair(events)


async def test_a_call_cut_short_by_the_run_timeout_gets_its_result_event() -> None:
    blocker = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([reply("", ToolCall("ok"), ToolCall("block"))])
    loop = ReActLoop(model, tools=[FakeTool("ok"), blocker], limits=Limits(run_timeout=0.05))
    events, result = await streamed(loop)
    assert result.stop_reason is StopReason.RUN_TIMEOUT
    assert_tool_events_pair(events)
    (cut,) = [e.result for e in events if isinstance(e, ToolCallFinished) and e.result.is_error]
    assert cut.name == "block" and "cut short: the run stopped (run_timeout" in cut.content


async def test_an_awaited_run_also_says_which_call_was_cut_short() -> None:
    blocker = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([reply("", ToolCall("block"))])
    result = await ReActLoop(model, tools=[blocker], limits=Limits(run_timeout=0.05)).run("go")
    assert result.stop_reason is StopReason.RUN_TIMEOUT
    last = result.messages[-1]
    assert isinstance(last, ToolMessage) and last.text.startswith("cut short: the run stopped")

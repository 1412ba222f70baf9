"""Stop conditions: when each one fires, at which point, whether it is a cap, its limits, and
options that state the intent plainly taken as meant."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from reactloop import (
    CapPolicy,
    ConfigurationError,
    FinalAnswerMarker,
    Limits,
    MaxIterations,
    MaxToolCalls,
    ReActLoop,
    StopReason,
    StopWhen,
    TimeBudget,
    TokenBudget,
    ToolCalled,
    Usage,
)
from reactloop._core._contracts import StopCondition
from reactloop._core._state import Step
from reactloop.phases import Run, ToolResult
from reactloop.stopping import CheckPoint, StopSignal
from reactloop.testing import FakeClock, FakeTool, ScriptedModel, call, make_run, reply

AFTER_TOOLS = CheckPoint.AFTER_TOOLS
BEFORE = CheckPoint.BEFORE_REASONING
AFTER_REASONING = CheckPoint.AFTER_REASONING
EVERY_POINT = list(CheckPoint)


def with_results(*results: ToolResult) -> Run:
    run = make_run()
    assert run.state.current is not None
    run.state.current.tool_results.extend(results)
    return run


def ok(name: str, content: str = "done") -> ToolResult:
    return ToolResult(f"id-{name}", name, content)


def failed(name: str) -> ToolResult:
    return ToolResult(f"id-{name}", name, "boom", is_error=True)


def at_iteration(iteration: int, **options: Any) -> Run:
    run = make_run(**options)
    run.state.iteration = iteration
    return run


# --- ToolCalled ----------------------------------------------------------------------------------


def test_tool_called_fires_for_the_named_tool_with_its_result_as_output() -> None:
    signal = ToolCalled({"answer"}).check(
        with_results(ok("search"), ok("answer", "42")), AFTER_TOOLS
    )
    assert signal == StopSignal(StopReason.TOOL_CALLED, "tool 'answer' was called", output="42")


def test_tool_called_ignores_other_tools() -> None:
    assert ToolCalled({"answer"}).check(with_results(ok("search")), AFTER_TOOLS) is None


def test_tool_called_ignores_a_failed_call_of_the_named_tool() -> None:
    assert ToolCalled({"answer"}).check(with_results(failed("answer")), AFTER_TOOLS) is None


@pytest.mark.parametrize("at", [BEFORE, AFTER_REASONING])
def test_tool_called_fires_only_after_tools(at: CheckPoint) -> None:
    assert ToolCalled({"answer"}).check(with_results(ok("answer")), at) is None


def test_tool_called_without_an_open_step_does_not_fire() -> None:
    run = make_run(open_step=False)
    assert ToolCalled({"answer"}).check(run, AFTER_TOOLS) is None


def test_tool_called_watches_every_name_given() -> None:
    condition = ToolCalled(["answer", "give_up"])
    signal = condition.check(with_results(ok("give_up", "sorry")), AFTER_TOOLS)
    assert signal is not None and signal.output == "sorry"


@pytest.mark.anyio
async def test_tool_called_ends_the_run_only_after_the_named_tool() -> None:
    model = ScriptedModel([call("search"), call("answer"), "never asked"])
    tools = [FakeTool("search"), FakeTool("answer", result="Paris")]
    loop = ReActLoop(model, tools=tools, stop_when=ToolCalled({"answer"}))
    result = await loop.run("capital of France?")
    assert (result.stop_reason, result.output) == (StopReason.TOOL_CALLED, "Paris")
    assert result.tools_used == ("search", "answer") and model.remaining == 1


# --- TokenBudget ---------------------------------------------------------------------------------


def spent(tokens: int, limit: int) -> Run:
    run = make_run(stop_when=TokenBudget(limit))
    run.state.usage = Usage(tokens, 0)
    return run


def test_token_budget_under_its_limit_does_not_fire() -> None:
    assert TokenBudget(100).check(spent(99, 100), BEFORE) is None


def test_token_budget_fires_once_the_limit_is_reached_as_a_cap() -> None:
    signal = TokenBudget(100).check(spent(100, 100), BEFORE)
    assert signal == StopSignal(StopReason.TOKEN_BUDGET, "token_budget=100 (used 100)", cap=True)


@pytest.mark.parametrize("at", [AFTER_REASONING, AFTER_TOOLS])
def test_token_budget_is_checked_only_before_reasoning(at: CheckPoint) -> None:
    assert TokenBudget(100).check(spent(500, 100), at) is None


@pytest.mark.anyio
async def test_a_run_under_its_token_budget_is_not_ended_by_it() -> None:
    model = ScriptedModel([reply("", call("t"), usage=Usage(10, 10)), "done"])
    loop = ReActLoop(model, tools=[FakeTool("t")], stop_when=TokenBudget(1000))
    result = await loop.run("go")
    assert (result.stop_reason, result.output) == (StopReason.COMPLETED, "done")


@pytest.mark.anyio
async def test_a_spent_token_budget_makes_one_final_call_without_tools() -> None:
    model = ScriptedModel([reply("", call("t"), usage=Usage(60, 60)), "summary"])
    loop = ReActLoop(model, tools=[FakeTool("t")], stop_when=TokenBudget(100))
    result = await loop.run("go")
    assert (result.stop_reason, result.output) == (StopReason.TOKEN_BUDGET, "summary")
    assert model.requests[-1].tools == ()


# --- TimeBudget ----------------------------------------------------------------------------------


def elapsed(seconds: float) -> Run:
    clock = FakeClock()
    run = make_run(clock=clock)
    clock.advance(seconds)
    return run


def test_time_budget_before_its_end_does_not_fire() -> None:
    assert TimeBudget(5).check(elapsed(4.9), BEFORE) is None


def test_time_budget_fires_at_its_end_as_a_cap() -> None:
    signal = TimeBudget(5).check(elapsed(5), BEFORE)
    assert signal == StopSignal(StopReason.TIME_BUDGET, "time_budget=5s (elapsed 5.000s)", cap=True)


@pytest.mark.parametrize("at", [AFTER_REASONING, AFTER_TOOLS])
def test_time_budget_is_checked_only_before_reasoning(at: CheckPoint) -> None:
    assert TimeBudget(5).check(elapsed(60), at) is None


def test_time_budget_counts_from_the_runs_start() -> None:
    clock = FakeClock(now=100.0)
    run = make_run(clock=clock)
    run.state.started_at = 100.0
    clock.advance(1)
    assert TimeBudget(5).check(run, BEFORE) is None


# --- StopWhen ------------------------------------------------------------------------------------


def test_stop_when_is_a_cap_by_default() -> None:
    signal = StopWhen(lambda steps: True).check(make_run(), BEFORE)
    assert signal == StopSignal(StopReason.CONDITION, "predicate", cap=True)


def test_stop_when_can_stop_without_a_last_call() -> None:
    signal = StopWhen(lambda steps: True, name="enough", cap=False).check(make_run(), BEFORE)
    assert signal == StopSignal(StopReason.CONDITION, "enough", cap=False)


def test_stop_when_does_not_fire_while_the_predicate_is_false() -> None:
    assert StopWhen(lambda steps: False).check(make_run(), BEFORE) is None


@pytest.mark.parametrize("at", [AFTER_REASONING, AFTER_TOOLS])
def test_stop_when_is_checked_only_before_reasoning(at: CheckPoint) -> None:
    assert StopWhen(lambda steps: True).check(make_run(), at) is None


@pytest.mark.anyio
async def test_stop_when_by_default_gets_a_final_answer_before_stopping() -> None:
    model = ScriptedModel([call("t"), "final words"])
    condition = StopWhen(lambda steps: len(steps) >= 1, name="one step")
    loop = ReActLoop(model, tools=[FakeTool("t")], stop_when=condition)
    result = await loop.run("go")
    assert (result.stop_reason, result.output) == (StopReason.CONDITION, "final words")
    model.assert_complete()


# --- MaxIterations and MaxToolCalls --------------------------------------------------------------


def test_max_iterations_lets_the_last_allowed_iteration_run() -> None:
    assert MaxIterations(3).check(at_iteration(3), BEFORE) is None


def test_max_iterations_fires_past_its_limit_as_a_cap() -> None:
    signal = MaxIterations(3).check(at_iteration(4), BEFORE)
    assert signal == StopSignal(StopReason.MAX_ITERATIONS, "max_iterations=3", cap=True)


@pytest.mark.parametrize("at", [AFTER_REASONING, AFTER_TOOLS])
def test_max_iterations_is_checked_only_before_reasoning(at: CheckPoint) -> None:
    assert MaxIterations(1).check(at_iteration(9), at) is None


def made(calls: int) -> Run:
    run = make_run()
    run.state.tool_calls_made = calls
    return run


def test_max_tool_calls_under_its_limit_does_not_fire() -> None:
    assert MaxToolCalls(2).check(made(1), BEFORE) is None


def test_max_tool_calls_fires_at_its_limit_as_a_cap() -> None:
    signal = MaxToolCalls(2).check(made(2), BEFORE)
    assert signal == StopSignal(StopReason.MAX_TOOL_CALLS, "max_tool_calls=2", cap=True)


@pytest.mark.parametrize("at", [AFTER_REASONING, AFTER_TOOLS])
def test_max_tool_calls_is_checked_only_before_reasoning(at: CheckPoint) -> None:
    assert MaxToolCalls(1).check(made(5), at) is None


@pytest.mark.parametrize(("calls", "left"), [(0, 3), (2, 1), (3, 0), (7, 0)])
def test_max_tool_calls_allowance_is_what_is_left(calls: int, left: int) -> None:
    assert MaxToolCalls(3).tool_call_allowance(made(calls)) == left


def test_uncapped_conditions_allow_any_number_of_calls() -> None:
    assert TokenBudget(5).tool_call_allowance(made(99)) is None


# --- FinalAnswerMarker ---------------------------------------------------------------------------


def answered(text: str) -> Run:
    run = make_run()
    run.state.record_response(reply(text))
    return run


def test_final_answer_marker_output_is_the_text_after_it() -> None:
    signal = FinalAnswerMarker().check(answered("thinking... FINAL_ANSWER:  42 "), AFTER_REASONING)
    assert signal == StopSignal(StopReason.FINAL_ANSWER, "marker 'FINAL_ANSWER:'", output="42")


def test_final_answer_marker_at_the_end_keeps_the_text_before_it() -> None:
    signal = FinalAnswerMarker("DONE").check(answered(" the answer is 42 DONE"), AFTER_REASONING)
    assert signal is not None and signal.output == "the answer is 42"


def test_final_answer_marker_output_starts_after_its_first_occurrence() -> None:
    run = answered("FINAL_ANSWER: say FINAL_ANSWER: twice")
    signal = FinalAnswerMarker().check(run, AFTER_REASONING)
    assert signal is not None and signal.output == "say FINAL_ANSWER: twice"


def test_final_answer_marker_absent_does_not_fire() -> None:
    assert FinalAnswerMarker().check(answered("still working"), AFTER_REASONING) is None


@pytest.mark.parametrize("at", [BEFORE, AFTER_TOOLS])
def test_final_answer_marker_is_checked_only_after_reasoning(at: CheckPoint) -> None:
    assert FinalAnswerMarker().check(answered("FINAL_ANSWER: 1"), at) is None


def test_final_answer_marker_without_a_response_does_not_fire() -> None:
    assert FinalAnswerMarker().check(make_run(), AFTER_REASONING) is None
    assert FinalAnswerMarker().check(make_run(open_step=False), AFTER_REASONING) is None


# --- limits --------------------------------------------------------------------------------------

LIMITED: list[tuple[type[StopCondition], str]] = [
    (MaxIterations, "MaxIterations.limit must be an int >= 1"),
    (MaxToolCalls, "MaxToolCalls.limit must be an int >= 1"),
    (TokenBudget, "TokenBudget.limit must be an int >= 1"),
    (TimeBudget, "TimeBudget.seconds must be a finite number > 0"),
]


@pytest.mark.parametrize(("kind", "rule"), LIMITED)
@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_of_zero_or_less_is_refused(
    kind: type[StopCondition], rule: str, limit: int
) -> None:
    with pytest.raises(ConfigurationError, match=rf"{re.escape(rule)}, got {limit}"):
        kind(limit)  # type: ignore[call-arg]


@pytest.mark.parametrize(("kind", "rule"), LIMITED)
def test_the_smallest_positive_limit_is_accepted(kind: type[StopCondition], rule: str) -> None:
    assert kind(1) == kind(1)  # type: ignore[call-arg]


def always(steps: object) -> bool:
    return True


WRONG_OPTIONS: list[tuple[Callable[..., object], dict[str, Any], str, str]] = [
    (ToolCalled, {"names": 5}, "ToolCalled.names", "a sequence of tool names"),
    (ToolCalled, {"names": []}, "ToolCalled.names", "at least one tool name"),
    (ToolCalled, {"names": [""]}, "ToolCalled.names[0]", "a non-empty string"),
    (FinalAnswerMarker, {"marker": ""}, "FinalAnswerMarker.marker", "a non-empty string"),
    (
        StopWhen,
        {"predicate": lambda: True},
        "StopWhen.predicate",
        "a callable taking 1 positional argument",
    ),
    (StopWhen, {"predicate": always, "name": ""}, "StopWhen.name", "a non-empty string"),
    (StopWhen, {"predicate": always, "cap": 1}, "StopWhen.cap", "True or False"),
]


@pytest.mark.parametrize(("kind", "arguments", "option", "rule"), WRONG_OPTIONS)
def test_a_wrong_option_names_its_owner_option_and_rule(
    kind: Callable[..., object], arguments: dict[str, Any], option: str, rule: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        kind(**arguments)
    assert (caught.value.option, caught.value.rule) == (option, rule)


@pytest.mark.anyio
async def test_caps_under_the_stop_now_policy_end_the_run_without_a_last_call() -> None:
    model = ScriptedModel([reply("", call("t"), usage=Usage(60, 60))])
    loop = ReActLoop(
        model,
        tools=[FakeTool("t")],
        stop_when=TokenBudget(100),
        limits=Limits(on_cap=CapPolicy.STOP_NOW),
    )
    result = await loop.run("go")
    assert result.stop_reason is StopReason.TOKEN_BUDGET
    model.assert_complete()


# --- options taken as meant ----------------------------------------------------------------------


def test_one_tool_name_is_one_name_not_its_letters() -> None:
    assert ToolCalled("submit").names == frozenset({"submit"})


def test_several_tool_names_are_kept() -> None:
    assert ToolCalled(["a", "b"]).names == frozenset({"a", "b"})


@pytest.mark.anyio
async def test_tool_called_with_one_name_stops_on_that_tool_only() -> None:
    model = ScriptedModel([call("s"), call("submit"), "unused"])
    tools = [FakeTool("s", result="s-result"), FakeTool("submit", result="done")]
    loop = ReActLoop(model, tools=tools, stop_when=ToolCalled("submit"))
    result = await loop.run("go")
    assert (result.stop_reason, result.output) == (StopReason.TOOL_CALLED, "done")
    assert model.remaining == 1


@pytest.mark.anyio
async def test_a_plain_predicate_stops_the_run() -> None:
    def two_steps(steps: list[Step]) -> bool:
        return len(steps) >= 2

    model = ScriptedModel([call("t"), call("t"), call("t"), "final"])
    loop = ReActLoop(model, tools=[FakeTool("t")], stop_when=two_steps)  # type: ignore[call-overload]
    result = await loop.run("go")
    assert result.stop_reason is StopReason.CONDITION
    assert result.stop_detail == "two_steps"
    assert len(result.steps) == 3  # two tool steps, then the final call without tools

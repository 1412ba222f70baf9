"""IterationGuards: caps lead to one final tool-less call, or stop at once."""

from __future__ import annotations

import pytest

from reactloop import CapPolicy, Limits, StopReason, StopWhen, TimeBudget, TokenBudget, Usage
from reactloop._core._contracts import CheckPoint, StopCondition
from reactloop._core._decisions import StopSignal
from reactloop._core._state import Finishing
from reactloop._loop._run import Run
from reactloop.phases import IterationGuards, Proceed, Stop
from reactloop.testing import FakeClock, make_run, reply, run_phase

pytestmark = pytest.mark.anyio


async def test_proceeds_under_the_limits() -> None:
    assert isinstance(await run_phase(IterationGuards(), make_run()), Proceed)


async def test_iteration_cap_marks_run_finishing() -> None:
    run = make_run(max_iterations=1)
    run.state.open_step(0.0)
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Proceed)
    assert run.state.finishing is not None
    assert run.state.finishing.reason is StopReason.MAX_ITERATIONS


async def test_iteration_cap_stops_now_when_asked() -> None:
    run = make_run(max_iterations=1, limits=Limits(on_cap=CapPolicy.STOP_NOW))
    run.state.open_step(0.0)
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.detail) == (StopReason.MAX_ITERATIONS, "max_iterations=1")


async def test_finishing_run_stops_at_next_guard() -> None:
    run = make_run(max_iterations=1)
    run.state.open_step(0.0)
    await run_phase(IterationGuards(), run)
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)


async def test_token_budget_is_a_cap() -> None:
    run = make_run(stop_when=TokenBudget(100), limits=Limits(on_cap=CapPolicy.STOP_NOW))
    run.state.usage = Usage(80, 30)
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)
    assert decision.reason is StopReason.TOKEN_BUDGET


async def test_time_budget_uses_the_injected_clock() -> None:
    clock = FakeClock()
    run = make_run(stop_when=TimeBudget(5), limits=Limits(on_cap=CapPolicy.STOP_NOW), clock=clock)
    assert isinstance(await run_phase(IterationGuards(), run), Proceed)
    clock.advance(5)
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)
    assert decision.reason is StopReason.TIME_BUDGET


async def test_user_predicate_over_steps() -> None:
    condition = StopWhen(lambda steps: len(steps) >= 1, name="one step", cap=False)
    run = make_run(stop_when=condition)
    assert isinstance(await run_phase(IterationGuards(), run), Proceed)
    run.state.record_response(reply("a step"))
    run.state.close_step(0.0)
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.detail) == (StopReason.CONDITION, "one step")


async def test_repeated_identical_calls_stop_the_run() -> None:
    run = make_run()
    for _ in range(5):
        run.state.note_call(("search", "{}"))
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)
    assert decision.reason is StopReason.REPETITION and "5 times" in decision.detail


async def test_interrupt_stops_before_reasoning() -> None:
    run = make_run()
    run.request_interrupt("bye")
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.output) == (StopReason.INTERRUPTED, "bye")


async def test_a_repetition_stop_names_the_tool() -> None:
    run = make_run()
    for _ in range(5):
        run.state.note_call(("search", "{}"))
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)
    assert decision.detail == "tool 'search' called 5 times in a row with the same arguments"


async def test_an_interrupt_says_it_was_requested() -> None:
    run = make_run()
    run.request_interrupt("bye")
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop) and decision.detail == "interrupted on request"


async def test_a_run_still_finishing_stops_with_its_cap() -> None:
    run = make_run()
    run.state.finishing = Finishing(StopReason.TOKEN_BUDGET, "token_budget=10 (used 12)")
    decision = await run_phase(IterationGuards(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.detail) == (
        StopReason.TOKEN_BUDGET,
        "token_budget=10 (used 12)",
    )


class Verdict(StopCondition):
    """Stops before reasoning with an output of its own."""

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        return StopSignal(StopReason.CONDITION, "verdict", output="guilty")


async def test_a_condition_that_is_not_a_cap_stops_with_its_output() -> None:
    decision = await run_phase(IterationGuards(), make_run(stop_when=Verdict()))
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.detail, decision.output) == (
        StopReason.CONDITION,
        "verdict",
        "guilty",
    )

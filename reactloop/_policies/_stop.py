"""Stop conditions: caps (iterations, tool calls, tokens, cost, time, predicates), a final-answer
marker, and "the model called tool X". Combine them with `|` (see `AnyOf`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from attrs import field, frozen

from reactloop._core import CheckPoint, Step, StopCondition, StopReason, StopSignal
from reactloop._errors import ConfigurationError
from reactloop._validate import (
    boolean,
    checked_arguments,
    fail,
    function,
    integer,
    items,
    number,
    text,
)

if TYPE_CHECKING:
    from reactloop._loop import Run


def _names(names: Iterable[str] | str) -> frozenset[str]:
    """One string is one tool name (not the set of its letters); at least one name is needed."""
    given = (names,) if isinstance(names, str) else items("ToolCalled.names", names, "tool names")
    if not given:
        raise ConfigurationError.invalid("ToolCalled.names", names, "at least one tool name")
    return frozenset(text(f"ToolCalled.names[{i}]", name) for i, name in enumerate(given))


@checked_arguments
@frozen
class MaxIterations(StopCondition):
    """Cap: at most `limit` iterations that may call tools."""

    limit: int

    def __attrs_post_init__(self) -> None:
        integer("MaxIterations.limit", self.limit)

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """Fires before reasoning once `limit` iterations are done."""
        if at is CheckPoint.BEFORE_REASONING and run.state.iteration > self.limit:
            return StopSignal(StopReason.MAX_ITERATIONS, f"max_iterations={self.limit}", cap=True)
        return None


@checked_arguments
@frozen
class MaxToolCalls(StopCondition):
    """Cap: at most `limit` tool calls in the run (calls, not iterations)."""

    limit: int

    def __attrs_post_init__(self) -> None:
        integer("MaxToolCalls.limit", self.limit)

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """Fires before reasoning once `limit` calls were made."""
        if at is CheckPoint.BEFORE_REASONING and run.state.tool_calls_made >= self.limit:
            return StopSignal(StopReason.MAX_TOOL_CALLS, f"max_tool_calls={self.limit}", cap=True)
        return None

    def tool_call_allowance(self, run: Run) -> int | None:
        """Calls left before the cap."""
        return max(0, self.limit - run.state.tool_calls_made)


@checked_arguments
@frozen
class TokenBudget(StopCondition):
    """Cap: stop once the run's input plus output tokens reach `limit`."""

    limit: int

    def __attrs_post_init__(self) -> None:
        integer("TokenBudget.limit", self.limit)

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """Fires before reasoning once the budget is spent."""
        used = run.state.usage.total_tokens
        if at is CheckPoint.BEFORE_REASONING and used >= self.limit:
            return StopSignal(
                StopReason.TOKEN_BUDGET, f"token_budget={self.limit} (used {used})", cap=True
            )
        return None


def _limit(value: Decimal | float) -> Decimal:
    """A cost budget's limit as a Decimal (a float read from its shortest text), > 0."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int | float):
        fail("CostBudget.limit", value, "a Decimal, int or float")
    limit = value if isinstance(value, Decimal) else Decimal(str(value))
    if not limit.is_finite() or limit <= 0:
        fail("CostBudget.limit", value, "a finite number > 0")
    return limit


@checked_arguments
@frozen
class CostBudget(StopCondition):
    """Cap: stop once the run's cost (`usage.cost`, in dollars) reaches `limit`. Needs the loop's
    price table (`cost=CostOptions(...)`) and a known price for its model: both are checked when
    the loop is built."""

    limit: Decimal = field(converter=_limit)

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """Fires before reasoning once the budget is spent."""
        spent = run.state.usage.cost
        if at is CheckPoint.BEFORE_REASONING and spent is not None and spent >= self.limit:
            detail = f"cost_budget={self.limit} (spent {spent:.6f})"
            return StopSignal(StopReason.COST_BUDGET, detail, cap=True)
        return None


@checked_arguments
@frozen
class TimeBudget(StopCondition):
    """Cap: stop once the run has lasted `seconds` (checked between steps)."""

    seconds: float

    def __attrs_post_init__(self) -> None:
        number("TimeBudget.seconds", self.seconds)

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """Fires before reasoning once the run's clock passed the budget."""
        elapsed = run.now() - run.state.started_at
        if at is CheckPoint.BEFORE_REASONING and elapsed >= self.seconds:
            detail = f"time_budget={self.seconds:g}s (elapsed {elapsed:.3f}s)"
            return StopSignal(StopReason.TIME_BUDGET, detail, cap=True)
        return None


@checked_arguments
@frozen
class StopWhen(StopCondition):
    """A user predicate over the steps so far; `cap=False` stops without a last model call."""

    predicate: Callable[[Sequence[Step]], bool]
    name: str = "predicate"
    cap: bool = True

    def __attrs_post_init__(self) -> None:
        function("StopWhen.predicate", self.predicate, 1)
        text("StopWhen.name", self.name)
        boolean("StopWhen.cap", self.cap)

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """Fires before reasoning when the predicate holds."""
        if at is CheckPoint.BEFORE_REASONING and self.predicate(run.state.steps):
            return StopSignal(StopReason.CONDITION, self.name, cap=self.cap)
        return None


@checked_arguments
@frozen
class FinalAnswerMarker(StopCondition):
    """Stop when the model's text contains `marker`; the output is the text after it."""

    marker: str = "FINAL_ANSWER:"

    def __attrs_post_init__(self) -> None:
        text("FinalAnswerMarker.marker", self.marker)

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """Fires after reasoning when the response text carries the marker."""
        draft = run.state.current
        if at is not CheckPoint.AFTER_REASONING or draft is None or draft.response is None:
            return None
        text = draft.response.message.text
        head, found, tail = text.partition(self.marker)
        if not found:
            return None
        output = tail.strip() or head.strip()
        return StopSignal(StopReason.FINAL_ANSWER, f"marker {self.marker!r}", output=output)


@checked_arguments
@frozen
class ToolCalled(StopCondition):
    """Stop after a step in which one of `names` ran successfully; its result is the output."""

    names: frozenset[str] = field(converter=_names)
    """The watched tool names; `ToolCalled("submit")` watches the one tool `submit`."""

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """Fires after tools when a watched tool returned a result that is not an error."""
        draft = run.state.current
        if at is not CheckPoint.AFTER_TOOLS or draft is None:
            return None
        for result in draft.tool_results:
            if result.name in self.names and not result.is_error:
                detail = f"tool {result.name!r} was called"
                return StopSignal(StopReason.TOOL_CALLED, detail, output=result.content)
        return None

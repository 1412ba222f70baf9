"""Closed unions of typed decisions: what phases return to the loop, what hooks return to phases."""

from __future__ import annotations

import enum
from typing import Any, Generic, NoReturn, TypeAlias, TypeVar

from attrs import frozen

from reactloop._errors import ContractError, ReactLoopError, name_of

T = TypeVar("T")


class StopReason(enum.StrEnum):
    """Why a run ended; `RunResult.stop_detail` says which limit or rule, with its value."""

    COMPLETED = "completed"
    MAX_ITERATIONS = "max_iterations"
    MAX_TOOL_CALLS = "max_tool_calls"
    FINAL_ANSWER = "final_answer"
    TOOL_CALLED = "tool_called"
    TOKEN_BUDGET = "token_budget"
    COST_BUDGET = "cost_budget"
    TIME_BUDGET = "time_budget"
    CONDITION = "condition"
    HOOK_STOPPED = "hook_stopped"
    GUARD_REJECTED = "guard_rejected"
    INTERRUPTED = "interrupted"
    REPETITION = "repetition"
    RUN_TIMEOUT = "run_timeout"
    STREAM_CLOSED = "stream_closed"  # the consumer left `stream()` before the run ended
    AWAITING_APPROVAL = "awaiting_approval"  # paused: `RunResult.pending` lists the held calls
    ERROR = "error"


# --- phase decisions ------------------------------------------------------------------------


@frozen
class Proceed:
    """Go on to the next phase of the sequence (after the last one: the next iteration)."""


@frozen
class NextIteration:
    """Skip the rest of this iteration's phases and start the next iteration."""


@frozen(eq=False)
class Stop:
    """End the run. `output` overrides the final answer (text, or a structured output's value);
    None keeps the last assistant text."""

    reason: StopReason
    detail: str = ""
    output: Any = None
    error: ReactLoopError | None = None


@frozen
class StopSignal:
    """A stop condition fired: why, which limit, and whether it is a cap (one last call first)."""

    reason: StopReason
    detail: str
    cap: bool = False
    output: str | None = None


PhaseDecision: TypeAlias = Proceed | NextIteration | Stop

PROCEED = Proceed()


def not_a_decision(phase: object, value: object) -> NoReturn:
    """Raise the `ContractError` of a phase that returned something other than a decision."""
    rule = "a phase returns a decision: Proceed, NextIteration or Stop"
    if isinstance(value, StopRun | Override | Reject):
        rule += f" ({type(value).__name__} is a hook's decision; a phase ends the run with Stop)"
    raise ContractError(f"phase {name_of(phase)}", rule, value)


def not_async(phase: object, value: object) -> NoReturn:
    """Raise the `ContractError` of a phase called like a function that returned no awaitable."""
    rule = "a phase is async: `async def __call__(self, run)` or an async function of the run"
    raise ContractError(f"phase {name_of(phase)}", rule, value)


# --- hook decisions -------------------------------------------------------------------------


@frozen
class Override(Generic[T]):
    """Replace the value at this hook point (request, response, tool call or tool result)."""

    value: T


@frozen
class Reject:
    """Refuse one tool call; the model receives `message` as that call's error result."""

    message: str


@frozen
class StopRun:
    """Stop the run at the next safe point; `reason` is kept as the result's stop detail."""

    reason: str


# A hook returns None to let things go on unchanged, or one of these.
HookDecision: TypeAlias = Override[T] | StopRun
ToolCallDecision: TypeAlias = Override[T] | Reject | StopRun
StartDecision: TypeAlias = StopRun

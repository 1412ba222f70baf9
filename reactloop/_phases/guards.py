"""`IterationGuards`: interrupts, repetition, limits and budgets, checked before each model call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop._core import PROCEED, CheckPoint, Finishing, PhaseDecision, Stop, StopReason
from reactloop._policies import CapPolicy

if TYPE_CHECKING:
    from reactloop._loop import Run


def interruption(run: Run) -> Stop | None:
    """A Stop for a requested interrupt (a safe point calls this), or None."""
    if run.interrupt is None:
        return None
    message = run.interrupt.message
    return Stop(StopReason.INTERRUPTED, "interrupted on request", output=message)


def repetition(run: Run) -> Stop | None:
    """A Stop when the same call was repeated `stop_after` times in a row, or None."""
    policy, state = run.config.repetition, run.state
    if policy is None or state.repeat_count < policy.stop_after:
        return None
    name = state.last_call_key[0] if state.last_call_key else ""
    detail = f"tool {name!r} called {state.repeat_count} times in a row with the same arguments"
    return Stop(StopReason.REPETITION, detail)


class IterationGuards:
    """Checks interrupts, repetition and the stop conditions before reasoning.

    A cap (iterations, tool calls, tokens, time) does not end the run silently: under the default
    `CapPolicy.FINAL_CALL` it marks the run as finishing, so the next model call is made without
    tools and its answer ends the run; under `STOP_NOW` the run stops here.
    """

    def __repr__(self) -> str:
        """`Name()`: a phase has no settings, so a sequence prints readably."""
        return f"{type(self).__name__}()"

    async def __call__(self, run: Run) -> PhaseDecision:
        """Proceed, proceed into a final tool-less call, or stop."""
        draft = run.state.current
        if draft is not None and draft.recovered is not None:
            return PROCEED  # a resumed step: it passed its guards before its response
        stop = interruption(run) or repetition(run)
        if stop is not None:
            return stop
        finishing = run.state.finishing
        if finishing is not None:
            return Stop(finishing.reason, finishing.detail)
        signal = run.config.stop_when.check(run, CheckPoint.BEFORE_REASONING)
        if signal is None:
            return PROCEED
        if signal.cap and run.config.on_cap is CapPolicy.FINAL_CALL:
            run.state.finishing = Finishing(signal.reason, signal.detail)
            return PROCEED
        return Stop(signal.reason, signal.detail, output=signal.output)

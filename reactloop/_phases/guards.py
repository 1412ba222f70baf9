"""`IterationGuards`: limits and budgets, checked before each model call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop._contracts import CheckPoint
from reactloop._decisions import PROCEED, PhaseDecision, Stop
from reactloop._run import CapPolicy
from reactloop._state import Finishing

if TYPE_CHECKING:
    from reactloop._run import Run


class IterationGuards:
    """Checks the stop conditions before reasoning.

    A cap (iterations, tool calls, tokens, time) does not end the run silently: under the default
    `CapPolicy.FINAL_CALL` it marks the run as finishing, so the next model call is made without
    tools and its answer ends the run; under `STOP_NOW` the run stops here.
    """

    async def __call__(self, run: Run) -> PhaseDecision:
        """Proceed, proceed into a final tool-less call, or stop."""
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

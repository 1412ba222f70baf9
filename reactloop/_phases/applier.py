"""`HookDecisionApplier`: the one place where hook decisions become control flow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reactloop._core import PROCEED, PhaseDecision, Stop, StopReason

if TYPE_CHECKING:
    from reactloop._loop import Run
    from reactloop._policies import Verdict


def park_stop(run: Run, verdict: Verdict[Any]) -> bool:
    """Record a verdict's stop on the run for the applier; True when there was one."""
    if verdict.stop is None or run.pending_stop is not None:
        return run.pending_stop is not None
    if verdict.error is not None:
        run.pending_stop = Stop(StopReason.ERROR, verdict.error.message, error=verdict.error)
    else:
        run.pending_stop = Stop(StopReason.HOOK_STOPPED, verdict.stop.reason)
    return True


class HookDecisionApplier:
    """Turns a stop that hooks decided (parked on the run) into a `Stop`; otherwise proceeds.

    Overrides are values, taken by the phase that ran the hooks; rejections of one tool call are
    results. Only stopping changes the loop's course, and it happens here.
    """

    def __repr__(self) -> str:
        """`Name()`: a phase has no settings, so a sequence prints readably."""
        return f"{type(self).__name__}()"

    async def __call__(self, run: Run) -> PhaseDecision:
        """Stop if a hook asked for it, else proceed."""
        stop = run.pending_stop
        if stop is None:
            return PROCEED
        run.pending_stop = None
        return stop

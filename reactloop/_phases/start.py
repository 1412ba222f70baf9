"""`RunStart`: input guards and before-run hooks, once, before the first iteration."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop._core import PROCEED, HookPoint, PhaseDecision, Stop, StopReason, UserMessage
from reactloop._errors import ContractError, GuardRejectedError
from reactloop._phases.applier import park_stop

if TYPE_CHECKING:
    from reactloop._loop import Run


def _user_input(run: Run) -> str:
    for message in reversed(run.state.messages):
        if isinstance(message, UserMessage):
            return message.text
    return ""


def _guard_name(guard: object) -> str:
    return getattr(guard, "__name__", type(guard).__name__)


class RunStart:
    """Rejects input a guard refuses (with no model call), then asks the before-run hooks.

    A run whose preparation broke a contract (instructions that are not a string) stops here.
    """

    def __repr__(self) -> str:
        """`Name()`: a phase has no settings, so a sequence prints readably."""
        return f"{type(self).__name__}()"

    async def __call__(self, run: Run) -> PhaseDecision:
        """Stop with GUARD_REJECTED, park a hook stop, or proceed."""
        unprepared = run.pending_stop  # the run could not be prepared (see `start_run`)
        if unprepared is not None:
            run.pending_stop = None
            return unprepared
        text = _user_input(run)
        for guard in run.config.input_guards:
            reason = guard(text)
            if reason is not None:
                if not isinstance(reason, str):
                    rule = "an input guard returns None to accept, or a reason (str) to reject"
                    raise ContractError(f"input guard {_guard_name(guard)}", rule, reason)
                error = GuardRejectedError(_guard_name(guard), reason)
                return Stop(StopReason.GUARD_REJECTED, error.message, error=error)
        hooks = run.config.hooks
        if hooks.has(HookPoint.BEFORE_RUN):
            park_stop(run, await hooks.before_run(run))
        return PROCEED

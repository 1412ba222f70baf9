"""`RunStart`: input guards and before-run hooks, once, before the first iteration."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop._core import (
    PROCEED,
    HookPoint,
    InputGuard,
    PhaseDecision,
    Stop,
    StopReason,
    UserMessage,
)
from reactloop._errors import ContractError, GuardRejectedError
from reactloop._phases.applier import park_stop
from reactloop._policies import NON_EMPTY_INPUT

if TYPE_CHECKING:
    from reactloop._loop import Run


def _user_input(run: Run) -> UserMessage | None:
    for message in reversed(run.state.messages):
        if isinstance(message, UserMessage):
            return message
    return None


def _guards(run: Run, said: UserMessage | None) -> tuple[InputGuard, ...]:
    """The input guards for this input: an input of images, documents or audio without text is
    not empty, so the built-in non-empty check does not judge it (the others read its text)."""
    guards = run.config.input_guards
    if said is None or said.text or said.is_plain:
        return guards
    return tuple(guard for guard in guards if guard is not NON_EMPTY_INPUT)


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
        said = _user_input(run)
        text = "" if said is None else said.text
        for guard in _guards(run, said):
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

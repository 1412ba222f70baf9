"""Who may do what, and how a refusal reads: the `authorize` hook (or the default, owners
only) asked before every start, read, approval and cancel; the ids a request names checked as a
store takes them; a loop error at a run's start turned into the request error it stands for."""

from __future__ import annotations

import inspect

from reactloop._errors import ConfigurationError, ErrorCode
from reactloop._serve._contracts import AccessRequest
from reactloop._serve._errors import (
    ForbiddenError,
    MalformedRequestError,
    NotPendingError,
    RequestRejectedError,
)
from reactloop._serve._options import ServeOptions
from reactloop._stored_errors import SessionBusyError
from reactloop._unicode import ID_RULE, checked_ids


async def authorized(options: ServeOptions, asked: AccessRequest) -> None:
    """`ForbiddenError` unless `options.authorize` allows it (awaited if async; default: the
    owner, or a run or session without one)."""
    hook = options.authorize
    if hook is None:
        allowed: object = asked.owner is None or asked.owner == asked.user_id
    else:
        allowed = hook(asked)
        if inspect.isawaitable(allowed):
            allowed = await allowed
    if allowed is not True:
        run_id, session_id = asked.run_id, asked.session_id
        what = f"run {run_id!r}" if run_id is not None else f"session {session_id!r}"
        rule = "a user may act only on their own runs and sessions (the authorize hook)"
        message = f"user {asked.user_id!r} may not {asked.action.value} {what}"
        raise ForbiddenError(message, rule=rule)


def asked_ids(**ids: str | None) -> None:
    """The ids a request names, as every store takes them (`checked_ids`): one that is not
    (too long, a control character) is the request's fault, a 400 naming the rule."""
    try:
        checked_ids(**ids)
    except ConfigurationError as error:
        raise MalformedRequestError(error.message, rule=ID_RULE) from None


SHOWN_CALLS = 5
"""How many of the call ids a refused answer names (the client chose them: a thousand ids of
a kilobyte each are not echoed back)."""


def not_pending(run_id: str, calls: frozenset[str], why: str) -> NotPendingError:
    shown = [call if len(call) <= 64 else call[:61] + "..." for call in sorted(calls)]
    more = len(shown) - SHOWN_CALLS
    named = ", ".join(shown[:SHOWN_CALLS]) + (f" and {more} more" if more > 0 else "")
    named = named or "none"
    rule = "decisions only for calls the run holds pending"
    return NotPendingError(f"run {run_id!r} is not waiting on calls ({named}): {why}", rule=rule)


REQUEST_OPTIONS = ("run_id", "session_id", "text", "history", "user_id", "decisions")
"""The loop options a request supplies: a `ConfigurationError` naming one is the request's."""


def rejected(error: BaseException) -> RequestRejectedError | None:
    """The request error a loop error at a run's start stands for; None for the server's own."""
    if isinstance(error, SessionBusyError):
        rule = "one turn at a time per session: wait for its run, or answer its held calls"
        return RequestRejectedError(error.message, rule=rule, status=409, code=ErrorCode.CONFLICT)
    if isinstance(error, ConfigurationError) and (error.option or "").startswith(REQUEST_OPTIONS):
        return MalformedRequestError(error.message, rule=error.rule)
    return None

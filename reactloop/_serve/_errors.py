"""Errors of the HTTP endpoints: each says which rule a request broke and carries the HTTP status
the endpoint answers with, in the protocol's own error form. Part of the one tree under
`ReactLoopError`."""

from __future__ import annotations

from reactloop._errors import ErrorCode, ReactLoopError


class RequestRejectedError(ReactLoopError):
    """A request to a serving endpoint was refused before anything ran: `status` is the HTTP
    status it is answered with, `rule` what the request must be, `code` the error's kind (a
    session busy with another run: 409, `conflict`). The message never carries a
    secret or an internal traceback: it is what the client reads."""

    code = ErrorCode.INVALID_REQUEST
    status = 400

    def __init__(
        self,
        message: str,
        *,
        rule: str | None = None,
        status: int | None = None,
        code: ErrorCode | None = None,
    ) -> None:
        super().__init__(message)
        self.rule = rule
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code


class MalformedRequestError(RequestRejectedError):
    """The body is not what the protocol defines (not JSON, a missing or mistyped field, an
    unknown message part): 400; `rule` names what was expected."""


class RequestTooLargeError(RequestRejectedError):
    """The body is longer than `ServeOptions.max_body_bytes`: 413, read no further."""

    status = 413


class UnauthorizedError(RequestRejectedError):
    """No user could be identified for the request (the `identify` hook said None): 401."""

    code = ErrorCode.AUTHENTICATION
    status = 401


class ForbiddenError(RequestRejectedError):
    """The user may not do this to this run or session (the `authorize` hook said no, or the run
    is another user's): 403."""

    code = ErrorCode.AUTHENTICATION
    status = 403


class TooManyRunsError(RequestRejectedError):
    """The user already has `ServeOptions.max_runs_per_user` runs streaming: 429."""

    code = ErrorCode.RATE_LIMITED
    status = 429


class NotPendingError(RequestRejectedError):
    """An approval names a call the run is not waiting on (never held, already settled by
    someone else, or another run's): 409."""

    code = ErrorCode.CONFLICT
    status = 409


class UnknownRunError(RequestRejectedError):
    """No run or session of that id exists for this user: 404."""

    code = ErrorCode.CONFIGURATION
    status = 404

"""The checks of how a provider fails: each error the server can send becomes its typed error
(a rate limit with its retry-after, authentication, server errors, a context overflow, a
malformed body), a stream cut mid-way is an error and never a truncated success, a cancelled
stream ends promptly and lets go of its connection, and a stalled stream times out."""

from __future__ import annotations

import anyio
import attrs

from reactloop._errors import (
    AuthenticationError,
    ContextTooLongError,
    InvalidResponseError,
    ModelError,
    ModelTimeoutError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._kit._answers import LONG_TEXT, REQUEST, Watched, held, render
from reactloop._kit._check import HANG_GUARD, ConformanceCheck, ConformanceError, Mode, Session
from reactloop._kit._harness import ErrorKind, ScriptedAnswer, ScriptedError
from reactloop._kit._server import WireEnding, WireReply
from reactloop._kit._views import ResponseView

RETRY_AFTER = 7
STALL_IDLE_TIMEOUT = 0.5
"""The idle timeout the stalled-stream check builds its model with."""


async def expect_error(
    session: Session, mode: Mode, reply: WireReply, kind: type[ModelError]
) -> ModelError:
    """Call in `mode` against `reply`: the `kind` error it raises, else a failure."""
    expected = f"{kind.__name__} from a {mode.value} call"
    try:
        answered = await session.attempt(REQUEST, mode, reply)
    except kind as error:
        return error
    except ConformanceError:
        raise
    except Exception as error:
        raise session.failure(expected, f"{type(error).__name__}: {error}") from error
    raise session.failure(expected, f"a response {ResponseView.of(answered.response)!r}")


def error_reply(session: Session, kind: ErrorKind, status: int) -> WireReply:
    """The harness's reply for this failure (a rate limit naming `RETRY_AFTER` seconds)."""
    after = RETRY_AFTER if kind is ErrorKind.RATE_LIMITED else None
    return session.harness.render_error(ScriptedError(kind, status, after))


async def rate_limited(session: Session) -> None:
    """A 429 naming a wait: RateLimitedError, status 429, `retry_after` 7 s (both modes)."""
    for mode in Mode:
        reply = error_reply(session, ErrorKind.RATE_LIMITED, 429)
        error = await expect_error(session, mode, reply, RateLimitedError)
        session.expect(f"{mode.value}: retry_after (from the header)", 7.0, error.retry_after)
        session.expect(f"{mode.value}: status", 429, error.status)


async def authentication_failed(session: Session) -> None:
    """A 401: AuthenticationError, status 401 (both modes)."""
    for mode in Mode:
        reply = error_reply(session, ErrorKind.AUTHENTICATION, 401)
        error = await expect_error(session, mode, reply, AuthenticationError)
        session.expect(f"{mode.value}: status", 401, error.status)


async def server_errors(session: Session) -> None:
    """A 500 and a 503: ProviderUnavailableError with that status (both modes)."""
    for kind, status in ((ErrorKind.SERVER_ERROR, 500), (ErrorKind.UNAVAILABLE, 503)):
        for mode in Mode:
            reply = error_reply(session, kind, status)
            error = await expect_error(session, mode, reply, ProviderUnavailableError)
            session.expect(f"{mode.value}: status", status, error.status)


async def context_too_long(session: Session) -> None:
    """The vendor's own context-overflow answer: ContextTooLongError (both modes)."""
    for mode in Mode:
        reply = error_reply(session, ErrorKind.CONTEXT_TOO_LONG, 400)
        await expect_error(session, mode, reply, ContextTooLongError)


async def malformed_body(session: Session) -> None:
    """A 200 whose body is no answer of the protocol: InvalidResponseError, not a blank
    success."""
    reply = error_reply(session, ErrorKind.MALFORMED, 200)
    await expect_error(session, Mode.REQUEST, reply, InvalidResponseError)


async def cut_stream(session: Session) -> None:
    """A stream cut after half its events, and a whole body cut in half: a ModelError each,
    never a shortened response."""
    answer = ScriptedAnswer(LONG_TEXT)
    stream = session.harness.render_stream(answer)
    half = len(stream.chunks) // 2
    cut = attrs.evolve(stream, chunks=stream.chunks[:half], ending=WireEnding.CUT)
    await expect_error(session, Mode.STREAM, cut, ModelError)
    whole = render(session, answer, Mode.REQUEST)
    body = b"".join(whole.chunks)
    cut = attrs.evolve(whole, chunks=(body[: len(body) // 2],), ending=WireEnding.CUT)
    await expect_error(session, Mode.REQUEST, cut, ModelError)


async def cancellation(session: Session) -> None:
    """A stream cancelled while the server holds its second half: the call ends within the
    hang guard, and the server sees the connection closed (the response was let go)."""
    hold = anyio.Event()
    session.server.reply_with(held(session.harness.render_stream(ScriptedAnswer(LONG_TEXT)), hold))
    watched = Watched(session)
    stage = "a text delta before the cancellation"
    with anyio.move_on_after(HANG_GUARD) as guard:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watched.stream)
            await watched.first.wait()
            stage = "the cancelled stream to end"
            tasks.cancel_scope.cancel()
        watched.check_no_failure("a streamed call in progress (to cancel)")
        stage = "the server to see the connection closed"
        await session.server.hung_up.wait()
    hold.set()
    if guard.cancelled_caught:
        raise session.failure(stage, f"nothing within {HANG_GUARD:g} s (the kit's hang guard)")


async def stalled_stream(session: Session) -> None:
    """A stream that stops sending after half its events, from a model built with a 0.5 s
    idle timeout: ModelTimeoutError."""
    stream = session.harness.render_stream(ScriptedAnswer(LONG_TEXT))
    half = len(stream.chunks) // 2
    stalled = attrs.evolve(stream, chunks=stream.chunks[:half], ending=WireEnding.STALL)
    await expect_error(session, Mode.STREAM, stalled, ModelTimeoutError)


FAILURE_CHECKS = (
    ConformanceCheck(
        "rate_limited",
        "a 429 raises RateLimitedError with retry_after from the header",
        rate_limited,
    ),
    ConformanceCheck(
        "authentication_failed", "a 401 raises AuthenticationError", authentication_failed
    ),
    ConformanceCheck(
        "server_errors", "a 500 or a 503 raises ProviderUnavailableError", server_errors
    ),
    ConformanceCheck(
        "context_too_long",
        "the vendor's context overflow answer raises ContextTooLongError",
        context_too_long,
    ),
    ConformanceCheck(
        "malformed_body", "a malformed 200 body raises InvalidResponseError", malformed_body
    ),
    ConformanceCheck(
        "cut_stream",
        "a stream or body cut mid-way raises a ModelError, never a truncated success",
        cut_stream,
    ),
    ConformanceCheck(
        "cancellation",
        "cancelling a stream in progress returns promptly and closes its connection",
        cancellation,
    ),
    ConformanceCheck(
        "stalled_stream",
        "a stream that stalls past the model's idle timeout raises ModelTimeoutError",
        stalled_stream,
        idle_timeout=STALL_IDLE_TIMEOUT,
    ),
)

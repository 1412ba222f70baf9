"""The HTTP pieces every endpoint shares: a body read under its size cap, the user the `identify`
hook names, errors answered as JSON (before a stream starts) or in the protocol's error frame
(after), and the SSE response that streams a live run with resumable event ids.

Imports Starlette: only `ChatServer`'s apps import this module, so a program that does not
serve never loads it."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING

import anyio
import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from reactloop._errors import ConfigurationError
from reactloop._serve._errors import RequestRejectedError, RequestTooLargeError, UnauthorizedError
from reactloop._serve._options import ANONYMOUS, ServeOptions

if TYPE_CHECKING:
    from reactloop._serve._contracts import StreamEncoder
    from reactloop._serve._host import RunHost
    from reactloop._serve._live import LiveRun

LOGGER = logging.getLogger("reactloop.serve")

INTERNAL = "internal_error"
INTERNAL_MESSAGE = "the server failed to answer this request; its log says why"
STREAM_FAILED = "the server failed while streaming this run; its log says why"
BATCH_BYTES = 65_536
MAX_SEQ_DIGITS = 18
"""The longest event seq a `Last-Event-ID` may name (`int()` refuses over 4300 digits)."""
"""The most a stream holds back to send the frames of events already held in one write."""


def json_response(payload: object, status: int = 200) -> Response:
    """A JSON answer (orjson), for errors and for the endpoints that answer with data."""
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json")


def error_response(code: str, message: str, rule: str | None, status: int) -> Response:
    """The JSON error every endpoint answers with before a stream starts."""
    return json_response({"error": {"code": code, "message": message, "rule": rule}}, status)


def rejected(error: RequestRejectedError) -> Response:
    """A refused request's answer: its status, code, message and rule (all safe to show)."""
    return error_response(str(error.code.value), error.message, error.rule, error.status)


def internal_error() -> Response:
    """The answer to a request the server failed on: a 500 saying nothing of the cause (the
    log has it), so no traceback or secret reaches the client."""
    return error_response(INTERNAL, INTERNAL_MESSAGE, None, 500)


def request_headers(request: Request) -> dict[str, str]:
    """The request's headers by lower-cased name (the hooks' view of them)."""
    return {name.lower(): value for name, value in request.headers.items()}


async def read_body(request: Request, limit: int, within: float = 30.0) -> bytes:
    """The whole body, refused with `RequestTooLargeError` (413) as soon as it is known to be
    longer than `limit`: from its Content-Length before reading anything, else at the chunk
    that crosses it, without reading further; and with a 408 when it has not all arrived
    within `within` seconds (a client that declares more than it sends)."""
    declared = request.headers.get("content-length", "")
    if _decimal(declared) and int(declared) > limit:
        raise _too_large(int(declared), limit)
    with anyio.move_on_after(within):
        return await _read(request, limit)
    raise RequestRejectedError(  # the deadline passed before the body was read
        f"the request body did not arrive within {within:g} seconds",
        rule=f"a body sent within {within:g} seconds (ServeOptions.body_timeout)",
        status=408,
    )


async def _read(request: Request, limit: int) -> bytes:
    """The body's chunks joined, refused at the chunk that crosses `limit`."""
    chunks: list[bytes] = []
    size = 0
    async with aclosing(request.stream()) as body:
        async for chunk in body:
            size += len(chunk)
            if size > limit:
                raise _too_large(size, limit)
            chunks.append(chunk)
    return b"".join(chunks)


def _decimal(text: str) -> bool:
    """Whether `text` is a plain decimal number (ASCII digits only: `int()` of '²' fails)."""
    return text.isascii() and text.isdigit()


def _too_large(size: int, limit: int) -> RequestTooLargeError:
    return RequestTooLargeError(
        f"the request body is at least {size} bytes; this server takes at most {limit}",
        rule=f"a body of at most {limit} bytes (ServeOptions.max_body_bytes)",
    )


async def identify(options: ServeOptions, headers: Mapping[str, str]) -> str:
    """The request's user: what `options.identify` names (awaited if async), `ANONYMOUS`
    without a hook; `UnauthorizedError` (401) when the hook names no one."""
    if options.identify is None:
        return ANONYMOUS
    found = options.identify(headers)
    if inspect.isawaitable(found):
        found = await found
    if found is None or found == "":
        raise UnauthorizedError(
            "no user could be identified for this request",
            rule="a request the identify hook names a user for",
        )
    if not isinstance(found, str):
        raise ConfigurationError.invalid("ServeOptions.identify", found, "a user id (str) or None")
    return found


def continuation(last_event_id: str | None, live: LiveRun) -> int:
    """How many of `live`'s events a client already has, from its `Last-Event-ID`
    (`{epoch}-{seq}`): seq when the epoch is this run object's and the event exists, else 0
    (a stale, foreign or malformed id starts from the beginning)."""
    if not last_event_id:
        return 0
    epoch, _, seq = last_event_id.strip().rpartition("-")
    if epoch != live.epoch or not _decimal(seq) or len(seq) > MAX_SEQ_DIGITS:
        return 0
    after = int(seq)
    return after if after <= len(live.events) else 0


class EventStream:
    """The SSE response streaming one live run: the encoder's opening, each event's frames with
    `id: {epoch}-{seq}`, its closing. A client continuing after event `after` gets the opening
    and what follows (the encoder is first fed the earlier events, output discarded, so its
    state is right).
    A client that goes away is detached as disconnected (the host's policy decides the run's
    fate); a failure after the stream began is written in the protocol's error form.
    `base`: the events before it are not this stream's (a resumed run's earlier ones, which
    a continuation's client has): the encoder never sees them.
    The stream holds its client's place on the run from when it is made (`host.attach`) until
    it ends or is `release`d: a response cancelled or failed before it began lets go as a
    client that went away, so the disconnect policy applies to it too."""

    def __init__(
        self,
        host: RunHost,
        live: LiveRun,
        encoder: StreamEncoder,
        *,
        after: int = 0,
        base: int = 0,
    ) -> None:
        self.host = host
        self.live = live
        self.encoder = encoder
        self.after = max(after, base)
        self.base = base
        self.status_code = 200
        self._finished = False
        self._gone = False
        self._attached = True
        host.attach(live)

    def headers(self) -> list[tuple[bytes, bytes]]:
        """The response's headers: the protocol's, each once, over the streaming defaults."""
        headers = {
            "content-type": self.encoder.media_type,
            "cache-control": "no-cache",  # no cache or proxy may hold the stream back
            "x-accel-buffering": "no",
        }
        headers.update((name.lower(), value) for name, value in self.encoder.headers.items())
        return [(name.encode(), value.encode()) for name, value in headers.items()]

    def release(self, *, disconnected: bool) -> None:
        """Let go of the run (once): `disconnected` when the client did not get the whole
        stream."""
        if self._attached:
            self._attached = False
            self.host.detach(self.live, disconnected=disconnected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            start = {"type": "http.response.start", "status": 200, "headers": self.headers()}
            await send(start)
            async with anyio.create_task_group() as group:
                group.start_soon(self._watch, receive, group.cancel_scope)
                await self._pump(send)
                group.cancel_scope.cancel()
        except OSError:  # the server says the client is gone (ASGI 2.4)
            self._gone = True
        finally:  # gone, cancelled or failed before the end: the client did not get it all
            self.release(disconnected=not self._finished)

    async def _watch(self, receive: Receive, scope: anyio.CancelScope) -> None:
        """Wait for the client to go away; then stop streaming (unless it already ended)."""
        while True:
            message: Message = await receive()
            if message["type"] == "http.disconnect":
                self._gone = True
                if not self._finished:
                    scope.cancel()
                return

    async def _pump(self, send: Send) -> None:
        """Write the stream: its opening at once, then the events' frames, those of the events
        already held sent together (a client behind the run, a replay) and each new one as
        it comes; then the closing, after the error frame if the run's events failed."""
        opening = self._catch_up()
        if opening:
            await _body(send, opening)
        held = bytearray()
        try:
            async with aclosing(self.live.follow(self.after)) as events:
                async for seq, event in events:
                    held += self.encoder.encode(event, f"{self.live.epoch}-{seq}")
                    if held and (seq >= len(self.live.events) or len(held) >= BATCH_BYTES):
                        await _body(send, bytes(held))
                        held.clear()
        except Exception as error:  # the run's events could not be read
            LOGGER.error("streaming run %s failed", self.live.run_id, exc_info=error)
            held += self.encoder.failure(STREAM_FAILED, INTERNAL)
        else:
            if self.live.error is not None:  # its driver failed, or its start was refused
                held += self._failure(self.live.error)
        self._finished = True
        last = bytes(held) + self.encoder.closing()
        await send({"type": "http.response.body", "body": last, "more_body": False})

    def _failure(self, error: Exception) -> bytes:
        """The error frame for a run that ended without its end: a refusal as it is (its
        message is for the client), anything else as a failure the log explains."""
        if isinstance(error, RequestRejectedError):
            return self.encoder.failure(error.message, str(error.code.value))
        return self.encoder.failure(STREAM_FAILED, INTERNAL)

    def _catch_up(self) -> bytes:
        """The opening frames, after feeding the encoder the events a continuing client has
        (their frames discarded): a continuation restates what those events left open."""
        held = self.live.events[self.base : self.after]
        for seq, event in enumerate(held, start=self.base + 1):
            self.encoder.encode(event, f"{self.live.epoch}-{seq}")
        return self.encoder.opening()


async def _body(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})

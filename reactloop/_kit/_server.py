"""A small HTTP/1.1 server on 127.0.0.1 for provider tests: real sockets, scripted replies.

It runs inside the test's own task group (`async with WireServer.running() as server`), so it
works on asyncio and trio alike. Each reply body is written as HTTP chunks, one chunk per item of
`WireReply.chunks`: chunked framing keeps those boundaries on the client side (a chunk may arrive
in pieces, but two chunks never arrive merged), which is what lets a test choose the splits. A
reply held at the test's pace notices a client that hangs up meanwhile (`WireServer.hangups`).
"""

from __future__ import annotations

import enum
import http
import inspect
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream
from attrs import define, field, frozen

MAX_HEAD = 65_536


class WireEnding(enum.Enum):
    """How a reply ends: properly, cut mid-body, stalled forever, no reply, or silence."""

    COMPLETE = "complete"
    CUT = "cut"
    STALL = "stall"
    RESET = "reset"
    SILENT = "silent"


@frozen
class WireRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        """The body as a JSON object (a `ValueError` when it is not one)."""
        value = orjson.loads(self.body)
        if not isinstance(value, dict):
            raise ValueError(f"the request body is JSON but not an object: {self.body[:80]!r}")
        return value


@frozen
class WireReply:
    """What to answer: status, headers, body chunks, and how the body ends. With `hold`, the
    reply waits after its chunks until the test sets that event, then sends `rest` (a model
    answering slowly, at the test's pace)."""

    status: int = 200
    chunks: tuple[bytes, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    ending: WireEnding = WireEnding.COMPLETE
    hold: anyio.Event | None = None
    rest: tuple[bytes, ...] = ()


Handler = Callable[[WireRequest], WireReply | Awaitable[WireReply]]


def sse_reply(chunks: Sequence[bytes], ending: WireEnding = WireEnding.COMPLETE) -> WireReply:
    """A 200 event-stream reply."""
    return WireReply(200, tuple(chunks), (("content-type", "text/event-stream"),), ending)


def json_reply(
    body: object, status: int = 200, headers: Sequence[tuple[str, str]] = ()
) -> WireReply:
    """A JSON reply."""
    all_headers = (("content-type", "application/json"), *headers)
    return WireReply(status, (orjson.dumps(body),), all_headers)


def events_of(data: bytes) -> list[bytes]:
    """Cut a recorded stream after each blank line: one chunk per SSE event."""
    pieces, start = [], 0
    while (end := data.find(b"\n\n", start)) != -1:
        pieces.append(data[start : end + 2])
        start = end + 2
    if start < len(data):
        pieces.append(data[start:])
    return pieces


def split_at(data: bytes, points: Sequence[int]) -> list[bytes]:
    """Cut `data` at the given byte offsets (sorted, unique, inside the data)."""
    bounds = [0, *sorted(set(points)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


async def _read_request(reader: BufferedByteReceiveStream) -> WireRequest:
    head = (await reader.receive_until(b"\r\n\r\n", MAX_HEAD)).decode("latin-1")
    start, *lines = head.split("\r\n")
    method, path, _ = start.split(" ", 2)
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.receive_exactly(length) if length else b""
    return WireRequest(method, path, headers, body)


def _head(reply: WireReply) -> bytes:
    try:
        phrase = http.HTTPStatus(reply.status).phrase
    except ValueError:
        phrase = "Unknown"
    lines = [f"HTTP/1.1 {reply.status} {phrase}"]
    lines += [f"{name}: {value}" for name, value in reply.headers]
    lines.append("transfer-encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@define
class WireServer:
    """The running server: its URL, the handler answering requests, and what it received.
    `hangups` counts the clients that closed their connection before their reply was complete
    (and `hung_up` is set at the first), which is how a test sees a cancelled call let go."""

    port: int
    handler: Handler | None = None
    requests: list[WireRequest] = field(factory=list)
    connections: int = 0
    hangups: int = 0
    hung_up: anyio.Event = field(factory=anyio.Event)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    @asynccontextmanager
    async def running(cls) -> AsyncIterator[WireServer]:
        """Listen on a free port; stop (cancelling every connection) when the block ends."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        async with listener, anyio.create_task_group() as tasks:
            server = cls(listener.extra(SocketAttribute.local_port))
            tasks.start_soon(listener.serve, server._connection)
            try:
                yield server
            finally:
                tasks.cancel_scope.cancel()

    def reply_with(self, *replies: WireReply) -> None:
        """Answer the next requests with these replies, in order (the last one repeats)."""
        queue = list(replies)

        def next_reply(request: WireRequest) -> WireReply:
            return queue.pop(0) if len(queue) > 1 else queue[0]

        self.handler = next_reply

    async def _answer(self, request: WireRequest) -> WireReply:
        if self.handler is None:
            return WireReply(500, (b"the test gave the wire server no handler",))
        reply = self.handler(request)
        return await reply if inspect.isawaitable(reply) else reply

    async def _connection(self, stream: SocketStream) -> None:
        self.connections += 1
        reader = BufferedByteReceiveStream(stream)
        async with stream:
            try:
                while True:
                    request = await _read_request(reader)
                    self.requests.append(request)
                    if not await self._reply(stream, await self._answer(request)):
                        return
            except (
                anyio.EndOfStream,
                anyio.IncompleteRead,
                anyio.BrokenResourceError,
                anyio.ClosedResourceError,
            ):
                return

    async def _reply(self, stream: SocketStream, reply: WireReply) -> bool:
        """Write the reply; False when the connection ends with it (a client that hangs up
        meanwhile is counted)."""
        try:
            return await self._write(stream, reply)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._hang_up()
            return False

    def _hang_up(self) -> None:
        self.hangups += 1
        self.hung_up.set()

    async def _write(self, stream: SocketStream, reply: WireReply) -> bool:
        if reply.ending is WireEnding.RESET:
            return False
        if reply.ending is WireEnding.SILENT:
            await anyio.sleep_forever()
        await stream.send(_head(reply))
        for chunk in filter(None, reply.chunks):
            await stream.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        if reply.hold is not None:
            if not await self._held(stream, reply.hold):
                return False
            for chunk in filter(None, reply.rest):
                await stream.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        if reply.ending is WireEnding.STALL:
            await anyio.sleep_forever()
        if reply.ending is WireEnding.CUT:
            return False
        await stream.send(b"0\r\n\r\n")
        return True

    async def _held(self, stream: SocketStream, hold: anyio.Event) -> bool:
        """Wait until the test sets `hold`: True then, False when the client hangs up first."""
        hung_up = False
        async with anyio.create_task_group() as tasks:

            async def watch() -> None:
                nonlocal hung_up
                try:
                    while await stream.receive():
                        pass  # a client sends nothing while its reply streams
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    hung_up = True
                    self._hang_up()
                tasks.cancel_scope.cancel()

            tasks.start_soon(watch)
            await hold.wait()
            tasks.cancel_scope.cancel()
        return not hung_up

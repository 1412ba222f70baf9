"""A trivial protocol for testing the HTTP layer on its own: a JSON body (`text`, `run_id`,
`session_id`, `approve`/`deny` lists of call ids) read into a `ChatTurn`, and an encoder writing
one SSE frame per event (`data: <event class name>`). Also an SSE reader for the tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import httpx
import orjson
from attrs import define, field, frozen

from reactloop._core import Event
from reactloop._serve import ChatTurn, MalformedRequestError, StreamContext
from reactloop.approval import Approve, Decision, Deny


@define
class PlainEncoder:
    """One frame per event, its class name as data; `fail_on` makes encoding that event fail."""

    context: StreamContext
    fail_on: str | None = None
    media_type: str = "text/event-stream"
    headers: Mapping[str, str] = field(factory=lambda: {"x-plain-stream": "v1"})

    def opening(self) -> bytes:
        return f"event: open\ndata: {self.context.run_id}\n\n".encode()

    def encode(self, event: Event, event_id: str | None) -> bytes:
        name = type(event).__name__
        if name == self.fail_on:
            raise RuntimeError("encoding failed: password=hunter2")
        frame = f"data: {name}\n" + (f"id: {event_id}\n" if event_id else "")
        return f"{frame}\n".encode()

    def failure(self, message: str, code: str) -> bytes:
        return f"event: error\ndata: {code}: {message}\n\n".encode()

    def closing(self) -> bytes:
        return b"event: end\ndata: .\n\n"


@define
class PlainAdapter:
    """The plain protocol; `fail_on` is handed to every encoder it makes."""

    name: str = "plain"
    fail_on: str | None = None
    contexts: list[StreamContext] = field(factory=list)

    def read_turn(self, body: bytes, *, has_store: bool) -> ChatTurn:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise MalformedRequestError("not JSON", rule="a JSON object") from None
        if not isinstance(data, dict) or not isinstance(data.get("text", ""), str):
            raise MalformedRequestError("not a turn", rule='{"text": str, ...}')
        decisions: dict[str, Decision] = {i: Approve() for i in data.get("approve", [])}
        decisions.update({i: Deny("no") for i in data.get("deny", [])})
        text = data.get("text", "")
        return ChatTurn(
            session_id=data.get("session_id"),
            run_id=data.get("run_id"),
            content=(text,) if text else (),
            decisions=decisions,
        )

    def encoder(self, context: StreamContext) -> PlainEncoder:
        self.contexts.append(context)
        return PlainEncoder(context, self.fail_on)


@frozen
class Frame:
    """One SSE frame as a client reads it."""

    event: str | None
    data: str
    id: str | None


def frames(text: str) -> list[Frame]:
    """The SSE frames of a response body."""
    found = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields: dict[str, Any] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            fields[name] = value
        found.append(Frame(fields.get("event"), fields.get("data", ""), fields.get("id")))
    return found


async def read_until(response: httpx.Response, marker: str) -> str:
    """Read a streamed response until `marker` arrives, then drop it (a client going away);
    the text read. The byte generators httpx chains are finished by one more pull under a
    cancelled scope (left to the garbage collector, trio would warn about them)."""
    chunks = response.aiter_bytes()
    seen = b""
    try:
        async for chunk in chunks:
            seen += chunk
            if marker.encode() in seen:
                break
    finally:
        with anyio.CancelScope() as scope:
            scope.cancel()
            async for _ in chunks:
                pass
    return seen.decode()

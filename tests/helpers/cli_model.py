"""A fake OpenAI-compatible model server on 127.0.0.1 for the command line's tests: it answers
each chat completion with the next scripted turn (streamed or not), and can hold a turn until
the test releases it (a model that is still thinking when Ctrl-C is pressed), or stream part of
a turn's text and hold the rest (a model still writing its answer)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
from attrs import define, field, frozen

WAIT_LIMIT = 30.0
"""Longest a held turn waits for its release (a test that forgot it ends, not hangs)."""


@frozen
class Turn:
    """One model reply: text and tool calls `(name, arguments)`; `hold` waits for release;
    `shown` (streamed replies) sends that many characters of the text, then waits for release."""

    text: str = ""
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    hold: bool = False
    shown: int | None = None


def _calls(turn: Turn, index: int) -> list[dict[str, Any]]:
    return [
        {
            "index": i,
            "id": f"call_{index}_{i}",
            "type": "function",
            "function": {"name": name, "arguments": orjson.dumps(args).decode()},
        }
        for i, (name, args) in enumerate(turn.calls)
    ]


USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def completion(turn: Turn, index: int) -> dict[str, Any]:
    """A whole (unstreamed) chat completion for `turn`."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.calls:
        message["tool_calls"] = _calls(turn, index)
    finish = "tool_calls" if turn.calls else "stop"
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return {
        "id": f"c{index}",
        "object": "chat.completion",
        "model": "fake",
        "choices": [choice],
        "usage": USAGE,
    }


def chunks(turn: Turn, index: int) -> bytes:
    """`turn` as an event stream: text, tool calls, finish, usage, [DONE]."""
    base: dict[str, Any] = {"id": f"c{index}", "object": "chat.completion.chunk", "model": "fake"}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": turn.text}]
    if turn.calls:
        deltas.append({"tool_calls": _calls(turn, index)})
    events: list[dict[str, Any]] = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    finish = "tool_calls" if turn.calls else "stop"
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    events.append({**base, "choices": [], "usage": USAGE})
    body = b"".join(b"data: " + orjson.dumps(event) + b"\n\n" for event in events)
    return body + b"data: [DONE]\n\n"


def split_chunks(turn: Turn, index: int, shown: int) -> tuple[bytes, bytes]:
    """`turn` as an event stream in two parts: a delta with its first `shown` characters, then
    the rest (the other characters, the calls, finish, usage, [DONE])."""
    head = chunks(Turn(turn.text[:shown]), index).split(b"\n\n", 1)[0] + b"\n\n"
    return head, chunks(Turn(turn.text[shown:], turn.calls), index)


@define
class FakeModel:
    """The running server: its model string, the turns, and the requests it got."""

    turns: list[Turn]
    port: int = 0
    requests: list[dict[str, Any]] = field(factory=list)
    release: threading.Event = field(factory=threading.Event)
    arrived: threading.Condition = field(factory=threading.Condition)

    @property
    def model(self) -> str:
        """The `--model` string that points the CLI at this server."""
        return f"openai-compatible:fake@http://127.0.0.1:{self.port}/v1"

    def wait_for_requests(self, count: int, timeout: float = WAIT_LIMIT) -> bool:
        """True once `count` requests arrived (False after `timeout` seconds)."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.requests) >= count, timeout)

    def take(self, body: dict[str, Any]) -> tuple[Turn, int]:
        """Note a request; the turn that answers it, and its index."""
        with self.arrived:
            index = len(self.requests)
            self.requests.append(body)
            self.arrived.notify_all()
        return self.turns[min(index, len(self.turns) - 1)], index

    def answer(self, body: dict[str, Any]) -> tuple[bytes, str]:
        """The reply to one request, after a held turn's release."""
        return self.reply(body, *self.take(body))

    def reply(self, body: dict[str, Any], turn: Turn, index: int) -> tuple[bytes, str]:
        """The reply to one request noted as `index`, after a held turn's release."""
        if turn.hold:
            self.release.wait(WAIT_LIMIT)
        if body.get("stream"):
            return chunks(turn, index), "text/event-stream"
        return orjson.dumps(completion(turn, index)), "application/json"


def _handler(fake: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            request = orjson.loads(self.rfile.read(length))
            turn, index = fake.take(request)
            if request.get("stream") and turn.shown is not None:
                self._stream_slowly(turn, index, turn.shown)
                return
            body, kind = fake.reply(request, turn, index)
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                return  # the client left (a cancelled run)

        def _stream_slowly(self, turn: Turn, index: int, shown: int) -> None:
            """Send the first `shown` characters of the turn, wait for the release, then the
            rest (chunked: the length is not known up front)."""
            parts = split_chunks(turn, index, shown)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            try:
                for number, part in enumerate(parts):
                    if number:
                        fake.release.wait(WAIT_LIMIT)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                return  # the client left (an interrupted or cancelled run)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def fake_model(turns: Sequence[Turn]) -> Iterator[FakeModel]:
    """Serve `turns` on a free loopback port for the block."""
    fake = FakeModel(list(turns))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join()

"""Load: 200 concurrent streamed runs on one server process (AG-UI over loopback, a scripted
model, a tool per run), each client receiving its whole stream; 50 of them drop the connection
mid-stream and reconnect with `Last-Event-ID`, and lose nothing; no tool runs twice."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import anyio
import httpx
import orjson
import pytest

from reactloop import ReActLoop
from reactloop.messages import ToolMessage
from reactloop.models import ModelRequest
from reactloop.serve import ChatServer, DisconnectPolicy, ServeOptions
from reactloop.testing import FakeTool, FunctionModel, call, reply
from tests.serve.plain import read_until
from tests.serve.server import served

pytestmark = pytest.mark.anyio

RUNS = 200
RECONNECTING = 50
HANG = 120.0
ANSWER = "The count is in, and every one of these words arrives as its own delta event. " * 3


def answer(request: ModelRequest) -> Any:
    """Call `count` with the run's number (from the user's text), then answer in many words."""
    last = request.messages[-1]
    if isinstance(last, ToolMessage):
        return ANSWER
    number = int(re.findall(r"\d+", last.text)[-1])
    return reply("", call("count", n=number))


def frames_of(text: str) -> list[tuple[str | None, dict[str, Any]]]:
    """The complete SSE frames of a body read so far: (id or None, JSON payload)."""
    complete = text if text.endswith("\n\n") else text[: text.rfind("\n\n") + 2]
    found = []
    for block in complete.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines:
            found.append((lines.get("id"), orjson.loads(lines["data"])))
    return found


def numbered(frames: list[tuple[str | None, dict[str, Any]]]) -> list[tuple[str, Any]]:
    """The frames that carry an event id, as (id, payload): what a reconnect continues after."""
    return [(frame_id, payload) for frame_id, payload in frames if frame_id is not None]


def text_of(frames: list[tuple[str | None, dict[str, Any]]]) -> str:
    return "".join(p["delta"] for _, p in frames if p["type"] == "TEXT_MESSAGE_CONTENT")


class Clients:
    """The 200 clients against one server, and what each received."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.whole: dict[int, list[tuple[str | None, dict[str, Any]]]] = {}
        self.pieces: dict[int, tuple[list[Any], list[Any]]] = {}

    def body(self, n: int) -> dict[str, Any]:
        message = {"id": f"u{n}", "role": "user", "content": f"count run {n}"}
        return {"threadId": f"t{n}", "runId": f"r{n}", "messages": [message]}

    async def read_whole(self, n: int) -> None:
        response = await self.client.post("/ag-ui", json=self.body(n))
        assert response.status_code == 200
        self.whole[n] = frames_of(response.text)

    async def drop_and_reconnect(self, n: int) -> None:
        """Read until the tool call starts, go away, then ask for the rest after the last id."""
        async with self.client.stream("POST", "/ag-ui", json=self.body(n)) as response:
            first = frames_of(await read_until(response, '"TOOL_CALL_START"'))
        last_id = numbered(first)[-1][0]
        rest = await self.client.get(f"/ag-ui/runs/r{n}/events", headers={"last-event-id": last_id})
        assert rest.status_code == 200
        self.pieces[n] = (first, frames_of(rest.text))


async def test_200_concurrent_streams_each_whole_and_50_reconnects_lose_nothing() -> None:
    tool = FakeTool("count", result="counted")
    loop = ReActLoop(FunctionModel(answer), tools=[tool])
    options = ServeOptions(max_runs_per_user=RUNS, on_disconnect=DisconnectPolicy.KEEP_RUNNING)
    server = ChatServer(loop, options)
    limits = httpx.Limits(max_connections=RUNS + RECONNECTING, max_keepalive_connections=RUNS)
    async with (
        served(server.asgi()) as url,
        httpx.AsyncClient(base_url=url, limits=limits, timeout=HANG) as client,
    ):
        clients = Clients(client)
        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as group:
                for n in range(RUNS):
                    reading = clients.drop_and_reconnect if n < RECONNECTING else clients.read_whole
                    group.start_soon(reading, n)
            replays = {
                n: frames_of((await client.get(f"/ag-ui/runs/r{n}/events")).text)
                for n in range(RECONNECTING)
            }

    assert sorted(Counter(c["n"] for c in tool.calls).items()) == [(n, 1) for n in range(RUNS)]
    for n, frames in clients.whole.items():
        assert frames[0][1]["type"] == "RUN_STARTED" and frames[-1][1]["type"] == "RUN_FINISHED"
        assert text_of(frames) == ANSWER, n
    for n, (first, rest) in clients.pieces.items():
        assert numbered(first) + numbered(rest) == numbered(replays[n]), n
        assert rest[0][1]["type"] == "RUN_STARTED" and rest[-1][1]["type"] == "RUN_FINISHED"
        assert text_of(first) + text_of(rest) == ANSWER, n

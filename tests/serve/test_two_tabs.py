"""One chat open in two browser tabs (over HTTP on loopback, asyncio and trio): while the first
tab's run streams, the second tab's new message is refused with 409 and the `conflict` code
(the session runs one turn at a time), its resume (`GET /api/chat/{id}/stream`) is that same
run from its start, and a stale approval the second tab sends after the first tab's went
through gets the run as it was decided, not a second decision."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import orjson
import pytest

from reactloop.serve import ChatServer
from tests.serve.loops import FORECAST, stalling_loop, weather_loop
from tests.serve.plain import read_until
from tests.serve.server import served

pytestmark = pytest.mark.anyio


def ask(text: str, message_id: str) -> dict[str, Any]:
    """What the AI SDK's transport posts for a new message in chat `c1`."""
    question = {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": "c1", "messages": [question], "trigger": "submit-message"}


async def first_event(response: httpx.Response) -> str:
    """A streamed response read up to its first event's id (then dropped)."""
    return await read_until(response, "id: ")


def chunks(body: str) -> list[dict[str, Any]]:
    lines = [line[6:] for line in body.splitlines() if line.startswith("data: ")]
    return [orjson.loads(line) for line in lines if line != "[DONE]"]


async def test_a_second_tabs_message_while_the_first_streams_is_a_409_conflict() -> None:
    async with (
        served(ChatServer(stalling_loop()).asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as client,
    ):
        with anyio.fail_after(30):
            async with client.stream("POST", "/api/chat", json=ask("first", "m1")) as first:
                await first_event(first)  # the run has started
                second = await client.post("/api/chat", json=ask("second", "m2"))
                async with client.stream("GET", "/api/chat/c1/stream") as resumed:
                    resumed_first = await first_event(resumed)
                await client.post("/api/chat/c1/cancel")
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "conflict"
    assert resumed.status_code == 200 and resumed_first.startswith("id: ")


async def test_a_stale_denial_from_a_second_tab_gets_the_approved_run() -> None:
    async with (
        served(ChatServer(weather_loop()).asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as client,
    ):
        question = ask("Weather?", "m1")
        first = chunks((await client.post("/api/chat", json=question)).text)
        [asked] = [c for c in first if c["type"] == "tool-approval-request"]
        reloaded = (await client.get("/api/chat/c1/messages")).json()

        async def answer(message_id: str, approved: bool) -> list[dict[str, Any]]:
            part = {
                "type": "tool-get_weather",
                "toolCallId": asked["toolCallId"],
                "state": "approval-responded",
                "input": {"city": "Paris"},
                "approval": {"id": asked["approvalId"], "approved": approved},
            }
            reply = {"id": message_id, "role": "assistant", "parts": [part]}
            body = {**question, "messages": [*question["messages"], reply]}
            return chunks((await client.post("/api/chat", json=body)).text)

        await answer(first[0]["messageId"], approved=True)
        stale = await answer(reloaded[-1]["id"], approved=False)
    outcomes = [c for c in stale if c["type"].startswith("tool-output")]
    assert outcomes == [
        {
            "type": "tool-output-available",
            "toolCallId": asked["toolCallId"],
            "output": f"Paris: {FORECAST}",
        }
    ]

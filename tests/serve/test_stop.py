"""What docs/serving.md tells a `useChat` page about Stop, over real loopback sockets (asyncio
and trio), with a store (runs keep going when their client leaves): a page that only closes its
stream (the AI SDK's `stop()`) leaves its run going, so the chat's next message is a 409
conflict; with `POST /api/chat/{id}/cancel` as well, the run stops and the next message is
answered."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from reactloop.serve import ChatServer
from tests.serve.loops import stalling_loop
from tests.serve.plain import read_until
from tests.serve.server import served

pytestmark = pytest.mark.anyio


def ask(text: str, message_id: str) -> dict[str, Any]:
    question = {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": "c1", "messages": [question], "trigger": "submit-message"}


async def test_stop_alone_leaves_the_run_going_and_cancel_stops_it() -> None:
    async with (
        served(ChatServer(stalling_loop()).asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as client,
    ):
        with anyio.fail_after(30):
            async with client.stream("POST", "/api/chat", json=ask("first", "m1")) as first:
                await read_until(first, '"start-step"')  # then the page's stop() closes it
            refused = await client.post("/api/chat", json=ask("second", "m2"))
            cancelled = await client.post("/api/chat/c1/cancel")
            answered = await client.post("/api/chat", json=ask("second", "m2"))
            while answered.status_code == 409:  # the run stops at its next safe point
                await anyio.sleep(0.01)
                answered = await client.post("/api/chat", json=ask("second", "m2"))
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "conflict"
    assert cancelled.status_code == 204
    assert answered.status_code == 200 and '"delta":"again."' in answered.text

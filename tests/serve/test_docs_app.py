"""docs/serving.md's app, as a user builds it: a FastAPI app with `lifespan=server.lifespan`,
`server.mount(app)`, and an `identify` hook reading the user from `Authorization: Bearer`,
served by Hypercorn on loopback (asyncio and trio), and the real clients in Node sending that
header: ai 7's chat and @ag-ui/client's HttpAgent each complete a tool-using, approval-needing
conversation; a client without the header is refused (401) as its protocol's client shows it,
and another user cannot read the first one's chat (403)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.serve.docs_app import ANN, QUESTION, docs_app
from tests.serve.loops import FORECAST
from tests.serve.node import run_node
from tests.serve.server import served

pytestmark = pytest.mark.anyio


async def ai_chat(url: str, steps: list[dict[str, Any]], headers: dict[str, str]) -> Any:
    payload = {"url": f"{url}/api/chat", "chatId": "chat-1", "headers": headers, "steps": steps}
    return await run_node("ai_chat.mjs", payload)


async def test_the_ai_sdk_chat_completes_an_approval_conversation_with_the_docs_app() -> None:
    async with served(docs_app()) as url:
        seen = await ai_chat(url, [{"say": QUESTION}, {"answer": True}], ANN)
    asked, done = seen["steps"]
    assert asked["finishes"][0]["finishReason"] == "tool-calls"
    assert done["error"] is None and done["finishes"][0]["finishReason"] == "stop"
    [weather] = [p for p in seen["messages"][-1]["parts"] if p["type"] == "tool-get_weather"]
    assert weather["state"] == "output-available" and weather["output"] == f"Paris: {FORECAST}"


async def test_the_agui_client_completes_an_approval_conversation_with_the_docs_app() -> None:
    approve = {"status": "resolved", "payload": {"approved": True}}
    steps = [{"say": QUESTION, "runId": "run-1"}, {"answer": approve}]
    async with served(docs_app()) as url:
        payload = {"url": f"{url}/ag-ui", "threadId": "thread-1", "headers": ANN, "steps": steps}
        seen = await run_node("agui_chat.mjs", payload)
    asked, done = seen["steps"]
    assert asked["outcome"] == "interrupt" and done["outcome"] == "success"
    assert done["result"] == f"The forecast for Paris: {FORECAST}."


async def test_the_ai_sdk_chat_without_its_header_shows_the_401() -> None:
    async with served(docs_app()) as url:
        seen = await ai_chat(url, [{"say": QUESTION}], {})
    [step] = seen["steps"]
    assert step["status"] == "error" and "no user could be identified" in step["error"]
    assert [r["status"] for r in seen["requests"]] == [401]


async def test_another_user_cannot_read_the_chat() -> None:
    async with served(docs_app()) as url:
        await ai_chat(url, [{"say": QUESTION}], ANN)
        async with httpx.AsyncClient(base_url=url) as client:
            bob = await client.get(
                "/api/chat/chat-1/messages", headers={"authorization": "Bearer bob"}
            )
            ann = await client.get("/api/chat/chat-1/messages", headers=ANN)
    assert bob.status_code == 403 and bob.json()["error"]["code"] == "authentication"
    assert ann.status_code == 200 and len(ann.json()) == 2

"""`reactloop serve module:loop` speaks the AI SDK's UI message stream: ai 7's own chat
(AbstractChat with DefaultChatTransport and its default `/api/chat`, as `useChat` drives it), in
Node, asks the served loop a question, shows the held call's approval request, approves it with
`addToolApprovalResponse` (the chat resends by itself), and reads the tool's result and the
final answer in the same assistant message (asyncio and trio, the command run with `--trio`
under trio)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.test_cli_serve import serving
from tests.serve.loops import FORECAST
from tests.serve.node import run_node

pytestmark = pytest.mark.anyio


def _tool_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for part in message["parts"] if part["type"].startswith("tool-")]


async def test_the_ai_sdk_chat_completes_an_approval_conversation_with_reactloop_serve(
    anyio_backend: str,
) -> None:
    steps = [{"say": "What is the weather in Paris?"}, {"answer": True}]
    async with serving("tests.serve.loops:weather_loop", trio=anyio_backend == "trio") as (url, _):
        payload = {"url": f"{url.rstrip('/')}/api/chat", "chatId": "chat-1", "steps": steps}
        seen = await run_node("ai_chat.mjs", payload)
    asked, done = seen["steps"]
    assert [f["finishReason"] for f in asked["finishes"]] == ["tool-calls"]
    assert [f["finishReason"] for f in done["finishes"]] == ["stop"]
    assert asked["error"] is None and done["error"] is None
    assert [r["status"] for r in seen["requests"]] == [200, 200]
    user, answer = seen["messages"]
    assert user["role"] == "user" and answer["role"] == "assistant"
    [weather] = _tool_parts(answer)
    assert weather["type"] == "tool-get_weather" and weather["input"] == {"city": "Paris"}
    assert weather["state"] == "output-available" and weather["output"] == f"Paris: {FORECAST}"
    assert weather["approval"]["approved"] is True
    texts = [part["text"] for part in answer["parts"] if part["type"] == "text"]
    assert texts[-1] == f"The forecast for Paris: {FORECAST}."

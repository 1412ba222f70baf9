"""Very long texts through ai 7's own chat (in Node, against a ChatServer on loopback, asyncio
and trio): a message just under `max_body_bytes` reaches the model whole and its long answer
streams back whole; one over it is refused with 413 before the server reads it, and the chat
shows the rule it broke."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import ReActLoop
from reactloop.messages import UserMessage
from reactloop.models import ModelRequest
from reactloop.serve import ChatServer, ServeOptions
from reactloop.testing import FunctionModel
from tests.serve.node import run_node
from tests.serve.server import served

pytestmark = pytest.mark.anyio

LIMIT = 256 * 1024


def echo_server() -> ChatServer:
    """A server whose model says back the user's last text, taking bodies up to LIMIT."""

    def answer(request: ModelRequest) -> str:
        [*_, last] = [m for m in request.messages if isinstance(m, UserMessage)]
        return last.text

    loop = ReActLoop(FunctionModel(answer))
    return ChatServer(loop, ServeOptions(max_body_bytes=LIMIT))


async def say(text: str) -> Any:
    async with served(echo_server().asgi()) as url:
        payload = {"url": f"{url}/api/chat", "chatId": "chat-1", "steps": [{"say": text}]}
        return await run_node("ai_chat.mjs", payload)


async def test_a_text_under_the_limit_goes_and_comes_back_whole() -> None:
    text = "".join(f"line {n}: ünïcödé 🌍\n" for n in range(8_000))  # ~200 KB as JSON
    seen = await say(text)
    [step] = seen["steps"]
    assert step["error"] is None
    texts = [p["text"] for p in seen["messages"][-1]["parts"] if p["type"] == "text"]
    assert "".join(texts) == text


async def test_a_text_over_the_limit_is_a_413_the_chat_shows() -> None:
    seen = await say("x" * (LIMIT + 1))
    [step] = seen["steps"]
    assert step["status"] == "error" and "max_body_bytes" in step["error"]
    assert [r["status"] for r in seen["requests"]] == [413]

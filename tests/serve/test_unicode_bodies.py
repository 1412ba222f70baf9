"""Text as browsers post it, through the real clients (ai 7's chat and @ag-ui/client's
HttpAgent in Node, against a ChatServer on loopback, asyncio and trio): scripts, emoji,
combining and invisible characters reach the model and come back as they were, and a text cut
in the middle of an emoji (a lone UTF-16 surrogate, which `JSON.stringify` writes as `\\ud83d`)
is repaired to U+FFFD instead of the whole turn being refused as not JSON."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import ReActLoop
from reactloop.messages import UserMessage
from reactloop.models import ModelRequest
from reactloop.serve import ChatServer
from reactloop.stores import MemoryStore
from reactloop.testing import FunctionModel
from tests.serve.node import run_node
from tests.serve.server import served

pytestmark = pytest.mark.anyio

WORLD = "مرحبا 👋🏽 e\u0301 \u200b\u202e עברית 日本語"
CUT = "a cut emoji \ud83d"  # the high half of 😀 alone, as a cut-off string holds it


def echo_loop() -> ReActLoop[Any]:
    """A loop whose model says back the user's last text."""

    def answer(request: ModelRequest) -> str:
        [*_, last] = [m for m in request.messages if isinstance(m, UserMessage)]
        return f"you said: {last.text}"

    return ReActLoop(FunctionModel(answer), store=MemoryStore())


async def ai_answer(text: str) -> tuple[dict[str, Any], str]:
    """The chat's step and the answer's text after saying `text`."""
    async with served(ChatServer(echo_loop()).asgi()) as url:
        payload = {"url": f"{url}/api/chat", "chatId": "chat-1", "steps": [{"say": text}]}
        seen = await run_node("ai_chat.mjs", payload)
    [step] = seen["steps"]
    texts = [p["text"] for p in seen["messages"][-1]["parts"] if p["type"] == "text"]
    return step, "".join(texts)


async def agui_answer(text: str) -> dict[str, Any]:
    """What HttpAgent saw after saying `text`."""
    async with served(ChatServer(echo_loop()).asgi()) as url:
        steps = [{"say": text, "runId": "run-1"}]
        payload = {"url": f"{url}/ag-ui", "threadId": "thread-1", "steps": steps}
        seen: dict[str, Any] = await run_node("agui_chat.mjs", payload)
    return seen


async def test_any_script_and_emoji_round_trip_through_the_ai_sdk_chat() -> None:
    step, answer = await ai_answer(WORLD)
    assert step["error"] is None and answer == f"you said: {WORLD}"


async def test_a_lone_surrogate_from_the_ai_sdk_chat_is_repaired_not_refused() -> None:
    step, answer = await ai_answer(CUT)
    assert step["error"] is None
    assert answer == "you said: a cut emoji \ufffd"


async def test_a_lone_surrogate_from_the_agui_client_is_repaired_not_refused() -> None:
    seen = await agui_answer(CUT)
    [step] = seen["steps"]
    assert step["outcome"] == "success" and "failed" not in step
    assert step["result"] == "you said: a cut emoji \ufffd"

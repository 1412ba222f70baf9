"""A served run that fails, as the real clients read it (ai 7's chat and @ag-ui/client's
HttpAgent in Node, against a ChatServer served by Hypercorn on loopback, asyncio and trio): a
model error is the protocol's error form (the chat's `error`, AG-UI's RUN_ERROR) with the
error's code and message, no traceback, and no API key the message quoted; a tool's error
that quotes one shows it masked too."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import ReActLoop, tool
from reactloop.errors import AuthenticationError
from reactloop.messages import ToolMessage
from reactloop.models import ModelRequest
from reactloop.serve import ChatServer
from reactloop.stores import MemoryStore
from reactloop.testing import FunctionModel, ScriptedModel, call, reply
from tests.serve.node import run_node
from tests.serve.server import served

pytestmark = pytest.mark.anyio

KEY = "sk-proj-Zx81kQ02mLw9SECRETpart"
REFUSED = f"Incorrect API key provided: {KEY}. Send Authorization: Bearer {KEY}"


def refused_loop() -> ReActLoop[Any]:
    """A loop whose model refuses its key, quoting it (as some providers' messages do)."""
    return ReActLoop(ScriptedModel([AuthenticationError(REFUSED)] * 2), store=MemoryStore())


@tool
def connect(database: str) -> str:
    """Connect to a database (always fails, quoting its credentials)."""
    raise RuntimeError(f"cannot reach {database} with api_key={KEY}")


def failing_tool_loop() -> ReActLoop[Any]:
    """A loop whose one tool fails quoting a key; the model then says the tool failed."""

    def answer(request: ModelRequest) -> Any:
        if isinstance(request.messages[-1], ToolMessage):
            return "The database is unreachable."
        return reply("Connecting.", call("connect", database="orders"))

    return ReActLoop(FunctionModel(answer), tools=[connect], store=MemoryStore())


async def ai_chat(server: ChatServer, text: str) -> Any:
    async with served(server.asgi()) as url:
        payload = {"url": f"{url}/api/chat", "chatId": "chat-1", "steps": [{"say": text}]}
        return await run_node("ai_chat.mjs", payload)


async def agui_chat(server: ChatServer, text: str) -> Any:
    async with served(server.asgi()) as url:
        steps = [{"say": text, "runId": "run-1"}]
        payload = {"url": f"{url}/ag-ui", "threadId": "thread-1", "steps": steps}
        return await run_node("agui_chat.mjs", payload)


async def test_a_model_error_is_the_ai_sdk_chats_error_with_the_key_masked() -> None:
    seen = await ai_chat(ChatServer(refused_loop()), "Hello?")
    [step] = seen["steps"]
    assert step["status"] == "error"
    assert step["error"].startswith("authentication: Incorrect API key provided: ***")
    assert KEY not in str(seen) and "Traceback" not in str(seen)


async def test_a_model_error_is_agui_run_error_with_the_key_masked() -> None:
    seen = await agui_chat(ChatServer(refused_loop()), "Hello?")
    [step] = seen["steps"]
    assert step["error"]["code"] == "authentication"
    assert step["error"]["message"].startswith("Incorrect API key provided: ***")
    assert KEY not in str(seen) and "Traceback" not in str(seen)


async def test_a_tool_error_quoting_a_key_shows_it_masked_to_the_ai_sdk_chat() -> None:
    seen = await ai_chat(ChatServer(failing_tool_loop()), "Check the orders database")
    [step] = seen["steps"]
    assert step["error"] is None
    _, answer = seen["messages"]
    [part] = [p for p in answer["parts"] if p["type"] == "tool-connect"]
    assert part["state"] == "output-error" and "api_key=***" in part["errorText"]
    assert KEY not in str(seen)


async def test_a_tool_error_quoting_a_key_shows_it_masked_to_the_agui_client() -> None:
    seen = await agui_chat(ChatServer(failing_tool_loop()), "Check the orders database")
    [result] = [m for m in seen["messages"] if m["role"] == "tool"]
    assert "api_key=***" in result["content"]
    assert KEY not in str(seen)

"""What a user serving an ordinary loop meets through the AI SDK's own chat (ai 7, in Node,
against a ChatServer served by Hypercorn on loopback, asyncio and trio): a loop with a
structured output shows its answer in the `finish` chunk's metadata, not as a tool part left
streaming forever, and a reloaded page shows no such part either; an image attached in the
chat reaches the model as an `ImagePart`."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import pytest

from reactloop import ReActLoop
from reactloop.messages import ImagePart, UserMessage
from reactloop.models import ModelRequest
from reactloop.serve import ChatServer
from reactloop.stores import MemoryStore
from reactloop.testing import FunctionModel, ScriptedModel, call, reply
from tests.serve.node import run_node
from tests.serve.server import served

pytestmark = pytest.mark.anyio


@dataclass
class Weather:
    city: str
    degrees: int


def weather_report_loop() -> ReActLoop[Weather]:
    """A loop whose answer is a `Weather` (the model calls the output tool with it)."""
    answer = reply("Here it is.", call("final_answer", city="Paris", degrees=21))
    return ReActLoop(ScriptedModel([answer]), store=MemoryStore()).with_output(Weather)


async def chat(server: ChatServer, steps: list[dict[str, Any]]) -> Any:
    """What the AI SDK's chat saw, taking `steps` against `server` (see js/ai_chat.mjs)."""
    async with served(server.asgi()) as url:
        payload = {"url": f"{url}/api/chat", "chatId": "chat-1", "steps": steps}
        return await run_node("ai_chat.mjs", payload)


async def test_a_structured_answer_is_the_finish_metadata_and_no_tool_part() -> None:
    seen = await chat(ChatServer(weather_report_loop()), [{"say": "Weather in Paris?"}])
    [step] = seen["steps"]
    assert step["error"] is None and step["finishes"][0]["finishReason"] == "stop"
    _, answer = seen["messages"]
    assert answer["metadata"]["output"] == {"city": "Paris", "degrees": 21}
    shown = [(p["type"], p.get("text")) for p in answer["parts"] if p["type"] != "step-start"]
    assert shown == [("text", "Here it is.")]


async def test_a_reloaded_structured_answer_shows_no_output_tool_part() -> None:
    seen = await chat(
        ChatServer(weather_report_loop()), [{"say": "Weather in Paris?"}, {"reload": True}]
    )
    _, answer = seen["messages"]
    assert [p["type"] for p in answer["parts"]] == ["step-start", "text"]


PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)


async def test_an_image_attached_in_the_chat_reaches_the_model_as_an_image_part() -> None:
    asked: list[ModelRequest] = []

    def answer(request: ModelRequest) -> str:
        asked.append(request)
        return "A tiny picture."

    server = ChatServer(ReActLoop(FunctionModel(answer), store=MemoryStore()))
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    image = {"type": "file", "mediaType": "image/png", "url": url, "filename": "dot.png"}
    seen = await chat(server, [{"say": "What is this?", "files": [image]}])
    assert seen["steps"][0]["error"] is None
    [request] = asked
    [user] = [m for m in request.messages if isinstance(m, UserMessage)]
    [picture] = [p for p in user.parts if isinstance(p, ImagePart)]
    assert picture.data == PNG and picture.media_type == "image/png"
    assert user.text == "What is this?"

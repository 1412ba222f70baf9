"""The AI SDK end to end: ai 7.0.173's own chat (AbstractChat with DefaultChatTransport, as
useChat drives it; tests/serve/js/ai_chat.mjs), in Node, chats with a ChatServer served by
Hypercorn on loopback (asyncio and trio). A question runs a tool that needs approval: the
client shows the approval request, `addToolApprovalResponse` answers it and the chat resends by
itself (`lastAssistantMessageIsCompleteWithApprovalResponses`), and the tool's result and the
answer arrive in the same assistant message; a denial round-trips the same way; a response cut
mid-run is resumed with `resumeStream()` (GET /{chat_id}/stream), and the client ends with the
whole message, nothing lost or run twice."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import pytest

from reactloop import ReActLoop, tool
from reactloop.approval import ApprovalOptions
from reactloop.messages import AssistantMessage, TextPart, ToolMessage, UserMessage
from reactloop.models import ModelRequest
from reactloop.serve import ChatServer
from reactloop.stores import MemoryStore
from reactloop.testing import FunctionModel, call, reply
from tests.serve.node import run_node
from tests.serve.server import served

pytestmark = pytest.mark.anyio

QUESTION = "What is the weather in Paris?"
THOUGHT = "The user asks about the weather; the tool knows it."

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def weather_loop(
    ran: list[str],
    *,
    approval: bool,
    gate: anyio.Event | None = None,
    asked: list[ModelRequest] | None = None,
) -> Any:
    """A loop that calls `get_weather` for Paris (held for approval when `approval`; waiting
    for `gate` when given) and then says what came back; `ran` records each real run. With
    `asked` (the model's requests recorded there) it has no store: a paused run is kept as a
    signed state token."""

    @tool(requires_approval=approval)
    async def get_weather(city: str) -> str:
        """Today's weather in a city."""
        if gate is not None:
            await gate.wait()
        ran.append(city)
        return f"{city}: 21°C, sunny"

    def answer(request: ModelRequest) -> Any:
        if asked is not None:
            asked.append(request)
        last = request.messages[-1]
        if isinstance(last, ToolMessage):
            return f"Not run: {last.text}" if last.is_error else f"The forecast for {last.text}."
        return reply("Let me check.", call("get_weather", city="Paris"), reasoning=THOUGHT)

    if asked is not None:
        sealed = ApprovalOptions(state_key="a test key of at least thirty-two bytes")
        return ReActLoop(FunctionModel(answer), tools=[get_weather], approval=sealed)
    return ReActLoop(FunctionModel(answer), tools=[get_weather], store=MemoryStore())


async def chat(app: Any, steps: list[dict[str, Any]]) -> Any:
    """What the AI SDK's chat saw, taking `steps` against `app` (see ai_chat.mjs)."""
    async with served(app) as url:
        payload = {"url": f"{url}/api/chat", "chatId": "chat-1", "steps": steps}
        return await run_node("ai_chat.mjs", payload)


def parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts a page renders (step boundaries left out)."""
    return [p for p in message["parts"] if p["type"] != "step-start"]


def tool_part(message: dict[str, Any]) -> dict[str, Any]:
    [part] = [p for p in message["parts"] if p["type"] == "tool-get_weather"]
    found: dict[str, Any] = part
    return found


async def test_an_approval_round_trip_runs_the_call_once_and_ends_in_the_same_message() -> None:
    ran: list[str] = []
    server = ChatServer(weather_loop(ran, approval=True))
    seen = await chat(server.asgi(), [{"say": QUESTION}, {"answer": True}])
    asked, done = seen["steps"]
    assert asked["error"] is None and asked["finishes"][0]["finishReason"] == "tool-calls"
    assert done["error"] is None and done["finishes"] == [
        {"finishReason": "stop", "isError": False, "isDisconnect": False, "isAbort": False}
    ]
    user, answer = seen["messages"]
    assert user["role"] == "user" and user["parts"] == [{"type": "text", "text": QUESTION}]
    shown = [(p["type"], p.get("text"), p.get("state")) for p in parts(answer)]
    assert shown == [
        ("reasoning", THOUGHT, "done"),
        ("text", "Let me check.", "done"),
        ("tool-get_weather", None, "output-available"),
        ("text", "The forecast for Paris: 21°C, sunny.", "done"),
    ]
    part = tool_part(answer)
    assert part["input"] == {"city": "Paris"} and part["output"] == "Paris: 21°C, sunny"
    assert part["approval"]["approved"] is True
    assert ran == ["Paris"]


async def test_the_chat_resends_the_answered_approval_by_itself() -> None:
    server = ChatServer(weather_loop([], approval=True))
    seen = await chat(server.asgi(), [{"say": QUESTION}, {"answer": True}])
    first, resent = seen["requests"]
    assert (first["method"], first["path"], resent["method"]) == ("POST", "/api/chat", "POST")
    [posted] = [
        p for p in resent["body"]["messages"][-1]["parts"] if p["type"] == "tool-get_weather"
    ]
    assert posted["state"] == "approval-responded" and posted["approval"]["approved"] is True
    assert resent["body"]["messageId"] == seen["messages"][1]["id"]


async def test_a_denial_round_trip_runs_nothing_and_shows_the_call_denied() -> None:
    ran: list[str] = []
    server = ChatServer(weather_loop(ran, approval=True))
    seen = await chat(server.asgi(), [{"say": QUESTION}, {"answer": False, "reason": "not now"}])
    assert seen["steps"][1]["error"] is None
    _, answer = seen["messages"]
    part = tool_part(answer)
    assert part["state"] == "output-denied" and part["approval"]["approved"] is False
    assert parts(answer)[-1]["text"].startswith("Not run: not run: a reviewer denied this call")
    assert "not now" in parts(answer)[-1]["text"]
    assert ran == []


async def test_a_reloaded_page_answers_the_approval_and_the_run_goes_on_in_its_message() -> None:
    ran: list[str] = []
    server = ChatServer(weather_loop(ran, approval=True))
    steps: list[dict[str, Any]] = [{"say": QUESTION}, {"reload": True}, {"answer": True}]
    seen = await chat(server.asgi(), steps)
    _, reloaded, resent = seen["requests"]
    assert (reloaded["path"], reloaded["status"]) == ("/api/chat/chat-1/messages", 200)
    assert seen["steps"][2]["error"] is None
    _, answer = seen["messages"]
    assert resent["body"]["messageId"] == answer["id"]  # the reloaded message, gone on with
    part = tool_part(answer)
    assert part["state"] == "output-available" and part["output"] == "Paris: 21°C, sunny"
    assert parts(answer)[-1]["text"] == "The forecast for Paris: 21°C, sunny."
    assert [p["type"] for p in parts(answer)].count("tool-get_weather") == 1
    assert ran == ["Paris"]


async def test_without_a_store_the_round_trip_works_and_history_is_the_turns_text() -> None:
    ran: list[str] = []
    asked: list[ModelRequest] = []
    server = ChatServer(weather_loop(ran, approval=True, asked=asked))
    steps: list[dict[str, Any]] = [{"say": QUESTION}, {"answer": True}, {"say": "And tomorrow?"}]
    seen = await chat(server.asgi(), steps)
    assert [step["error"] for step in seen["steps"]] == [None, None, None]
    assert tool_part(seen["messages"][1])["state"] == "output-available"
    assert ran == ["Paris"]
    earlier = asked[-1].messages[:-1]  # the third turn's history, from the posted transcript
    assert earlier == (
        UserMessage(QUESTION),
        AssistantMessage(
            parts=(TextPart("Let me check."), TextPart("The forecast for Paris: 21°C, sunny."))
        ),
    )


async def test_regenerate_asks_again_in_a_run_of_its_own() -> None:
    ran: list[str] = []
    server = ChatServer(weather_loop(ran, approval=False))
    seen = await chat(server.asgi(), [{"say": QUESTION}, {"regenerate": True}])
    _, again = seen["requests"]
    assert again["body"]["trigger"] == "regenerate-message"
    _, answer = seen["messages"]
    assert parts(answer)[-1]["text"] == "The forecast for Paris: 21°C, sunny."
    assert ran == ["Paris", "Paris"]  # asked again, not the first answer replayed


def releasing_on_resume(app: Any, gate: anyio.Event) -> Any:
    """`app`, opening `gate` once a resume GET (/{chat_id}/stream) has begun its answer: the
    run waits until the client has reconnected, so it is still streaming when it does."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        resuming = scope["type"] == "http" and scope["path"].endswith("/stream")

        async def sending(message: MutableMapping[str, Any]) -> None:
            await send(message)
            if resuming and message["type"] == "http.response.start":
                gate.set()

        await app(scope, receive, sending if resuming else send)

    return wrapped


async def test_a_dropped_stream_is_resumed_whole_and_nothing_runs_twice() -> None:
    ran: list[str] = []
    gate = anyio.Event()
    server = ChatServer(weather_loop(ran, approval=False, gate=gate))
    app = releasing_on_resume(server.asgi(), gate)
    steps: list[dict[str, Any]] = [
        {"say": QUESTION, "dropAfter": "tool-input-available"},
        {"resume": True},
    ]
    seen = await chat(app, steps)
    dropped, resumed = seen["steps"]
    assert dropped["finishes"][0]["isDisconnect"] is True
    assert resumed["error"] is None and resumed["finishes"][0]["finishReason"] == "stop"
    post, get = seen["requests"]
    assert post["cut"] == "tool-input-available"
    assert (get["method"], get["path"], get["status"]) == ("GET", "/api/chat/chat-1/stream", 200)
    _, answer = seen["messages"]
    shown = [(p["type"], p.get("text"), p.get("state")) for p in parts(answer)]
    assert shown == [
        ("reasoning", THOUGHT, "done"),
        ("text", "Let me check.", "done"),
        ("tool-get_weather", None, "output-available"),
        ("text", "The forecast for Paris: 21°C, sunny.", "done"),
    ]
    assert ran == ["Paris"]


async def test_a_resume_with_no_run_streaming_finds_nothing() -> None:
    server = ChatServer(weather_loop([], approval=False))
    seen = await chat(server.asgi(), [{"resume": True}])
    [get] = seen["requests"]
    assert (get["path"], get["status"]) == ("/api/chat/chat-1/stream", 204)
    assert seen["steps"] == [{"status": "ready", "error": None, "finishes": []}]
    assert seen["messages"] == []

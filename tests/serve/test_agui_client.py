"""AG-UI end to end: @ag-ui/client 1.0.0's own HttpAgent, in Node, chats with a ChatServer
served by Hypercorn on loopback (asyncio and trio). A question runs a tool that needs approval:
the run ends with RUN_FINISHED's interrupt outcome, the client's next run answers it in
`resume` (approve, deny, edit, cancel; with a store or without one), and the tool's result and
the final answer arrive; an external tool is run by the client and its result sent back. A
response cut mid-message is continued with `Last-Event-ID` (an HttpAgent subclass sends it from
requestInit), for a new run and for a resumed one, and the client ends up with the whole
message, nothing lost or repeated."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import ReActLoop, tool
from reactloop.approval import ApprovalOptions
from reactloop.messages import ToolMessage
from reactloop.models import ModelRequest
from reactloop.serve import ChatServer
from reactloop.stores import MemoryStore
from reactloop.testing import FakeTool, FunctionModel, call, reply
from tests.serve.node import run_node
from tests.serve.server import served

pytestmark = pytest.mark.anyio

QUESTION = "What is the weather in Paris?"
THOUGHT = "The user asks about the weather; the tool knows it."
KEY = "a-test-state-key-of-at-least-32-bytes"


def weather_server(*, store: bool = True) -> tuple[ChatServer, list[str]]:
    """A server whose loop calls `get_weather` (each call held for approval) and then says what
    came back; the list records each city the tool really ran for. Without a store a paused
    run is held as its signed state token, in the server's memory."""
    ran: list[str] = []

    @tool(requires_approval=True)
    def get_weather(city: str) -> str:
        """Today's weather in a city (a person approves each call)."""
        ran.append(city)
        return f"{city}: 21°C, sunny"

    def answer(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if isinstance(last, ToolMessage):
            return f"Not run: {last.text}" if last.is_error else f"The forecast for {last.text}."
        return reply(
            "Let me check the weather.", call("get_weather", city="Paris"), reasoning=THOUGHT
        )

    kept = {"store": MemoryStore()} if store else {"approval": ApprovalOptions(state_key=KEY)}
    loop = ReActLoop(FunctionModel(answer), tools=[get_weather], **kept)
    return ChatServer(loop), ran


async def chat(server: ChatServer, steps: list[dict[str, Any]]) -> Any:
    """What the AG-UI client saw, taking `steps` against `server` (see agui_chat.mjs)."""
    async with served(server.asgi()) as url:
        payload = {"url": f"{url}/ag-ui", "threadId": "thread-1", "steps": steps}
        return await run_node("agui_chat.mjs", payload)


def answered(payload: dict[str, Any] | None, status: str = "resolved") -> dict[str, Any]:
    """A step answering every open interrupt with `payload`, on a new AG-UI run."""
    response: dict[str, Any] = {"status": status}
    if payload is not None:
        response["payload"] = payload
    return {"answer": response, "runId": "run-2"}


@pytest.mark.parametrize("store", [True, False], ids=["store", "no-store"])
async def test_the_client_approves_a_held_call_and_gets_its_result_and_the_answer(
    store: bool,
) -> None:
    server, ran = weather_server(store=store)
    seen = await chat(server, [{"say": QUESTION, "runId": "run-1"}, answered({"approved": True})])
    asked, done = seen["steps"]
    assert "failed" not in asked and "failed" not in done
    assert asked["outcome"] == "interrupt"
    [held] = asked["interrupts"]
    assert (held["reason"], held["id"]) == ("tool_call", held["toolCallId"])
    assert held["responseSchema"]["required"] == ["approved"]
    assert done["outcome"] == "success"
    assert done["result"] == "The forecast for Paris: 21°C, sunny."
    assert "TOOL_CALL_START" not in done["types"]  # the call is the first run's, answered here
    assert ran == ["Paris"]  # the approved call ran exactly once
    user, reasoning, asking, result, final = seen["messages"]
    assert (user["role"], user["content"]) == ("user", QUESTION)
    assert (reasoning["role"], reasoning["content"]) == ("reasoning", THOUGHT)
    assert asking["content"] == "Let me check the weather."
    [tool_call] = asking["toolCalls"]
    assert tool_call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert (result["role"], result["toolCallId"]) == ("tool", tool_call["id"])
    assert result["content"] == "Paris: 21°C, sunny"
    assert final["content"] == "The forecast for Paris: 21°C, sunny."
    assert seen["state"]["status"] == "completed" and seen["state"]["pending"] == []


async def test_a_denial_reaches_the_model_and_nothing_runs() -> None:
    server, ran = weather_server()
    denial = {"approved": False, "reason": "not today"}
    seen = await chat(server, [{"say": QUESTION, "runId": "run-1"}, answered(denial)])
    done = seen["steps"][1]
    assert done["outcome"] == "success" and ran == []
    result = next(m for m in seen["messages"] if m["role"] == "tool")
    assert "not today" in result["content"]
    assert seen["messages"][-1]["content"] == f"Not run: {result['content']}"


async def test_an_edit_runs_the_call_with_the_edited_arguments() -> None:
    server, ran = weather_server()
    edit = {"approved": True, "editedArgs": {"city": "Oslo"}}
    seen = await chat(server, [{"say": QUESTION, "runId": "run-1"}, answered(edit)])
    assert seen["steps"][1]["result"] == "The forecast for Oslo: 21°C, sunny."
    assert ran == ["Oslo"]


async def test_a_cancelled_interrupt_denies_the_call() -> None:
    server, ran = weather_server()
    seen = await chat(server, [{"say": QUESTION, "runId": "run-1"}, answered(None, "cancelled")])
    assert seen["steps"][1]["outcome"] == "success" and ran == []
    assert seen["steps"][1]["pendingInterrupts"] == []


async def test_a_dropped_response_continues_after_its_last_event_id() -> None:
    server, ran = weather_server()
    cut = {"type": "TEXT_MESSAGE_CONTENT", "count": 1}
    steps: list[dict[str, Any]] = [
        {"say": QUESTION, "runId": "run-1", "dropAfter": cut},
        {"reconnect": True, "runId": "run-1"},
        answered({"approved": True}),
    ]
    seen = await chat(server, steps)
    dropped, continued, done = seen["steps"]
    assert dropped["outcome"] is None  # the first response ended before its run did
    assert dropped["sentLastEventId"] is None
    assert continued["sentLastEventId"] is not None
    assert "failed" not in continued, continued.get("failed")
    assert continued["types"][:2] == ["RUN_STARTED", "STEP_STARTED"]
    assert "TEXT_MESSAGE_START" in continued["types"]  # the open message, re-opened
    assert continued["outcome"] == "interrupt"
    assert done["result"] == "The forecast for Paris: 21°C, sunny."
    assert ran == ["Paris"]  # one run, one call: the reconnect started nothing
    assistant = [m for m in seen["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in assistant] == [
        "Let me check the weather.",
        "The forecast for Paris: 21°C, sunny.",
    ]
    assert len(assistant[0]["toolCalls"]) == 1


async def test_a_dropped_resumed_response_continues_when_its_answers_are_sent_again() -> None:
    """The client repeats its resume (same runId, same answers) with `Last-Event-ID`: the
    answers are not applied twice, the stream goes on where it broke."""
    server, ran = weather_server()
    approve = {"status": "resolved", "payload": {"approved": True}}
    cut = {"type": "TEXT_MESSAGE_CONTENT", "count": 2}
    steps: list[dict[str, Any]] = [
        {"say": QUESTION, "runId": "run-1"},
        {"answer": approve, "runId": "run-2", "dropAfter": cut},
        {"answer": approve, "runId": "run-2", "reconnect": True},
    ]
    seen = await chat(server, steps)
    _, dropped, continued = seen["steps"]
    assert dropped["outcome"] is None and continued["sentLastEventId"] is not None
    assert "failed" not in continued, continued.get("failed")
    assert "TOOL_CALL_RESULT" not in continued["types"]  # the client has it already
    assert continued["result"] == "The forecast for Paris: 21°C, sunny."
    assert ran == ["Paris"]
    assert [m["content"] for m in seen["messages"] if m["role"] == "assistant"] == [
        "Let me check the weather.",
        "The forecast for Paris: 21°C, sunny.",
    ]


async def test_the_client_runs_an_external_tool_and_sends_back_its_result() -> None:
    locate = FakeTool("locate", external=True)

    def answer(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if isinstance(last, ToolMessage):
            return f"You are in {last.text}."
        return call("locate")

    server = ChatServer(ReActLoop(FunctionModel(answer), tools=[locate], store=MemoryStore()))
    result = {"status": "resolved", "payload": {"result": "Oslo"}}
    seen = await chat(server, [{"say": "Where am I?", "runId": "run-1"}, {"answer": result}])
    asked, done = seen["steps"]
    [held] = asked["interrupts"]
    assert held["reason"] == "reactloop:external_tool"
    assert held["responseSchema"]["properties"].keys() == {"result", "error"}
    assert done["result"] == "You are in Oslo." and locate.calls == []  # it ran in the client

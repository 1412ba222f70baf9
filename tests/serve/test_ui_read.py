"""The encoder's bytes as the AI SDK's own client reads them: tests/serve/js/ui_read.mjs parses
them with `parseJsonEventStream` + `uiMessageChunkSchema` (what `DefaultChatTransport` does with
a response) and folds the chunks with `readUIMessageStream` (what `useChat` does), in Node, with
the `ai` package the lockfile pins. What is checked is the UIMessage a page would render."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import ReActLoop
from reactloop._core import (
    ModelRetrying,
    RunStarted,
    StepStarted,
    TextStreamed,
    ToolCallStreamed,
)
from reactloop._errors import ErrorCode
from reactloop._serve import StreamContext, UIStreamEncoder
from reactloop.testing import ScriptedModel, call
from tests.serve.node import run_node
from tests.serve.ui_runs import (
    APPROVE,
    DENY,
    RUN,
    THOUGHT,
    broken,
    encode,
    events_of,
    paying_loop,
    result_of,
    resumed_events,
)

pytestmark = pytest.mark.anyio


async def read(sse: bytes, message: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the client made of `sse` (continuing `message` when given): the schema accepted
    every chunk and the reader reported no error; its last UIMessage."""
    seen = await run_node("ui_read.mjs", {"sse": sse.decode(), "message": message})
    assert seen["invalid"] == [] and seen["errors"] == []
    last: dict[str, Any] = seen["messages"][-1]
    return last


def tool_parts(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["type"]: p for p in message["parts"] if p["type"].startswith("tool-")}


async def paused() -> tuple[ReActLoop[Any], Any, dict[str, Any]]:
    loop = paying_loop()
    events = await events_of(loop, "Pay Bob 5")
    return loop, result_of(events), await read(encode(events))


async def test_the_client_shows_one_assistant_message_of_the_run() -> None:
    _, _, message = await paused()
    assert message["id"] == f"{RUN}-assistant" and message["role"] == "assistant"
    assert message["parts"][0] == {"type": "step-start"}


async def test_the_client_shows_the_text_and_the_reasoning_done() -> None:
    _, _, message = await paused()
    texts = [(p["type"], p["text"], p["state"]) for p in message["parts"] if "text" in p]
    assert texts == [("reasoning", THOUGHT, "done"), ("text", "Checking first.", "done")]


async def test_the_client_shows_a_tool_call_with_its_input_and_output() -> None:
    _, _, message = await paused()
    part = tool_parts(message)["tool-balance"]
    assert part["state"] == "output-available"
    assert part["input"] == {"account": "main"} and part["output"] == "main: 120"


async def test_the_client_shows_a_held_call_as_approval_requested() -> None:
    _, result, message = await paused()
    part = tool_parts(message)["tool-transfer"]
    assert part["state"] == "approval-requested"
    assert part["input"] == {"to": "bob", "amount": 5}
    assert part["approval"]["id"] == result.pending[0].call_id


async def test_the_client_reads_the_finish_metadata() -> None:
    _, _, message = await paused()
    assert message["metadata"]["stopReason"] == "awaiting_approval"
    assert message["metadata"]["runId"] == RUN


async def test_the_client_shows_a_failed_tool_as_output_error() -> None:
    loop = ReActLoop(ScriptedModel([call("broken", account="x"), "sorry"]), tools=[broken])
    message = await read(encode(await events_of(loop, "Go")))
    part = tool_parts(message)["tool-broken"]
    assert part["state"] == "output-error" and "no account x" in part["errorText"]


async def test_the_client_drops_what_a_failed_model_attempt_streamed() -> None:
    retry = ModelRetrying(attempt=1, code=ErrorCode.RATE_LIMITED, delay=0.5, retries_left=1)
    events: list[Any] = [RunStarted(RUN, "Hi"), StepStarted(1), TextStreamed("Half an ans")]
    events += [ToolCallStreamed(0, '{"acc', name="balance", call_id="c9"), retry]
    events += [TextStreamed("A whole answer.")]
    message = await read(encode(events, close=False))
    assert message["parts"] == [
        {"type": "step-start"},
        {"type": "text", "text": "A whole answer.", "state": "streaming"},
    ]


def answered(message: dict[str, Any], approved: bool) -> dict[str, Any]:
    """The message as `addToolApprovalResponse` leaves it (approval-responded)."""
    parts = [
        {
            **part,
            "state": "approval-responded",
            "approval": {**part["approval"], "approved": approved},
        }
        if part.get("state") == "approval-requested"
        else part
        for part in message["parts"]
    ]
    return {**message, "parts": parts}


async def continued_message(decision: Any, approved: bool) -> dict[str, Any]:
    loop, result, message = await paused()
    rest = await resumed_events(loop, result, decision)
    encoder = UIStreamEncoder(StreamContext(run_id=RUN, continued=True))
    return await read(encode(rest, encoder), answered(message, approved))


async def test_after_an_approval_the_client_shows_the_output_and_the_answer_in_the_message() -> (
    None
):
    message = await continued_message(APPROVE, True)
    part = tool_parts(message)["tool-transfer"]
    assert part["state"] == "output-available" and part["output"] == "sent 5 to bob"
    assert part["approval"]["approved"] is True
    assert message["parts"][-1]["text"] == "Done: the transfer went through."
    assert [p["type"] for p in message["parts"]].count("tool-balance") == 1


async def test_after_a_denial_the_client_shows_the_call_denied() -> None:
    message = await continued_message(DENY, False)
    part = tool_parts(message)["tool-transfer"]
    assert part["state"] == "output-denied" and part["approval"]["approved"] is False

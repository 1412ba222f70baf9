"""Reasoning parts through a whole run: streamed as their own events, kept in the transcript and
sent back in the next request unchanged, journaled and resumed, sealed in a state token."""

from __future__ import annotations

from pathlib import Path

import pytest

from reactloop import ReActLoop, SqliteStore, ToolMessage
from reactloop.approval import ApprovalOptions, Approve
from reactloop.events import ReasoningStreamed, TextStreamed
from reactloop.messages import AssistantMessage, ReasoningPart
from reactloop.models import ModelRequest, ModelResponse
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio

THOUGHT = ReasoningPart(
    "The user wants the weather, so I look it up.",
    signature="EqQBCkYIBxgCKkB+/\u2028==",
    provider="anthropic",
    model="claude-opus-5",
)


def answered(request_messages: tuple[object, ...]) -> bool:
    return isinstance(request_messages[-1], ToolMessage)


async def test_reasoning_streams_as_its_own_events_before_the_text() -> None:
    model = ScriptedModel([reply("Sunny.", reasoning="Think first.")])
    kinds = []
    async with ReActLoop(model).stream("weather?") as events:
        async for event in events:
            if isinstance(event, ReasoningStreamed | TextStreamed):
                kinds.append((type(event).__name__, event.text))
    assert kinds[0] == ("ReasoningStreamed", "Think ")
    assert "".join(text for kind, text in kinds if kind == "ReasoningStreamed") == "Think first."
    assert kinds[-1] == ("TextStreamed", "Sunny.")


async def test_the_next_request_carries_the_reasoning_unchanged_in_its_place() -> None:
    weather = FakeTool("weather", result="21 C")
    model = ScriptedModel([reply("", call("weather"), reasoning=THOUGHT), "Sunny."])
    result = await ReActLoop(model, tools=[weather]).run("weather?")
    sent = model.requests[1].messages[1]
    assert isinstance(sent, AssistantMessage) and sent.parts[0] is THOUGHT
    assert result.messages[1] == sent and result.output == "Sunny."


async def test_a_journaled_run_reads_back_its_reasoning_byte_for_byte(tmp_path: Path) -> None:
    weather = FakeTool("weather", result="21 C")
    store = SqliteStore(tmp_path / "runs.db")
    model = ScriptedModel([reply("", call("weather"), reasoning=THOUGHT), "Sunny."])
    result = await ReActLoop(model, tools=[weather], store=store).run("weather?")
    stored = await SqliteStore(tmp_path / "runs.db").load(result.run_id)
    assert stored.messages == result.messages
    assert stored.messages[1].parts[0] == THOUGHT  # type: ignore[union-attr]


async def test_a_paused_run_keeps_its_reasoning_in_the_sealed_token() -> None:
    pay = FakeTool("pay", requires_approval=True)

    def answer(request: ModelRequest) -> ModelResponse | str:
        paid = answered(request.messages)
        return "paid" if paid else reply("", call("pay"), reasoning=THOUGHT)

    def loop() -> ReActLoop:
        approval = ApprovalOptions(state_key="k" * 32)
        return ReActLoop(FunctionModel(answer), tools=[pay], approval=approval)

    paused = await loop().run("pay it")
    assert paused.paused and isinstance(paused.state, str)
    decisions = {pending.call_id: Approve() for pending in paused.pending}
    done = await loop().resume(state=paused.state, decisions=decisions)
    thought = next(m for m in done.messages if isinstance(m, AssistantMessage) and m.reasoning)
    assert thought.reasoning == (THOUGHT,) and done.output == "paid"

"""The stream accumulators alone: edge cases that no recording shows."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from reactloop._core._messages import FinishReason, ModelDelta, ToolCall
from reactloop._core._parts import ReasoningPart, TextPart
from reactloop._providers._anthropic import MessageStream
from reactloop._providers._openai import ChatStream
from reactloop._providers._sse import SseEvent

pytestmark = pytest.mark.anyio


async def _ignore(delta: ModelDelta) -> None:
    return None


def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> SseEvent:
    choice = {"index": index, "delta": delta, "finish_reason": finish}
    return SseEvent("message", orjson.dumps({"choices": [choice]}).decode())


def call_delta(arguments: str, fn: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    function = {"arguments": arguments, **(fn or {})}
    return {"tool_calls": [{**fields, "function": function}]}


async def feed(stream: ChatStream | MessageStream, *events: SseEvent) -> None:
    for event in events:
        await stream.handle(event)


async def test_calls_without_index_are_told_apart_by_id() -> None:
    stream = ChatStream("p", _ignore)
    await feed(
        stream,
        chunk(call_delta('{"a": 1}', id="c1", fn={"name": "f"})),
        chunk(call_delta('{"b": 2}', id="c2", fn={"name": "g"})),
        chunk({}, "tool_calls"),
    )
    assert stream.response().message.tool_calls == (
        ToolCall("f", '{"a": 1}', "c1"),
        ToolCall("g", '{"b": 2}', "c2"),
    )


async def test_a_finish_without_done_or_usage_is_complete() -> None:
    stream = ChatStream("p", _ignore)
    await feed(stream, chunk({"content": "hi"}), chunk({}, "stop"))
    response = stream.response()
    assert (response.message.text, response.usage.total_tokens) == ("hi", 0)


async def test_done_without_finish_infers_it() -> None:
    stream = ChatStream("p", _ignore)
    await feed(stream, chunk({"content": "hi"}), SseEvent("message", "[DONE]"))
    assert stream.response().finish_reason is FinishReason.STOP


async def test_a_call_cut_by_the_token_limit_is_dropped() -> None:
    stream = ChatStream("p", _ignore)
    await feed(
        stream,
        chunk({"content": "Let me"}),
        chunk(call_delta('{"city": "Par', index=0, id="c1", fn={"name": "f"})),
        chunk({}, "length"),
    )
    response = stream.response()
    assert (response.message.tool_calls, response.finish_reason) == ((), FinishReason.LENGTH)


async def test_a_finished_call_with_broken_json_keeps_its_text() -> None:
    stream = ChatStream("p", _ignore)
    await feed(
        stream,
        chunk(call_delta("{oops", index=0, id="c1", fn={"name": "f"})),
        chunk({}, "tool_calls"),
    )
    assert stream.response().message.tool_calls == (ToolCall("f", "{oops", "c1"),)


async def test_other_choices_are_ignored() -> None:
    stream = ChatStream("p", _ignore)
    await feed(
        stream, chunk({"content": "zero"}), chunk({"content": "one"}, index=1), chunk({}, "stop")
    )
    assert stream.response().message.text == "zero"


async def test_an_empty_refusal_field_is_no_refusal() -> None:
    stream = ChatStream("p", _ignore)
    await feed(
        stream, chunk({"content": "", "refusal": ""}), chunk({"content": "ok"}), chunk({}, "stop")
    )
    response = stream.response()
    assert (response.message.refusal, response.finish_reason) == (None, FinishReason.STOP)


def event(data: dict[str, Any]) -> SseEvent:
    return SseEvent(str(data["type"]), orjson.dumps(data).decode())


def block_start(index: int, block: dict[str, Any]) -> SseEvent:
    return event({"type": "content_block_start", "index": index, "content_block": block})


def block_delta(index: int, delta: dict[str, Any]) -> SseEvent:
    return event({"type": "content_block_delta", "index": index, "delta": delta})


async def test_anthropic_keeps_thinking_text_and_tools_in_their_order() -> None:
    deltas: list[ModelDelta] = []

    async def sink(delta: ModelDelta) -> None:
        deltas.append(delta)

    stream = MessageStream("a", sink)
    await feed(
        stream,
        block_start(0, {"type": "thinking", "thinking": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": "hmm"}),
        block_start(1, {"type": "text", "text": "A"}),
        block_start(2, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}),
        block_delta(2, {"type": "input_json_delta", "partial_json": '{"x": 1}'}),
        block_start(3, {"type": "text", "text": ""}),
        block_delta(3, {"type": "text_delta", "text": "B"}),
        event({"type": "brand_new_event"}),
        event({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
               "usage": {"output_tokens": 9, "input_tokens": 4}}),
    )  # fmt: skip
    response = stream.response()
    assert response.message.parts == (
        ReasoningPart("hmm", signature=None, provider="a"),
        TextPart("A"),
        ToolCall("f", '{"x": 1}', "t1"),
        TextPart("B"),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (4, 9)
    assert [type(d).__name__ for d in deltas] == [
        "ReasoningDelta",
        "TextDelta",
        "ToolCallDelta",
        "ToolCallDelta",
        "TextDelta",
    ]


async def test_anthropic_tool_input_given_whole_at_start_is_kept() -> None:
    stream = MessageStream("a", _ignore)
    await feed(
        stream,
        block_start(0, {"type": "tool_use", "id": "t1", "name": "f", "input": {"x": 1}}),
        event({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}}),
    )
    assert stream.response().message.tool_calls == (ToolCall("f", '{"x":1}', "t1"),)

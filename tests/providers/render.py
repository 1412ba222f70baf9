"""Render a scripted answer (text and tool calls) as each protocol's wire bytes, for the server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from reactloop._core._messages import ToolCall

JsonObject = dict[str, Any]
ARG_PIECE = 7


def sse(data: object, event: str | None = None) -> bytes:
    """One SSE event."""
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"


def _pieces(text: str, size: int = ARG_PIECE) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _chunk(delta: JsonObject, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o"}
    return sse({**body, "created": 1, "choices": [choice], "usage": None})


def _openai_call_chunks(index: int, call: ToolCall) -> list[bytes]:
    function = {"name": call.name, "arguments": ""}
    opening = {"index": index, "id": call.id, "type": "function", "function": function}
    chunks = [_chunk({"tool_calls": [opening]})]
    for piece in _pieces(call.arguments):
        chunks.append(_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    return chunks


def openai_stream(text: str = "", calls: Sequence[ToolCall] = ()) -> list[bytes]:
    """A Chat Completions stream: role, text by words, calls by fragments, finish, usage, DONE."""
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": word}) for word in _pieces(text, 5)]
    for index, call in enumerate(calls):
        chunks += _openai_call_chunks(index, call)
    chunks.append(_chunk({}, "tool_calls" if calls else "stop"))
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    chunks.append(sse({"id": "chatcmpl-1", "choices": [], "usage": usage, "model": "gpt-4o"}))
    return [*chunks, b"data: [DONE]\n\n"]


def openai_json(text: str = "", calls: Sequence[ToolCall] = ()) -> JsonObject:
    """A whole `chat.completion`."""
    message: JsonObject = {"role": "assistant", "content": text or None, "refusal": None}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [choice],
        "usage": usage,
    }


def _anthropic_blocks(text: str, calls: Sequence[ToolCall]) -> list[bytes]:
    chunks: list[bytes] = []
    index = 0
    if text:
        start = {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        }
        chunks.append(sse(start, "content_block_start"))
        for word in _pieces(text, 5):
            delta = {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": word},
            }
            chunks.append(sse(delta, "content_block_delta"))
        chunks.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        index = 1
    for offset, call in enumerate(calls):
        chunks += _anthropic_tool_block(index + offset, call)
    return chunks


def _anthropic_tool_block(index: int, call: ToolCall) -> list[bytes]:
    block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
    chunks = [
        sse(
            {"type": "content_block_start", "index": index, "content_block": block},
            "content_block_start",
        )
    ]
    for piece in _pieces(call.arguments):
        delta = {"type": "input_json_delta", "partial_json": piece}
        chunks.append(
            sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        )
    chunks.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return chunks


def anthropic_stream(text: str = "", calls: Sequence[ToolCall] = ()) -> list[bytes]:
    """A Messages stream: start, ping, blocks, message_delta with stop reason, message_stop."""
    message: JsonObject = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    chunks = [sse({"type": "message_start", "message": message}, "message_start")]
    chunks.append(sse({"type": "ping"}, "ping"))
    chunks += _anthropic_blocks(text, calls)
    stop = "tool_use" if calls else "end_turn"
    delta = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}
    chunks.append(sse(delta, "message_delta"))
    return [*chunks, sse({"type": "message_stop"}, "message_stop")]


def anthropic_json(text: str = "", calls: Sequence[ToolCall] = ()) -> JsonObject:
    """A whole `message`."""
    content: list[JsonObject] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": orjson.loads(c.arguments)}
        for c in calls
    ]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }

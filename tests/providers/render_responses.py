"""Render a scripted answer (reasoning, text, tool calls) as OpenAI Responses wire bytes: a whole
`response` object, or its event stream, in the shapes the API sends (see the recordings in
tests/fixtures/recorded/openai-responses)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reactloop._core._messages import ToolCall
from tests.providers.render import sse

JsonObject = dict[str, Any]
RESPONSE_ID = "resp_1"
USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 4},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 2},
    "total_tokens": 15,
}


def reasoning_item(number: int, summary: Sequence[str] = ("Thinking.",)) -> JsonObject:
    """A reasoning item with encrypted content (what `include` asks for)."""
    return {
        "type": "reasoning",
        "id": f"rs_{number}",
        "summary": [{"type": "summary_text", "text": line} for line in summary],
        "encrypted_content": f"gAAAA-encrypted-{number}",
    }


def message_item(text: str, number: int = 1) -> JsonObject:
    content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    return {
        "type": "message",
        "id": f"msg_{number}",
        "role": "assistant",
        "status": "completed",
        "content": content,
    }


def call_item(call: ToolCall, number: int) -> JsonObject:
    return {
        "type": "function_call",
        "id": f"fc_{number}",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "status": "completed",
    }


def output_of(
    text: str = "", calls: Sequence[ToolCall] = (), reasoning: bool = False
) -> list[JsonObject]:
    """The output items: a reasoning item first (when asked), the text, then the calls."""
    output: list[JsonObject] = [reasoning_item(1)] if reasoning else []
    if text:
        output.append(message_item(text))
    output += [call_item(call, number) for number, call in enumerate(calls, 1)]
    return output


def responses_json(
    text: str = "",
    calls: Sequence[ToolCall] = (),
    *,
    reasoning: bool = False,
    status: str = "completed",
    incomplete: str | None = None,
    response_id: str = RESPONSE_ID,
) -> JsonObject:
    """A whole `response` object."""
    details = {"reason": incomplete} if incomplete else None
    return {
        "id": response_id,
        "object": "response",
        "status": status,
        "model": "gpt-5-2025-08-07",
        "output": output_of(text, calls, reasoning),
        "incomplete_details": details,
        "error": None,
        "usage": USAGE,
    }


def _item_events(index: int, item: JsonObject) -> list[bytes]:
    """One output item as it streams: added (empty), its deltas, done (complete)."""
    kind = item["type"]
    if kind == "function_call":
        added = {**item, "arguments": "", "status": "in_progress"}
    elif kind == "message":
        added = {**item, "content": [], "status": "in_progress"}
    else:
        added = {**item, "summary": [], "encrypted_content": None}
    chunks = [sse({"type": "response.output_item.added", "output_index": index, "item": added})]
    base = {"item_id": item["id"], "output_index": index}
    if kind == "function_call":
        arguments = item["arguments"]
        for start in range(0, len(arguments), 7):
            delta = {"type": "response.function_call_arguments.delta", **base}
            chunks.append(sse({**delta, "delta": arguments[start : start + 7]}))
    elif kind == "message":
        said = item["content"][0]["text"]
        for start in range(0, len(said), 5):
            delta = {"type": "response.output_text.delta", **base, "content_index": 0}
            chunks.append(sse({**delta, "delta": said[start : start + 5]}))
    else:
        for number, part in enumerate(item["summary"]):
            delta = {"type": "response.reasoning_summary_text.delta", **base}
            chunks.append(sse({**delta, "summary_index": number, "delta": part["text"]}))
    done = {"type": "response.output_item.done", "output_index": index, "item": item}
    return [*chunks, sse(done)]


def responses_stream(
    text: str = "",
    calls: Sequence[ToolCall] = (),
    *,
    reasoning: bool = False,
    final: str = "response.completed",
    response_id: str = RESPONSE_ID,
) -> list[bytes]:
    """A Responses event stream: created, each item (added, deltas, done), then the final event
    carrying the whole response."""
    whole = responses_json(text, calls, reasoning=reasoning, response_id=response_id)
    started = {**whole, "status": "in_progress", "output": [], "usage": None}
    chunks = [sse({"type": "response.created", "response": started}, "response.created")]
    for index, item in enumerate(whole["output"]):
        chunks += _item_events(index, item)
    if final == "response.incomplete":
        whole = {
            **whole,
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
        }
    chunks.append(sse({"type": final, "response": whole}))
    return chunks

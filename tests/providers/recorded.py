"""Recorded vendor traffic (tests/fixtures/recorded, see its README) for the reasoning tests:
the cassettes, the three ways a stream is served (whole, an event per chunk, cut at odd byte
offsets), and each protocol's request reduced to what the provider owns (message order, content
block types and order, opaque values, tool ids and inputs, the reasoning fields), so that a
request reactloop sends can be compared with the one the vendor accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import yaml

from reactloop._core import ReasoningPart, TextPart, ToolCall
from reactloop._core._messages import AssistantPart, ModelDelta
from tests.providers.conftest import FIXTURES
from tests.providers.wire_server import events_of, split_at

RECORDED = FIXTURES / "recorded"
ODD_OFFSETS = (1, 3, 17, 101, 257, 1009, 4099)


def interactions(path: Path) -> list[dict[str, Any]]:
    """The recorded interactions of a cassette, in order."""
    cassette = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(cassette["interactions"])


def anthropic(name: str) -> list[dict[str, Any]]:
    return interactions(RECORDED / "anthropic" / f"{name}.yaml")


def deepseek(name: str) -> list[dict[str, Any]]:
    return interactions(RECORDED / "deepseek" / f"{name}.yaml")


def stream_bytes(interaction: dict[str, Any]) -> bytes:
    """A recorded stream's raw bytes."""
    return str(interaction["response"]["body"]["string"]).encode()


def three_ways(raw: bytes) -> list[list[bytes]]:
    """The stream whole, one event per chunk, and cut at odd byte offsets."""
    odd = [n for n in ODD_OFFSETS if n < len(raw)]
    return [[raw], events_of(raw), split_at(raw, odd)]


def sse_data(raw: bytes) -> list[dict[str, Any]]:
    """The JSON data of every event of a recorded stream (`[DONE]` left out)."""
    found = []
    for line in raw.decode().splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            found.append(orjson.loads(line[5:]))
    return found


class Deltas:
    """An `on_delta` sink that keeps what it is sent."""

    def __init__(self) -> None:
        self.seen: list[ModelDelta] = []

    async def __call__(self, delta: ModelDelta) -> None:
        self.seen.append(delta)


# -- Anthropic ---------------------------------------------------------------------------------


def anthropic_blocks_of_stream(raw: bytes) -> list[dict[str, Any]]:
    """A recorded Messages stream's content blocks, rebuilt from its events by hand."""
    blocks: dict[int, dict[str, Any]] = {}
    for data in sse_data(raw):
        if data["type"] == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif data["type"] == "content_block_delta":
            block, delta = blocks[data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
    return [blocks[index] for index in sorted(blocks)]


def anthropic_parts(blocks: list[dict[str, Any]], model: str) -> tuple[AssistantPart, ...]:
    """The parts the recorded content blocks must decode to (a provider named "anthropic")."""
    parts: list[AssistantPart] = []
    for block in blocks:
        if block["type"] == "thinking":
            parts.append(
                ReasoningPart(
                    block["thinking"], signature=block["signature"], provider="anthropic",
                    model=model,
                )
            )  # fmt: skip
        elif block["type"] == "redacted_thinking":
            parts.append(ReasoningPart(redacted=block["data"], provider="anthropic", model=model))
        elif block["type"] == "text":
            parts.append(TextPart(block["text"]))
        elif block["type"] == "tool_use":
            arguments = orjson.dumps(block["input"]).decode()
            parts.append(ToolCall(block["name"], arguments, block["id"]))
    return tuple(parts)


def _anthropic_block(block: dict[str, Any]) -> tuple[Any, ...]:
    kind = block["type"]
    if kind == "text":
        return (kind, block["text"])
    if kind == "thinking":
        return (kind, block["thinking"], block["signature"])
    if kind == "redacted_thinking":
        return (kind, block["data"])
    if kind == "tool_use":
        return (kind, block["id"], block["name"], block["input"])
    if kind == "tool_result":
        return (kind, block["tool_use_id"], block["content"], block.get("is_error", False))
    return (kind, block)


def anthropic_view(body: dict[str, Any]) -> dict[str, Any]:
    """What the Anthropic provider owns in a Messages body: the turns (roles, block kinds in
    order, texts, signatures and redacted data, tool ids, inputs and results), the system
    prompt, the tools offered and the tool choice, the limit, thinking and output_config."""
    turns = []
    for turn in body["messages"]:
        content = turn["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        turns.append((turn["role"], [_anthropic_block(block) for block in blocks]))
    return {
        "model": body["model"],
        "max_tokens": body["max_tokens"],
        "messages": turns,
        "system": body.get("system"),
        "tools": [tool["name"] for tool in body.get("tools", [])],
        "tool_choice": body.get("tool_choice"),
        "thinking": body.get("thinking"),
        "output_config": body.get("output_config"),
    }


# -- Chat Completions --------------------------------------------------------------------------


def chat_view(body: dict[str, Any]) -> dict[str, Any]:
    """What the Chat Completions provider owns in a body: the messages (roles, contents,
    reasoning_content, tool calls with their ids, arguments and extra_content), the tools, the
    reasoning effort and the streaming options."""
    messages = [
        {
            key: message[key]
            for key in ("role", "content", "reasoning_content", "tool_calls", "tool_call_id")
            if key in message
        }
        for message in body["messages"]
    ]
    return {
        "model": body["model"],
        "messages": messages,
        "tools": [tool["function"]["name"] for tool in body.get("tools", [])],
        "reasoning_effort": body.get("reasoning_effort"),
        "stream": body.get("stream", False),
        "stream_options": body.get("stream_options"),
    }

"""The neutral views the checks compare: a response as its text, calls, reasoning, finish and
usage (arguments compared as JSON values, so a provider may re-serialize them), and the same
assembled from a stream's deltas."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson
from attrs import frozen

from reactloop._core import (
    FinishReason,
    ModelDelta,
    ModelResponse,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)


def arguments(text: str) -> Any:
    """A call's arguments as a JSON value (the text itself when it is not JSON)."""
    try:
        return orjson.loads(text or "{}")
    except orjson.JSONDecodeError:
        return text


@frozen
class CallView:
    """A tool call as the checks compare it: id, name, and arguments as a JSON value."""

    id: str
    name: str
    arguments: Any

    @classmethod
    def of(cls, call: ToolCall) -> CallView:
        """The view of a decoded (or scripted) call; the id is the provider's own."""
        return cls(call.wire_id, call.name, arguments(call.arguments))


def opaque_of(part: ReasoningPart) -> str | None:
    """The opaque value a reasoning part carries (signature, encrypted or redacted)."""
    for value in (part.signature, part.encrypted, part.redacted):
        if value is not None:
            return value
    return None


@frozen
class ResponseView:
    """A response as the checks compare it."""

    text: str
    calls: tuple[CallView, ...]
    reasoning: tuple[str, ...]  # the opaque values, in order
    readable: str  # the readable reasoning, joined
    finish: FinishReason
    usage: Usage

    @classmethod
    def of(cls, response: ModelResponse) -> ResponseView:
        """The view of a decoded response."""
        message = response.message
        parts = message.reasoning
        return cls(
            message.text,
            tuple(CallView.of(call) for call in message.tool_calls),
            tuple(value for part in parts if (value := opaque_of(part)) is not None),
            "".join(part.readable for part in parts),
            response.finish_reason,
            response.usage,
        )


@frozen
class StreamedView:
    """What a stream's deltas add up to: the text, the reasoning text, and each call (by its
    delta index, in the order the indexes first came)."""

    text: str
    readable: str
    calls: tuple[CallView, ...]
    raw_arguments: tuple[str, ...]


def assembled(deltas: Iterable[ModelDelta]) -> StreamedView:
    """Add the deltas up as a consumer of the stream would."""
    text: list[str] = []
    readable: list[str] = []
    calls: dict[int, list[str]] = {}
    for delta in deltas:
        if isinstance(delta, TextDelta):
            text.append(delta.text)
        elif isinstance(delta, ReasoningDelta):
            readable.append(delta.text)
        elif isinstance(delta, ToolCallDelta):
            _add_call_delta(calls, delta)
    views = tuple(CallView(c[0], c[1], arguments("".join(c[2:]))) for c in calls.values())
    raw = tuple("".join(c[2:]) for c in calls.values())
    return StreamedView("".join(text), "".join(readable), views, raw)


def _add_call_delta(calls: dict[int, list[str]], delta: ToolCallDelta) -> None:
    """One call delta into the calls assembled so far: [id, name, argument pieces...]."""
    call = calls.setdefault(delta.index, ["", ""])
    if delta.id:
        call[0] = delta.id
    if delta.name:
        call[1] = delta.name
    if delta.arguments_delta:
        call.append(delta.arguments_delta)

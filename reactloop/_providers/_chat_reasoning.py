"""Reasoning on Chat Completions, which has no reasoning part of its own: DeepSeek-style
`reasoning_content` on an assistant message, and Gemini's thought signatures on tool calls
(`extra_content.google.thought_signature`), read into `ReasoningPart`s naming the provider and
the configured model. What goes back (`_openai._assistant`) is decided there, by `replays`."""

from __future__ import annotations

from collections.abc import Iterable

import orjson
from attrs import frozen

from reactloop._core import (
    AssistantMessage,
    AssistantPart,
    JsonObject,
    ReasoningPart,
    TextPart,
    ToolCall,
)
from reactloop._providers._wire import obj, replays, text


@frozen
class Recipient:
    """Who a message goes to (the provider's name and model: what reasoning replays), and
    whether it belongs to the current tool loop (after the last user message); `breakpoints`:
    whether cache points go as explicit cache breakpoints; `reasoning_field`: the assistant field
    readable reasoning goes back in (None: none goes back); `details`: OpenRouter's
    `reasoning_details` go back."""

    provider: str = "openai"
    model: str = ""
    current_loop: bool = False
    breakpoints: bool = False
    reasoning_field: str | None = "reasoning_content"
    details: bool = False


OUTSIDE_LOOP = Recipient()
"""A message outside the current tool loop, for a provider named "openai": no reasoning goes."""


def thought_signature(call: object) -> str | None:
    """A Gemini thought signature on a tool call (`extra_content.google.thought_signature`)."""
    return text(obj(obj(call, "extra_content"), "google"), "thought_signature")


def message_parts(
    reasoning: str, content: str, calls: Iterable[tuple[ToolCall, str | None]], by: Recipient
) -> tuple[AssistantPart, ...]:
    """The parts of an answer: its reasoning, its text, then each call after its signature."""
    parts: list[AssistantPart] = []
    if reasoning:
        parts.append(ReasoningPart(reasoning, provider=by.provider, model=by.model or None))
    if content:
        parts.append(TextPart(content))
    for call, signature in calls:
        if signature is not None:
            parts.append(
                ReasoningPart(signature=signature, provider=by.provider, model=by.model or None)
            )
        parts.append(call)
    return tuple(parts)


def _tool_call(call: ToolCall, signature: str | None = None) -> JsonObject:
    function = {"name": call.name, "arguments": call.arguments}
    encoded: JsonObject = {"id": call.id, "type": "function", "function": function}
    if signature is not None:
        encoded["extra_content"] = {"google": {"thought_signature": signature}}
    return encoded


def thought_signature_of(part: AssistantPart, provider: str, model: str) -> str | None:
    """A Gemini thought signature: a part of this provider and model family that carries a
    signature and no text (it goes back on the tool call that follows it)."""
    if isinstance(part, ReasoningPart) and not part.text and replays(part, provider, model):
        return part.signature
    return None


def reasoning_content(message: AssistantMessage, provider: str, model: str) -> str | None:
    """The readable reasoning this provider and model family produced (DeepSeek-style
    `reasoning_content`), joined; None when there is none."""
    texts = [
        part.text
        for part in message.reasoning
        if part.text and not part.is_opaque and replays(part, provider, model)
    ]
    return "".join(texts) or None


def reasoning_fields(message: AssistantMessage, to: Recipient) -> JsonObject:
    """The reasoning an assistant message carries back to `to`: OpenRouter's
    `reasoning_details` as they came, else the readable reasoning in `to.reasoning_field`."""
    if to.details:
        for part in message.reasoning:
            if part.encrypted is not None and replays(part, to.provider, to.model):
                return {"reasoning_details": orjson.loads(part.encrypted)}
    if to.reasoning_field is None:
        return {}
    thought = reasoning_content(message, to.provider, to.model)
    return {} if thought is None else {to.reasoning_field: thought}


def tool_calls_of(message: AssistantMessage, provider: str, model: str) -> list[JsonObject]:
    """The tool calls, each with the thought signature of the part right before it."""
    calls: list[JsonObject] = []
    before: AssistantPart | None = None
    for part in message.parts:
        if isinstance(part, ToolCall):
            signature = None if before is None else thought_signature_of(before, provider, model)
            calls.append(_tool_call(part, signature))
        before = part
    return calls

"""Reasoning on Chat Completions, which has no reasoning part of its own: DeepSeek-style
`reasoning_content` on an assistant message, and Gemini's thought signatures on tool calls
(`extra_content.google.thought_signature`), read into `ReasoningPart`s naming the provider and
the configured model. What goes back (`_openai._assistant`) is decided there, by `replays`."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

from reactloop._core import AssistantPart, ReasoningPart, TextPart, ToolCall
from reactloop._providers._wire import obj, text


@frozen
class Recipient:
    """Who a message goes to (the provider's name and model: what reasoning replays), and
    whether it belongs to the current tool loop (after the last user message)."""

    provider: str = "openai"
    model: str = ""
    current_loop: bool = False


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

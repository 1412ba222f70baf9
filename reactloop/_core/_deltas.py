"""How a streaming provider would deliver a whole response: the deltas the test models stream."""

from __future__ import annotations

import re
from typing import assert_never

from reactloop._core._messages import (
    ModelDelta,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from reactloop._core._parts import ReasoningPart, TextPart

_WORDS = re.compile(r"\S+\s*|\s+")
_ARG_CHUNK = 8


def deltas_of(response: ModelResponse) -> list[ModelDelta]:
    """How a streaming provider would deliver `response`, part by part in order: reasoning and
    text by words, each tool call's name then its arguments in pieces."""
    deltas: list[ModelDelta] = []
    index = 0
    for part in response.message.parts:
        match part:
            case TextPart():
                deltas.extend(TextDelta(piece) for piece in _WORDS.findall(part.text))
            case ReasoningPart():
                deltas.extend(ReasoningDelta(piece) for piece in _WORDS.findall(part.readable))
            case ToolCall():
                deltas.extend(_call_deltas(index, part))
                index += 1
            case _:
                assert_never(part)
    return deltas


def _call_deltas(index: int, call: ToolCall) -> list[ModelDelta]:
    args = call.arguments
    pieces = (args[i : i + _ARG_CHUNK] for i in range(0, len(args), _ARG_CHUNK))
    return [
        ToolCallDelta(index, "", call.id, call.name),
        *(ToolCallDelta(index, p) for p in pieces),
    ]

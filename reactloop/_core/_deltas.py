"""How a streaming provider would deliver a whole response: the deltas the test models stream."""

from __future__ import annotations

import re

from reactloop._core._messages import ModelDelta, ModelResponse, TextDelta, ToolCallDelta

_WORDS = re.compile(r"\S+\s*|\s+")
_ARG_CHUNK = 8


def deltas_of(response: ModelResponse) -> list[ModelDelta]:
    """How a streaming provider would deliver `response`: text by words, arguments in pieces."""
    message = response.message
    deltas: list[ModelDelta] = [TextDelta(piece) for piece in _WORDS.findall(message.text)]
    for index, tool_call in enumerate(message.tool_calls):
        deltas.append(ToolCallDelta(index, "", tool_call.id, tool_call.name))
        args = tool_call.arguments
        deltas.extend(
            ToolCallDelta(index, args[i : i + _ARG_CHUNK]) for i in range(0, len(args), _ARG_CHUNK)
        )
    return deltas

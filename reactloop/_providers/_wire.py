"""Small helpers both protocols use to read untrusted JSON and assemble streamed tool calls."""

from __future__ import annotations

from typing import Any

import orjson
from attrs import define, field

from reactloop._errors import InvalidResponseError
from reactloop._messages import FinishReason, JsonObject, ToolCall, new_call_id


def obj(value: object, key: str) -> JsonObject:
    """`value[key]` when both are JSON objects, else an empty object."""
    if isinstance(value, dict):
        inner = value.get(key)
        if isinstance(inner, dict):
            return inner
    return {}


def text(value: object, key: str) -> str | None:
    """`value[key]` when it is a string, else None."""
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, str) else None


def count(value: object, key: str) -> int | None:
    """`value[key]` when it is a non-negative integer, else None."""
    inner = value.get(key) if isinstance(value, dict) else None
    is_count = isinstance(inner, int) and not isinstance(inner, bool) and inner >= 0
    return inner if is_count else None


def items(value: object, key: str) -> list[Any]:
    """`value[key]` when it is a list, else an empty list."""
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, list) else []


def is_json(arguments: str) -> bool:
    """True when the text parses as JSON."""
    try:
        orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return False
    return True


def arguments_object(arguments: str) -> JsonObject:
    """A tool call's arguments as an object; text that is not a JSON object gives `{}`."""
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


@define
class CallParts:
    """A tool call as it streams: id and name once, arguments in fragments."""

    id: str | None = None
    name: str | None = None
    parts: list[str] = field(factory=list)
    initial: str = ""

    def arguments(self) -> str:
        """The fragments joined; the initial value when no fragment came; `{}` when empty."""
        return "".join(self.parts) or self.initial or "{}"


def assemble_calls(
    provider: str, calls: list[CallParts], finish: FinishReason
) -> tuple[ToolCall, ...]:
    """Parse each streamed call once it is complete.

    A call cut off by the token limit (finish LENGTH, arguments not valid JSON) was never
    finished by the model and is dropped; any other call keeps its raw arguments, so that invalid
    JSON reaches the tool's own validation and the model reads why.
    """
    assembled: list[ToolCall] = []
    for position, parts in enumerate(calls):
        arguments = parts.arguments()
        if finish is FinishReason.LENGTH and not is_json(arguments):
            continue
        if not parts.name:
            raise InvalidResponseError(
                f"{provider} streamed tool call #{position} without a name", provider=provider
            )
        assembled.append(ToolCall(parts.name, arguments, parts.id or new_call_id()))
    return tuple(assembled)

"""A tool's value as the text the model reads, and the error result of a failed or refused
call: shared by the tool phase, the approval gate and agent tools."""

from __future__ import annotations

from typing import Any

import attrs
import orjson

from reactloop._core import ToolCall, ToolResult
from reactloop._errors import ToolError
from reactloop._unicode import json_text

_KEYS = orjson.OPT_NON_STR_KEYS


def jsonable(value: Any) -> Any:
    """orjson's `default`: attrs classes as objects, sets as sorted lists."""
    if attrs.has(type(value)):
        return attrs.asdict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def render(value: object, limit: int) -> str:
    """A tool's return value as text: strings as they are, the rest as JSON; cut at `limit`."""
    text = value if isinstance(value, str) else json_text(value, default=jsonable, option=_KEYS)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[truncated: {len(text) - limit} of {len(text)} characters cut]"


def error_result(call: ToolCall, error: ToolError, duration: float = 0.0) -> ToolResult:
    """The error result the model sees for a failed or refused call."""
    return ToolResult(call.id, call.name, error.message, True, error.code, duration)

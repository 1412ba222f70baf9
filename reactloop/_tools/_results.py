"""A tool's value as what the model reads, and the error result of a failed or refused call:
shared by the tool phase, the approval gate and agent tools.

A tool may return content parts: an `ImagePart`, `DocumentPart` or `AudioPart`, or a list or
tuple mixing strings and parts. Its result then keeps every part in order (`ToolResult.parts`)
and its `content` is their text. Any other value (a string, JSON) is text, as before.
"""

from __future__ import annotations

from typing import Any

import attrs
import orjson

from reactloop._core import (
    AudioPart,
    ContentPart,
    DocumentPart,
    ImagePart,
    TextPart,
    ToolCall,
    ToolResult,
    text_of,
)
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


_BINARY = (ImagePart, DocumentPart, AudioPart)
_PARTS = (TextPart, *_BINARY)


def render(value: object, limit: int) -> str:
    """A tool's return value as text: strings as they are, the rest as JSON; cut at `limit`."""
    text = value if isinstance(value, str) else json_text(value, default=jsonable, option=_KEYS)
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[truncated: {len(text) - limit} of {len(text)} characters cut]"


def result_of(call: ToolCall, value: object, limit: int, duration: float = 0.0) -> ToolResult:
    """The result of a call whose tool returned `value`: text (`render`), or its parts when it
    returned any besides text. A value that cannot be shown raises TypeError (or orjson's)."""
    if type(value) is str:  # the common case: no other check
        return ToolResult(call.id, call.name, _cut(value, limit), duration=duration)
    parts = parts_of(value)
    if parts is None:
        return ToolResult(call.id, call.name, render(value, limit), duration=duration)
    if not any(isinstance(part, _BINARY) for part in parts):  # text parts only: plain text
        return ToolResult(call.id, call.name, _cut(text_of(parts), limit), duration=duration)
    kept = _cut_parts(parts, limit)
    return ToolResult(call.id, call.name, text_of(kept), duration=duration, parts=kept)


def parts_of(value: object) -> tuple[ContentPart, ...] | None:
    """`value` as content parts (strings become text parts), or None when it holds none (it is
    shown as text). A list or tuple holding a part and something else than strings and parts
    is refused with a TypeError naming the item."""
    if isinstance(value, _PARTS):
        return (value,)
    if not isinstance(value, list | tuple) or not any(isinstance(v, _PARTS) for v in value):
        return None
    parts: list[ContentPart] = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            parts.append(TextPart(item))
        elif isinstance(item, _PARTS):
            parts.append(item)
        else:
            kind = type(item).__name__
            rule = "a list of content parts holds only str, TextPart, ImagePart, DocumentPart"
            raise TypeError(f"{rule} and AudioPart; item {index} is a {kind}")
    return tuple(parts)


def _cut_parts(parts: tuple[ContentPart, ...], limit: int) -> tuple[ContentPart, ...]:
    """The parts with their text cut to `limit` characters in all (binary parts all kept)."""
    left, kept = limit, []
    for part in parts:
        shown = part
        if isinstance(part, TextPart) and len(part.text) > left:
            shown = TextPart(_cut(part.text, max(left, 0)))
        if isinstance(part, TextPart):
            left -= len(part.text)
        kept.append(shown)
    return tuple(kept)


def error_result(call: ToolCall, error: ToolError, duration: float = 0.0) -> ToolResult:
    """The error result the model sees for a failed or refused call."""
    return ToolResult(call.id, call.name, error.message, True, error.code, duration)

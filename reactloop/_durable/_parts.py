"""Content parts (text, images, documents, audio) as stored JSON values.

Each part is an object tagged by `type` (`text`, `image`, `document`, `audio`); bytes are
written as base64 under `data`. A user or tool message that is one text part is never written
this way: it keeps 0.1's `content` layout.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any, TypeAlias, assert_never

from reactloop._core import AudioPart, ContentPart, DocumentPart, ImagePart, TextPart

ContentParts: TypeAlias = tuple[ContentPart, ...]


def content_parts(parts: Iterable[ContentPart]) -> list[dict[str, Any]]:
    """The parts as stored JSON values."""
    return [_stored_part(part) for part in parts]


def _stored_part(part: ContentPart) -> dict[str, Any]:
    match part:
        case TextPart():
            return {"type": "text", "text": part.text}
        case ImagePart():
            out = _source("image", part.data, part.url)
            return _with(out, media_type=part.media_type, detail=part.detail)
        case DocumentPart():
            out = _source("document", part.data, part.url)
            if part.text is not None:
                out["text"] = part.text
            return _with(out, media_type=part.media_type, title=part.title)
        case AudioPart():
            return {"type": "audio", "data": _b64(part.data), "format": part.format}
        case _:
            assert_never(part)


def _source(kind: str, data: bytes | None, url: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind}
    if data is not None:
        out["data"] = _b64(data)
    if url is not None:
        out["url"] = url
    return out


def _with(out: dict[str, Any], **optional: str | None) -> dict[str, Any]:
    out.update((key, value) for key, value in optional.items() if value is not None)
    return out


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _bytes(value: dict[str, Any]) -> bytes | None:
    data = value.get("data")
    if data is None:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise ValueError(f"a stored {value.get('type')} part's data is not base64: {exc}") from exc


def read_content_parts(values: Iterable[dict[str, Any]]) -> ContentParts:
    """The parts `content_parts` wrote."""
    return tuple(_read_part(value) for value in values)


def _read_part(value: dict[str, Any]) -> ContentPart:
    kind = value.get("type")
    if kind == "text":
        return TextPart(value["text"])
    if kind == "image":
        return ImagePart(
            _bytes(value), value.get("url"), value.get("media_type"), value.get("detail")
        )
    if kind == "document":
        return DocumentPart(
            _bytes(value),
            value.get("url"),
            value.get("text"),
            value.get("media_type"),
            value.get("title"),
        )
    if kind == "audio":
        data = _bytes(value)
        return AudioPart(b"" if data is None else data, value["format"])
    raise ValueError(f"a stored content part has an unknown type: {kind!r}")

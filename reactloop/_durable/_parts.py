"""Content parts (text, images, documents, audio) as stored JSON values.

Each part is an object tagged by `type` (`text`, `image`, `document`, `audio`, `cache_point`).
Bytes are written as base64 under `data`, or, inside `blobs_apart()`, kept apart: the part then
holds `blob` (`sha256:<hex>` of the bytes) and `size`, and the bytes go to the collected blobs, each
distinct content once (adr/0028). Reading resolves `blob` from the blobs `blobs_from()` gives.
A user or tool message that is one text part is never written this way: it keeps 0.1's
`content` layout.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeAlias, assert_never

from reactloop._core import AudioPart, CachePoint, ContentPart, DocumentPart, ImagePart, TextPart

ContentParts: TypeAlias = tuple[ContentPart, ...]
DIGEST_PREFIX = "sha256:"

_collected: ContextVar[dict[str, bytes] | None] = ContextVar("reactloop_blobs_out", default=None)
_known: ContextVar[Mapping[str, bytes] | None] = ContextVar("reactloop_blobs_in", default=None)


class MissingBlobError(LookupError):
    """A stored part refers to a blob that was not given (or does not hold its bytes)."""

    def __init__(self, digest: str, problem: str = "which the store does not hold") -> None:
        super().__init__(f"a stored part refers to blob {digest}, {problem}")
        self.digest = digest


def missing_blob(error: BaseException) -> MissingBlobError | None:
    """The `MissingBlobError` behind `error`, if any (cattrs groups the errors of nested
    fields), so a reader can name the digest rather than a field path."""
    if isinstance(error, MissingBlobError):
        return error
    inner = getattr(error, "exceptions", ())
    for nested in (*inner, error.__cause__):
        if nested is not None and (found := missing_blob(nested)) is not None:
            return found
    return None


def digest_of(data: bytes) -> str:
    """The content address of `data`: `sha256:` and the hex SHA-256 of the bytes."""
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()


@contextmanager
def blobs_apart() -> Iterator[dict[str, bytes]]:
    """Parts written inside the block keep their bytes apart: the dict yielded collects them by
    digest (each distinct content once), the parts hold references."""
    blobs: dict[str, bytes] = {}
    token = _collected.set(blobs)
    try:
        yield blobs
    finally:
        _collected.reset(token)


@contextmanager
def blobs_from(blobs: Mapping[str, bytes]) -> Iterator[None]:
    """Parts read inside the block find the bytes of their `blob` references in `blobs`."""
    token = _known.set(blobs)
    try:
        yield
    finally:
        _known.reset(token)


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
            return {**_source("audio", part.data, None), "format": part.format}
        case CachePoint():
            return {"type": "cache_point"}
        case _:
            assert_never(part)


def _source(kind: str, data: bytes | None, url: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind}
    blobs = _collected.get()
    if data is not None and blobs is not None:
        digest = digest_of(data)
        blobs.setdefault(digest, data)
        out["blob"], out["size"] = digest, len(data)
    elif data is not None:
        out["data"] = _b64(data)
    if url is not None:
        out["url"] = url
    return out


def _with(out: dict[str, Any], **optional: str | None) -> dict[str, Any]:
    out.update((key, value) for key, value in optional.items() if value is not None)
    return out


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _blob(value: dict[str, Any]) -> bytes:
    """The bytes a part's `blob` reference names, checked against its `size`."""
    digest = value["blob"]
    blobs = _known.get()
    data = None if blobs is None else blobs.get(digest)
    if data is None:
        raise MissingBlobError(digest)
    if len(data) != value.get("size", len(data)):
        raise MissingBlobError(digest, f"of {len(data)} bytes where {value['size']} were stored")
    return data


def _bytes(value: dict[str, Any]) -> bytes | None:
    if "blob" in value:
        return _blob(value)
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
    if kind == "cache_point":
        return CachePoint()
    if kind == "audio":
        data = _bytes(value)
        return AudioPart(b"" if data is None else data, value["format"])
    raise ValueError(f"a stored content part has an unknown type: {kind!r}")

"""Content parts as Anthropic Messages content blocks: text, `image` and `document` blocks in a
user turn and inside a `tool_result`, in the parts' order.

Anthropic takes images (JPEG, PNG, GIF, WebP) as base64 or by URL, PDFs as base64 or by URL, and
plain text as a text document; it has no audio input. A part it cannot take, or one over the
size it documents, is refused here with a typed error, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

from reactloop._core import (
    AudioPart,
    CachePoint,
    ContentPart,
    DocumentPart,
    ImagePart,
    JsonObject,
    TextPart,
)
from reactloop._providers._content import b64, check_size, unsupported

__all__ = [
    "IMAGE_LIMIT",
    "IMAGE_MEDIA_TYPES",
    "PDF_LIMIT",
    "TOOL_RESULT",
    "USER_MESSAGE",
    "content_blocks",
]

# Anthropic's documented limits, in one place.
# - Vision guide (docs.anthropic.com/en/docs/build-with-claude/vision, "Image size"): at most
#   5 MB per image over the API. The API measures the base64 text ("image exceeds 5 MB maximum:
#   N bytes > 5242880 bytes", N the encoded length), so the bytes may be 3/4 of that.
# - PDF support guide (docs.anthropic.com/en/docs/build-with-claude/pdf-support, "PDF support
#   requirements"): a request of at most 32 MB, base64 included, so a PDF's bytes may be 3/4 of
#   that at most (the rest of the request counts too, and the vendor still checks the whole).
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
"""Anthropic's limit on one image's base64 text, in bytes (5 MB)."""
MAX_REQUEST = 32 * 1024 * 1024
"""Anthropic's limit on a request with PDFs, in bytes (32 MB)."""


def _raw_limit(encoded: int) -> int:
    """The most bytes whose base64 text fits in `encoded` bytes."""
    return encoded // 4 * 3


IMAGE_LIMIT = _raw_limit(MAX_IMAGE_BASE64)
"""The most bytes one image may have (3,932,160: 5 MB once in base64)."""
PDF_LIMIT = _raw_limit(MAX_REQUEST)
"""The most bytes one PDF may have (25,165,824: 32 MB once in base64)."""

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
"""The image types Anthropic's base64 source takes."""
PDF = "application/pdf"
USER_MESSAGE = "a user message"
TOOL_RESULT = "a tool result"


def _image(provider: str, part: ImagePart, where: str) -> JsonObject:
    """An `image` block: by URL, or its bytes as base64 (JPEG, PNG, GIF, WebP, within 5 MB)."""
    if part.url is not None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    if part.media_type not in IMAGE_MEDIA_TYPES:
        why = f"its images are JPEG, PNG, GIF or WebP, not {part.media_type}"
        raise unsupported(provider, part, where, why)
    check_size(provider, part, IMAGE_LIMIT)
    source = {"type": "base64", "media_type": part.media_type, "data": b64(part.data or b"")}
    return {"type": "image", "source": source}


def _plain_text(provider: str, part: DocumentPart, where: str) -> str:
    """A document's text: its `text`, or its bytes when they are UTF-8 text (`text/*`)."""
    if part.text is not None:
        return part.text
    if part.data is not None and (part.media_type or "").startswith("text/"):
        try:
            return part.data.decode("utf-8")
        except UnicodeDecodeError:
            raise unsupported(provider, part, where, "a text document must be UTF-8") from None
    why = f"its documents are PDFs or plain text, not {part.media_type}"
    raise unsupported(provider, part, where, why)


def _document_source(provider: str, part: DocumentPart, where: str) -> JsonObject:
    """A document's source: a PDF by URL or as base64 (within 32 MB), else its plain text."""
    if part.media_type == PDF and part.url is not None:
        return {"type": "url", "url": part.url}
    if part.media_type == PDF and part.data is not None:
        check_size(provider, part, PDF_LIMIT)
        return {"type": "base64", "media_type": PDF, "data": b64(part.data)}
    if part.url is not None:
        why = f"a document by URL must be a PDF, not {part.media_type}"
        raise unsupported(provider, part, where, why)
    text = _plain_text(provider, part, where)
    return {"type": "text", "media_type": "text/plain", "data": text}


def _document(provider: str, part: DocumentPart, where: str) -> JsonObject:
    """A `document` block, titled when the part has a title."""
    block: JsonObject = {"type": "document", "source": _document_source(provider, part, where)}
    if part.title:
        block["title"] = part.title
    return block


def _block(provider: str, part: ContentPart, where: str) -> JsonObject | None:
    """One part's block; None for blank text (Anthropic refuses an empty text block)."""
    match part:
        case TextPart():
            return {"type": "text", "text": part.text} if part.text.strip() else None
        case ImagePart():
            return _image(provider, part, where)
        case DocumentPart():
            return _document(provider, part, where)
        case AudioPart():
            raise unsupported(provider, part, where, "the Messages API has no audio input")
        case CachePoint():
            return None  # content_blocks marks the block before it
        case _:
            assert_never(part)


def content_blocks(provider: str, parts: Iterable[ContentPart], where: str) -> list[JsonObject]:
    """The parts as content blocks in their order (`where`: `USER_MESSAGE` or `TOOL_RESULT`,
    named in the errors). A `CachePoint` puts `cache_control` on the block before it."""
    blocks: list[JsonObject] = []
    for part in parts:
        if isinstance(part, CachePoint):
            if blocks:
                blocks[-1]["cache_control"] = {"type": "ephemeral"}
        elif (block := _block(provider, part, where)) is not None:
            blocks.append(block)
    return blocks

"""How big an image, a PDF or a sound is, read from its first bytes with the standard library:
an image's width and height (PNG, JPEG, GIF, WebP headers), a PDF's page count, a WAV file's
duration. Token estimates use them (`_tokens.part_tokens`); anything unreadable is None."""

from __future__ import annotations

import re

_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG_FRAMES = frozenset(
    (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF)
)
"""The JPEG start-of-frame markers: the segment that holds the image's size."""
_JPEG_STANDALONE = frozenset((0x01, *range(0xD0, 0xD9)))
"""Markers without a length (TEM, RSTn, SOI)."""
_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
Size = tuple[int, int]


def _be16(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 2], "big")


def _le(data: bytes, at: int, width: int) -> int:
    return int.from_bytes(data[at : at + width], "little")


def _png(data: bytes) -> Size | None:
    if data[12:16] != b"IHDR" or len(data) < 24:
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _gif(data: bytes) -> Size | None:
    return (_le(data, 6, 2), _le(data, 8, 2)) if len(data) >= 10 else None


def _jpeg(data: bytes) -> Size | None:
    """The size in the first start-of-frame segment, walking the segments before it."""
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
        elif marker in _JPEG_STANDALONE:
            at += 2
        elif marker in _JPEG_FRAMES:
            return _be16(data, at + 7), _be16(data, at + 5)
        else:
            at += 2 + _be16(data, at + 2)
    return None


def _webp(data: bytes) -> Size | None:
    kind = data[12:16]
    if kind == b"VP8X" and len(data) >= 30:
        return _le(data, 24, 3) + 1, _le(data, 27, 3) + 1
    if kind == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = _le(data, 21, 4)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        return _le(data, 26, 2) & 0x3FFF, _le(data, 28, 2) & 0x3FFF
    return None


def image_size(data: bytes) -> Size | None:
    """An image's (width, height) in pixels from its header, or None when unreadable."""
    if data.startswith(_PNG):
        size = _png(data)
    elif data.startswith((b"GIF87a", b"GIF89a")):
        size = _gif(data)
    elif data.startswith(b"\xff\xd8"):
        size = _jpeg(data)
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        size = _webp(data)
    else:
        size = None
    return size if size is not None and size[0] > 0 and size[1] > 0 else None


def pdf_pages(data: bytes) -> int | None:
    """A PDF's page count (its page objects), or None when none can be seen (their objects may
    be compressed into object streams)."""
    count = len(_PAGE.findall(data))
    return count or None


def wav_seconds(data: bytes) -> float | None:
    """A WAV file's duration from its `fmt ` byte rate, or None when it has no readable one."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    at = 12
    while at + 8 <= len(data):
        chunk, length = data[at : at + 4], _le(data, at + 4, 4)
        if chunk == b"fmt " and length >= 16 and at + 20 <= len(data):
            rate = _le(data, at + 16, 4)
            return max(len(data) - 44, 0) / rate if rate else None
        at += 8 + length + (length & 1)
    return None

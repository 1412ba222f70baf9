"""Small real image files made with the standard library, for tests that send or measure
images: a PNG of any size (one colour), and the headers of GIF, JPEG and WebP files."""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def png(width: int, height: int, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A valid PNG of one colour (8-bit RGB)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    row = b"\x00" + bytes(rgb) * width
    pixels = zlib.compress(row * height, 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", pixels)
        + _chunk(b"IEND", b"")
    )


def gif_header(width: int, height: int) -> bytes:
    """The first bytes of a GIF (signature and logical screen size)."""
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00"


def jpeg_header(width: int, height: int, marker: int = 0xC0) -> bytes:
    """The first bytes of a JPEG: an APP0 segment, then a start-of-frame segment (`marker`)."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    frame = struct.pack(">BHHB", 8, height, width, 3) + b"\x01\x22\x00" * 3
    sof = bytes((0xFF, marker)) + struct.pack(">H", len(frame) + 2) + frame
    return b"\xff\xd8" + app0 + sof


def webp_header(width: int, height: int, kind: bytes = b"VP8X") -> bytes:
    """The first bytes of a WebP file of the VP8X (extended), VP8L (lossless) or VP8 kind."""
    if kind == b"VP8X":
        body = b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little")
        body += (height - 1).to_bytes(3, "little")
    elif kind == b"VP8L":
        bits = (width - 1) | ((height - 1) << 14)
        body = b"\x2f" + bits.to_bytes(4, "little")
    else:
        body = b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", width, height)
    chunk = kind + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", len(chunk) + 4) + b"WEBP" + chunk

"""The parts messages are made of besides tool calls: text, reasoning, images, documents, audio.

A reasoning part keeps what the provider sent as it came (signatures, redacted data, encrypted
content), since the vendors verify those bytes when the part is sent back (ADR-0026). It also
says which provider and model produced it: only that provider, on a model of the same family,
gets it back as reasoning.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Literal, TypeAlias

from attrs import field, frozen

from reactloop._core._cache import CachePoint
from reactloop._errors import ConfigurationError
from reactloop._validate import checked_arguments, optional_text


def _tuple_of(value: object) -> object:
    """A list given for a tuple field, as a tuple (anything else unchanged)."""
    return tuple(value) if isinstance(value, list) else value


@frozen
class TextPart:
    """Text in its place among a message's other parts (what the model or the user said, what a
    tool returned)."""

    text: str


@frozen
class ReasoningPart:
    """What the model thought before the parts that follow it.

    - `text`: the readable reasoning (Anthropic thinking, `reasoning_content`), or "".
    - `summary`: OpenAI Responses reasoning summaries, one string per summary part.
    - `signature`: Anthropic's thinking signature, or a Gemini thought signature.
    - `redacted`: Anthropic's `redacted_thinking` data (encrypted; no readable text).
    - `encrypted`: OpenAI's `encrypted_content`; `id`: the vendor's id of the item.
    - `followed_by`: the vendor's id of the item that followed it (OpenAI Responses pairs a
      reasoning item with that item by its id), so a journaled run sends both back as they came.
    - `provider`, `model`: who produced it (the provider's name and the configured model).
    """

    text: str = ""
    summary: tuple[str, ...] = field(default=(), converter=_tuple_of)
    signature: str | None = None
    redacted: str | None = None
    encrypted: str | None = None
    id: str | None = None
    followed_by: str | None = None
    provider: str | None = None
    model: str | None = None

    @property
    def readable(self) -> str:
        """The reasoning a person can read: the text, else the summaries joined."""
        return self.text or "\n\n".join(self.summary)

    @property
    def is_opaque(self) -> bool:
        """True when the part carries a vendor value that must go back byte-identical."""
        return any(v is not None for v in (self.signature, self.redacted, self.encrypted))


ImageDetail: TypeAlias = Literal["auto", "low", "high"]
"""How closely an OpenAI model looks at an image (other vendors ignore it)."""

_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_AUDIO_FORMATS = {
    "wav": "audio/wav",
    "mp3": "audio/mpeg",
    "flac": "audio/flac",
    "ogg": "audio/ogg",
    "m4a": "audio/mp4",
    "webm": "audio/webm",
    "aac": "audio/aac",
    "pcm16": "audio/pcm",
}


def sniff_image_type(data: bytes) -> str | None:
    """The media type of image bytes from their first bytes (PNG, JPEG, GIF, WebP), else None."""
    for signature, media_type in _IMAGE_SIGNATURES:
        if data.startswith(signature):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _size(data: bytes | None) -> str:
    """A part's bytes as its repr shows them: their size, never the bytes."""
    return "None" if data is None else f"<{len(data):,} bytes>"


def _one_source(owner: str, **sources: object) -> None:
    given = [name for name, value in sources.items() if value is not None]
    if len(given) != 1:
        names = " or ".join(f"`{name}`" for name in sources)
        raise _invalid(f"{owner}", given or None, f"given exactly one of {names}")


def _invalid(option: str, value: object, rule: str) -> Exception:
    return ConfigurationError.invalid(option, value, rule)


def _bytes_or_none(owner: str, value: object) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise _invalid(f"{owner}.data", value, "bytes (the file's content, not base64 text)")


def _as_bytes(value: bytes | bytearray | memoryview | None) -> bytes | None:
    """A bytearray or memoryview given for bytes, as bytes (anything else left for the check)."""
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return value


def _as_some_bytes(value: bytes | bytearray | memoryview) -> bytes:
    return bytes(value) if isinstance(value, bytearray | memoryview) else value


def _read(path: str | os.PathLike[str]) -> bytes:
    with open(path, "rb") as file:
        return file.read()


@checked_arguments
@frozen
class ImagePart:
    """An image the model looks at: its bytes (`data`) or a `url` the vendor fetches.

    `media_type` (`image/png`, `image/jpeg`, `image/gif`, `image/webp`) is read from the bytes
    when not given; `detail` asks OpenAI models for a low- or high-resolution look.
    """

    data: bytes | None = field(default=None, repr=_size, converter=_as_bytes)
    url: str | None = None
    media_type: str | None = None
    detail: ImageDetail | None = None

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "data", _bytes_or_none("ImagePart", self.data))
        optional_text("ImagePart.url", self.url)
        optional_text("ImagePart.media_type", self.media_type)
        _one_source("ImagePart", data=self.data, url=self.url)
        if self.data is not None and self.media_type is None:
            sniffed = sniff_image_type(self.data)
            if sniffed is None:
                rule = "given for bytes that are not PNG, JPEG, GIF or WebP"
                raise _invalid("ImagePart.media_type", None, rule)
            object.__setattr__(self, "media_type", sniffed)
        if self.media_type is not None and not self.media_type.startswith("image/"):
            raise _invalid("ImagePart.media_type", self.media_type, "an image/* media type")
        if self.detail not in (None, "auto", "low", "high"):
            raise _invalid("ImagePart.detail", self.detail, "'auto', 'low', 'high' or None")

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, detail: ImageDetail | None = None
    ) -> ImagePart:
        """An image read from a file (its type read from its bytes)."""
        return cls(_read(path), detail=detail)


@checked_arguments
@frozen
class DocumentPart:
    """A document the model reads: a PDF's bytes (`data`) or `url`, or plain `text`.

    `media_type` is `application/pdf` for bytes and URLs unless given, `text/plain` for text;
    `title` names it to the model (and is the file name OpenAI is sent).
    """

    data: bytes | None = field(default=None, repr=_size, converter=_as_bytes)
    url: str | None = None
    text: str | None = None
    media_type: str | None = None
    title: str | None = None

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "data", _bytes_or_none("DocumentPart", self.data))
        optional_text("DocumentPart.url", self.url)
        optional_text("DocumentPart.text", self.text, blank=True)
        optional_text("DocumentPart.media_type", self.media_type)
        optional_text("DocumentPart.title", self.title)
        _one_source("DocumentPart", data=self.data, url=self.url, text=self.text)
        if self.media_type is None:
            media_type = "text/plain" if self.text is not None else "application/pdf"
            object.__setattr__(self, "media_type", media_type)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, title: str | None = None) -> DocumentPart:
        """A document read from a file: `.pdf` as bytes, anything else as UTF-8 text."""
        name = os.path.basename(os.fspath(path))
        if name.lower().endswith(".pdf"):
            return cls(_read(path), title=title or name)
        return cls(text=_read(path).decode("utf-8"), title=title or name)


@checked_arguments
@frozen
class AudioPart:
    """Audio the model listens to: its bytes and their `format` (`wav`, `mp3`, ...)."""

    data: bytes = field(repr=_size, converter=_as_some_bytes)
    format: str

    def __attrs_post_init__(self) -> None:
        data = _bytes_or_none("AudioPart", self.data)
        if data is None:
            raise _invalid("AudioPart.data", None, "bytes")
        object.__setattr__(self, "data", data)
        if not isinstance(self.format, str) or self.format not in _AUDIO_FORMATS:
            raise _invalid("AudioPart.format", self.format, f"one of {sorted(_AUDIO_FORMATS)}")

    @property
    def media_type(self) -> str:
        """The audio's media type (`audio/wav`, `audio/mpeg`, ...)."""
        return _AUDIO_FORMATS[self.format]

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> AudioPart:
        """Audio read from a file, its format from the file's extension."""
        return cls(_read(path), os.fspath(path).rsplit(".", 1)[-1].lower())


ContentPart: TypeAlias = TextPart | ImagePart | DocumentPart | AudioPart | CachePoint
"""One part of what a user says or a tool returns, in order (a `CachePoint` marks a cache
breakpoint and carries no content)."""

CONTENT_PART_TYPES = (TextPart, ImagePart, DocumentPart, AudioPart, CachePoint)

BinaryPart: TypeAlias = ImagePart | DocumentPart | AudioPart
"""A part that is not text (what providers check, stores keep once, token estimates count)."""


def text_of(parts: Iterable[object]) -> str:
    """The text parts of `parts`, joined."""
    return "".join(part.text for part in parts if isinstance(part, TextPart))


def describe(part: ContentPart) -> str:
    """A one-line description of a part, for logs, the CLI and errors ("image/png, 5,120 bytes")."""
    if isinstance(part, TextPart):
        return f"text, {len(part.text):,} characters"
    if isinstance(part, CachePoint):
        return "cache point"
    if isinstance(part, AudioPart):
        return f"audio {part.format}, {len(part.data):,} bytes"
    kind = "image" if isinstance(part, ImagePart) else "document"
    if part.url is not None:
        return f"{kind} {part.media_type or ''} at {part.url}".replace("  ", " ")
    if isinstance(part, DocumentPart) and part.text is not None:
        return f"document {part.title or ''} {len(part.text):,} characters".replace("  ", " ")
    return f"{kind} {part.media_type}, {len(part.data or b''):,} bytes"

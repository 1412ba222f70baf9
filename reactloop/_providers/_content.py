"""What every provider needs to send content parts: base64 and data URLs, the typed errors for
a part a provider cannot take or that is too large (published by `reactloop.errors`; the tree
in `reactloop/_errors.py` shows their place), and the file name a document is sent as.

Each provider's encoder decides what it takes where; these helpers keep the wording of the
errors and the encodings the same on all of them.
"""

from __future__ import annotations

import base64

from reactloop._core import BinaryPart, ContentPart, DocumentPart, ImagePart, describe
from reactloop._errors import ProviderConfigurationError


class UnsupportedContentError(ProviderConfigurationError):
    """A message holds a part (an image, a document, audio) that this provider cannot take
    where it is (in a user message, in a tool result), found before anything is sent: never
    dropped silently. `part` describes it, `where` says where it was."""

    def __init__(self, provider: str, part: str, where: str, why: str) -> None:
        super().__init__(
            f"{provider} cannot take {part} in {where}: {why}",
            provider=provider,
            option="parts",
            value=part,
            rule=f"parts {provider} takes in {where}",
        )
        self.part = part
        self.where = where


class ContentTooLargeError(ProviderConfigurationError):
    """A part is larger than the provider accepts (`size` and `limit` in bytes), found before
    anything is sent."""

    def __init__(self, provider: str, part: str, size: int, limit: int) -> None:
        super().__init__(
            f"{provider} takes parts of at most {limit:,} bytes, got {part} of {size:,} bytes",
            provider=provider,
            option="parts",
            value=part,
            rule=f"at most {limit:,} bytes",
        )
        self.part = part
        self.size = size
        self.limit = limit


def b64(data: bytes) -> str:
    """Bytes as standard base64 text, what every vendor's JSON takes."""
    return base64.b64encode(data).decode("ascii")


def data_url(media_type: str, data: bytes) -> str:
    """Bytes as a `data:` URL (OpenAI's image and file inputs)."""
    return f"data:{media_type};base64,{b64(data)}"


def image_url(part: ImagePart) -> str:
    """The URL an OpenAI API is sent for an image: its own URL, or its bytes as a data URL."""
    if part.url is not None:
        return part.url
    return data_url(part.media_type or "image/png", part.data or b"")


def document_name(part: DocumentPart) -> str:
    """The file name a document is sent under: its title, else one from its media type."""
    if part.title:
        return part.title
    return "document.pdf" if part.media_type == "application/pdf" else "document.txt"


def unsupported(provider: str, part: ContentPart, where: str, why: str) -> UnsupportedContentError:
    """The error for a part `provider` cannot take `where` ("a user message", "a tool result")."""
    return UnsupportedContentError(provider, describe(part), where, why)


def check_size(provider: str, part: BinaryPart, limit: int) -> None:
    """Refuse a part whose bytes are over `limit` (what the vendor documents), before sending."""
    data = part.data
    if data is not None and len(data) > limit:
        raise ContentTooLargeError(provider, describe(part), len(data), limit)

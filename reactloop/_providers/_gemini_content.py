"""Neutral messages as Gemini `contents`: `user` and `model` turns of parts, tool results as
`functionResponse` parts of a user turn, images, documents and audio as `inlineData` (bytes,
base64) or `fileData` (a URL), and thought signatures sent back on the part that carried them.

Gemini takes images (PNG, JPEG, WebP, HEIC, HEIF), PDFs and text documents, and audio (WAV, MP3,
AIFF, AAC, OGG, FLAC); inline data may total 20 MB per request (ai.google.dev/gemini-api/docs:
"Image understanding", "Document understanding", "Audio understanding"; file input methods).
A part it cannot take, or inline data over that size, is refused here before anything is sent.

Thought signatures (ai.google.dev/gemini-api/docs/thought-signatures): a `ReasoningPart` this
provider and model family produced (`replays`) goes back as it came, its signature on the next
part of the turn (or a `thought: true` text part when it has text); reasoning from elsewhere is
not sent. The first `functionCall` of a model turn that carries no signature (a call begun by
another model) gets Google's documented placeholder, which Gemini 3 accepts in place of one.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable
from typing import assert_never
from urllib.parse import urlsplit

from attrs import define, field

from reactloop._core import (
    AssistantMessage,
    AudioPart,
    CachePoint,
    ContentPart,
    DocumentPart,
    ImagePart,
    JsonObject,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
    describe,
    is_blank,
    only_reasoning,
)
from reactloop._providers._content import ContentTooLargeError, b64, check_size, unsupported
from reactloop._providers._wire import arguments_object, replays, tool_result_text

__all__ = [
    "INLINE_LIMIT",
    "SKIP_SIGNATURE",
    "Contents",
    "encode_contents",
]

INLINE_LIMIT = 20 * 1024 * 1024
"""Gemini's limit on a request's inline data (20 MB, base64 included)."""
RAW_LIMIT = INLINE_LIMIT // 4 * 3
"""The most bytes one part may have once its base64 fits in 20 MB."""

SKIP_SIGNATURE = "Y29udGV4dF9lbmdpbmVlcmluZ19pc190aGVfd2F5X3RvX2dv"
"""Google's documented placeholder signature (`context_engineering_is_the_way_to_go`, as the
base64 bytes field carries it): sent on a function call no Gemini model signed, so that Gemini 3
takes a tool loop begun by another model (thought-signatures page, "FAQs")."""

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
AUDIO_TYPES = {
    "wav": "audio/wav",
    "mp3": "audio/mp3",
    "aac": "audio/aac",
    "ogg": "audio/ogg",
    "flac": "audio/flac",
}
"""`AudioPart.format` -> the media type Gemini's audio guide lists (no M4A, WebM or raw PCM)."""
PDF = "application/pdf"
USER_MESSAGE = "a user message"
TOOL_RESULT = "a tool result"
USER, MODEL = "user", "model"


@define
class Contents:
    """What one request's contents are built with: who is asked (what reasoning replays), where
    a tool result's media go, and the inline bytes counted so far (one 20 MB budget)."""

    provider: str
    model: str
    media_in_results: bool
    inline: int = 0
    turns: list[JsonObject] = field(factory=list)

    def add(self, role: str, parts: list[JsonObject]) -> None:
        """A turn, merged into the last one when it has the same role (a turn of no parts is
        left out: Gemini refuses one)."""
        if not parts:
            return
        if self.turns and self.turns[-1]["role"] == role:
            self.turns[-1]["parts"].extend(parts)
        else:
            self.turns.append({"role": role, "parts": parts})

    def inline_data(self, part: ImagePart | DocumentPart | AudioPart, mime: str) -> JsonObject:
        """`inlineData` for a part's bytes, within the request's 20 MB of inline data."""
        data = part.data or b""
        check_size(self.provider, part, RAW_LIMIT)
        self.inline += len(data)
        if self.inline > RAW_LIMIT:
            what = f"{describe(part)} (with the request's earlier inline data)"
            raise ContentTooLargeError(self.provider, what, self.inline, RAW_LIMIT)
        return {"inlineData": {"mimeType": mime, "data": b64(data)}}


def _file_data(url: str, mime: str | None) -> JsonObject:
    """`fileData` for a URL; its media type given, else read from the URL's extension (Gemini
    wants one for a URL outside its Files API), else left for Gemini to find."""
    data: JsonObject = {"fileUri": url}
    mime = mime or mimetypes.guess_type(urlsplit(url).path)[0]
    if mime:
        data["mimeType"] = mime
    return {"fileData": data}


def _image(how: Contents, part: ImagePart, where: str) -> JsonObject:
    if part.url is not None:
        return _file_data(part.url, part.media_type)
    if part.media_type not in IMAGE_TYPES:
        why = f"its images are PNG, JPEG, WebP, HEIC or HEIF, not {part.media_type}"
        raise unsupported(how.provider, part, where, why)
    return how.inline_data(part, part.media_type)


def _document(how: Contents, part: DocumentPart, where: str) -> JsonObject:
    """A PDF or text document by URL or as inline bytes; a document's text as a text part."""
    if part.text is not None:
        return {"text": f"{part.title}\n\n{part.text}" if part.title else part.text}
    mime = part.media_type or PDF
    if mime != PDF and not mime.startswith("text/"):
        why = f"its documents are PDFs or text (text/*), not {mime}"
        raise unsupported(how.provider, part, where, why)
    if part.url is not None:
        return _file_data(part.url, mime)
    return how.inline_data(part, mime)


def _audio(how: Contents, part: AudioPart, where: str) -> JsonObject:
    mime = AUDIO_TYPES.get(part.format)
    if mime is None:
        why = f"its audio is WAV, MP3, AAC, OGG or FLAC, not {part.format}"
        raise unsupported(how.provider, part, where, why)
    return how.inline_data(part, mime)


def _part(how: Contents, part: ContentPart, where: str) -> JsonObject | None:
    """One content part as a Gemini part; None for blank text and a `CachePoint` (Gemini caches
    implicitly: there is no breakpoint to mark)."""
    match part:
        case TextPart():
            return None if is_blank(part.text) else {"text": part.text}
        case ImagePart():
            return _image(how, part, where)
        case DocumentPart():
            return _document(how, part, where)
        case AudioPart():
            return _audio(how, part, where)
        case CachePoint():
            return None
        case _:
            assert_never(part)


def content_parts(how: Contents, parts: Iterable[ContentPart], where: str) -> list[JsonObject]:
    """The parts as Gemini parts, in their order."""
    return [wire for part in parts if (wire := _part(how, part, where)) is not None]


def _tool_result(how: Contents, message: ToolMessage) -> list[JsonObject]:
    """A `functionResponse` part: `{"output": text}`, or `{"error": text}` for a failed call
    (the keys Google documents for `FunctionResponse.response`). A result's images, PDFs and
    audio go in `functionResponse.parts` on Gemini 3 (which take inline data and file URIs, no
    text), else as parts after it; a text document always follows as a text part."""
    key = "error" if message.is_error else "output"
    response: JsonObject = {"name": message.name, "id": message.call_id}
    response["response"] = {key: tool_result_text(message)}
    media = [] if message.is_plain else content_parts(how, _binary(message.parts), TOOL_RESULT)
    texts = [part for part in media if "text" in part]
    media = [part for part in media if "text" not in part]
    if media and how.media_in_results:
        response["parts"] = media
        return [{"functionResponse": response}, *texts]
    return [{"functionResponse": response}, *media, *texts]


def _binary(parts: Iterable[ContentPart]) -> list[ContentPart]:
    """A result's parts that are not text (its text is the response's output)."""
    return [part for part in parts if not isinstance(part, TextPart | CachePoint)]


def _function_call(call: ToolCall) -> JsonObject:
    wire: JsonObject = {"name": call.name, "args": arguments_object(call.arguments)}
    return {"functionCall": {**wire, "id": call.id}}


def _model_parts(how: Contents, message: AssistantMessage) -> list[JsonObject]:
    """The answer's parts in order; a replayed signature on the part after it."""
    parts: list[JsonObject] = []
    signature: str | None = None
    for part in message.parts:
        match part:
            case ReasoningPart():
                if replays(part, how.provider, how.model):
                    signature = _reasoning(part, parts) or signature
                continue
            case TextPart():
                if is_blank(part.text) and signature is None:
                    continue
                wire = {"text": part.text}
            case ToolCall():
                wire = _function_call(part)
            case _:
                assert_never(part)
        if signature is not None:
            wire["thoughtSignature"] = signature
            signature = None
        parts.append(wire)
    if signature is not None:  # a signature on the answer's last (empty) part
        parts.append({"text": "", "thoughtSignature": signature})
    if message.refusal and is_blank(message.text):
        parts.append({"text": message.refusal})
    _sign_first_call(parts)
    return parts


def _reasoning(part: ReasoningPart, parts: list[JsonObject]) -> str | None:
    """A thought with text goes as a `thought` part (its signature on it); a signature alone
    is returned, for the next part."""
    if is_blank(part.text):
        return part.signature
    thought: JsonObject = {"text": part.text, "thought": True}
    if part.signature is not None:
        thought["thoughtSignature"] = part.signature
    parts.append(thought)
    return None


def _sign_first_call(parts: list[JsonObject]) -> None:
    """The placeholder signature on the turn's first function call when it has none."""
    first = next((part for part in parts if "functionCall" in part), None)
    if first is not None and "thoughtSignature" not in first:
        first["thoughtSignature"] = SKIP_SIGNATURE


def _turn(how: Contents, message: UserMessage | AssistantMessage | ToolMessage) -> None:
    match message:
        case UserMessage():
            how.add(USER, content_parts(how, message.parts, USER_MESSAGE))
        case AssistantMessage():
            how.add(MODEL, _model_parts(how, message))
        case ToolMessage():
            how.add(USER, _tool_result(how, message))
        case _:
            assert_never(message)


def encode_contents(
    messages: tuple[Message, ...], how: Contents
) -> tuple[list[str], list[JsonObject]]:
    """The system texts (for `systemInstruction`) and the `contents`, consecutive turns of one
    role merged; an answer holding only reasoning is left out (`only_reasoning`)."""
    system: list[str] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif not only_reasoning(message):
            _turn(how, message)
    return system, how.turns

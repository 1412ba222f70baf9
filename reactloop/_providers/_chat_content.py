"""Content parts on Chat Completions, as the API documents them: a user message with parts is a
`content` array (text, `image_url`, `file`, `input_audio`); a tool result is text only, so the
images, documents and audio a tool returned go in one user message after the tool messages of
the turn, each part after a text naming the call it came from and its number
(`Tool result of get_images (call_abc), image 1:`), while the `tool` message keeps the result's
text, or a note (`[image 1 follows]`) when it has none. A plain-text document goes as a text
part, its title on a first line (`Document: notes.txt`), since the API has no text-document part.

Everything here is checked before a request is sent: a part the API cannot take raises
`UnsupportedContentError`, a part over OpenAI's size limit `ContentTooLargeError`. OpenAI-compatible
servers (DeepSeek, Gemini's endpoint, local servers) go through the same code.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import assert_never

from reactloop._core import (
    AudioPart,
    BinaryPart,
    CachePoint,
    ContentPart,
    DocumentPart,
    ImagePart,
    JsonObject,
    Message,
    TextPart,
    ToolMessage,
    UserMessage,
    describe,
    is_blank,
    text_of,
)
from reactloop._providers._content import (
    ContentTooLargeError,
    b64,
    check_size,
    data_url,
    document_name,
    image_url,
    unsupported,
)
from reactloop._providers._openai_cache import encoded_parts, marked
from reactloop._providers._wire import tool_result_text

MB = 1024 * 1024
IMAGE_LIMIT = 20 * MB
"""OpenAI, "Images and vision" guide (image input requirements): up to 20 MB per image."""
FILE_LIMIT = 50 * MB
"""OpenAI, "File inputs" guide (file size limits): up to 50 MB of files in one request, each
file and all of them together."""
AUDIO_LIMIT = 25 * MB
"""OpenAI, "Audio and speech" / speech-to-text guides: audio files up to 25 MB."""

AUDIO_FORMATS = ("wav", "mp3")
"""The formats `input_audio` takes (`format: "wav" | "mp3"` in the API reference)."""

IN_USER = "a user message"
IN_TOOL = "a tool result"


def _empty(part: ContentPart) -> bool:
    return isinstance(part, TextPart) and not part.text


def user_content(
    provider: str, message: UserMessage, breakpoints: bool = False
) -> str | list[JsonObject]:
    """A user message's `content`: its text as a string when it holds text only (as always),
    else an array of its parts in order (empty text parts left out: they say nothing); with
    `breakpoints`, a cache point marks the part before it (`_openai_cache`)."""
    points = marked(message.parts, breakpoints)
    if not points and all(isinstance(part, TextPart | CachePoint) for part in message.parts):
        return message.text

    def encode(part: ContentPart) -> JsonObject:
        return encode_part(provider, part, IN_USER)

    return encoded_parts(message.parts, encode, _empty, points)


def encode_part(provider: str, part: ContentPart, where: str) -> JsonObject:
    """One part as a Chat Completions content part; `where` names the message for errors."""
    match part:
        case TextPart():
            return {"type": "text", "text": part.text}
        case ImagePart():
            return _image(provider, part)
        case DocumentPart():
            return _document(provider, part, where)
        case AudioPart():
            return _audio(provider, part, where)
        case CachePoint():  # left out by the callers: OpenAI takes no breakpoint here
            raise AssertionError("a cache point has no Chat Completions part")
        case _:
            assert_never(part)


def _image(provider: str, part: ImagePart) -> JsonObject:
    """An `image_url` part: the image's URL, or its bytes as a data URL; `detail` when set."""
    check_size(provider, part, IMAGE_LIMIT)
    url: JsonObject = {"url": image_url(part)}
    if part.detail is not None:
        url["detail"] = part.detail
    return {"type": "image_url", "image_url": url}


def document_text(part: DocumentPart, text: str) -> str:
    """A text document as the model reads it: a first line `Document: <title>` when it has a
    title, then its text unchanged (Chat Completions has no text-document part)."""
    return f"Document: {part.title}\n{text}" if part.title else text


def _document(provider: str, part: DocumentPart, where: str) -> JsonObject:
    """A PDF's bytes as a `file` part (`file_data`, a data URL, and `filename`); a text document,
    or bytes of a `text/*` type, as a text part. A URL is refused: the API has no file URL input
    (only `file_data` or an uploaded `file_id`)."""
    if part.url is not None:
        why = (
            "Chat Completions takes a document's bytes (file_data), not a URL; pass its bytes,"
            " or use OpenAIResponsesModel, which takes file_url"
        )
        raise unsupported(provider, part, where, why)
    if part.text is not None:
        return {"type": "text", "text": document_text(part, part.text)}
    data, media_type = part.data or b"", part.media_type or "application/pdf"
    if media_type == "application/pdf":
        check_size(provider, part, FILE_LIMIT)
        file = {"file_data": data_url(media_type, data), "filename": document_name(part)}
        return {"type": "file", "file": file}
    if media_type.startswith("text/"):
        return {"type": "text", "text": document_text(part, _utf8(provider, part, where))}
    why = "Chat Completions takes PDF files and text documents only"
    raise unsupported(provider, part, where, why)


def _utf8(provider: str, part: DocumentPart, where: str) -> str:
    """A text document's bytes as text; bytes that are not UTF-8 are refused."""
    try:
        return (part.data or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise unsupported(provider, part, where, "its bytes are not UTF-8 text") from None


def _audio(provider: str, part: AudioPart, where: str) -> JsonObject:
    """An `input_audio` part (base64 data and its format); formats other than wav and mp3 are
    refused, the API takes no other."""
    if part.format not in AUDIO_FORMATS:
        why = f"input_audio takes {' and '.join(AUDIO_FORMATS)} only, got {part.format!r}"
        raise unsupported(provider, part, where, why)
    check_size(provider, part, AUDIO_LIMIT)
    return {"type": "input_audio", "input_audio": {"data": b64(part.data), "format": part.format}}


def _files(messages: Sequence[Message]) -> Iterator[DocumentPart]:
    """The documents of the messages that go as `file` parts (PDF bytes), in order."""
    for message in messages:
        if isinstance(message, UserMessage | ToolMessage):
            documents = (part for part in message.parts if isinstance(part, DocumentPart))
            yield from (part for part in documents if _is_file(part))


def _is_file(part: DocumentPart) -> bool:
    """True for a document sent as a `file` part: PDF bytes."""
    return part.data is not None and part.media_type == "application/pdf"


def check_files(provider: str, messages: Sequence[Message]) -> None:
    """Refuse a request whose files (PDF bytes, the parts sent as `file`) are together over
    `FILE_LIMIT`, which OpenAI sets per request as well as per file."""
    used = 0
    for part in _files(messages):
        used += len(part.data or b"")
        if used > FILE_LIMIT:
            together = f"{describe(part)} (with the request's other files)"
            raise ContentTooLargeError(provider, together, used, FILE_LIMIT)


def _binary(message: ToolMessage) -> list[BinaryPart]:
    """A tool result's non-text parts, in order."""
    return [part for part in message.parts if not isinstance(part, TextPart | CachePoint)]


def _kind(part: BinaryPart) -> str:
    """What the model is told a part is: image, document or audio."""
    return {ImagePart: "image", DocumentPart: "document", AudioPart: "audio"}[type(part)]


def tool_content(message: ToolMessage) -> str:
    """A `tool` message's content, text only as the role requires: the result's text; when it
    has none but has other parts, a note naming them (`[image 1 follows]`), since those parts
    come in the user message after the turn's tool messages."""
    binary = _binary(message)
    if not binary or not is_blank(text_of(message.parts)):
        return tool_result_text(message)
    named = ", ".join(f"{_kind(part)} {n}" for n, part in enumerate(binary, 1))
    return f"[{named} {'follows' if len(binary) == 1 else 'follow'}]"


def tool_label(message: ToolMessage, part: BinaryPart, number: int) -> str:
    """The text that introduces one of a tool result's parts in the user message: the call it
    came from and the part's number (as the tool message's note counts them)."""
    return f"Tool result of {message.name} ({message.call_id}), {_kind(part)} {number}:"


def _attachments(provider: str, run: Sequence[ToolMessage]) -> JsonObject | None:
    """The one user message carrying the non-text parts of a run of tool messages (None when
    they have none): each part after a text naming its call, the shape OpenAI accepted in
    recorded traffic (a text, then the image, for each image)."""
    content: list[JsonObject] = []
    for message in run:
        for number, part in enumerate(_binary(message), 1):
            content.append({"type": "text", "text": tool_label(message, part, number)})
            content.append(encode_part(provider, part, IN_TOOL))
    return {"role": "user", "content": content} if content else None


def tool_attachments(provider: str, messages: Sequence[Message]) -> dict[int, JsonObject]:
    """By the index of the last tool message of each run of consecutive tool messages, the user
    message that follows that run with the parts its results could not carry. Sent after the
    whole run, so every call of the turn still meets its result right after it."""
    found: dict[int, JsonObject] = {}
    run: list[ToolMessage] = []
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            run.append(message)
        if run and (index + 1 == len(messages) or not isinstance(messages[index + 1], ToolMessage)):
            extra = _attachments(provider, run)
            if extra is not None:
                found[index] = extra
            run = []
    return found

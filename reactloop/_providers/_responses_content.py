"""Content parts as the OpenAI Responses API takes them, in a user message's `content` and in a
`function_call_output`'s `output` (the openai SDK's `ResponseInputContentParam` and
`ResponseFunctionCallOutputItemParam`): `input_text`, `input_image` (a URL or a data URL, with
its `detail`) and `input_file` (a `file_url`, or the bytes as a `file_data` data URL with a
`filename`).

A plain-text document goes as an `input_file` too (a `text/plain` data URL under its title):
OpenAI's "File inputs" guide lists `.txt` among the files the Responses API reads (it extracts
their text), so the model sees the document as a file with its name, as it sees a PDF. Audio is
refused: neither list takes an audio part (`input_audio` is in neither SDK union). Sizes are
checked before anything is sent (`IMAGE_LIMIT`, `FILES_LIMIT`).
"""

from __future__ import annotations

from typing import assert_never

from reactloop._core import (
    AudioPart,
    CachePoint,
    ContentPart,
    DocumentPart,
    ImagePart,
    JsonObject,
    TextPart,
    ToolMessage,
    UserMessage,
    describe,
    is_blank,
)
from reactloop._providers._content import (
    ContentTooLargeError,
    check_size,
    data_url,
    document_name,
    image_url,
    unsupported,
)
from reactloop._providers._openai_cache import encoded_parts, marked

MIB = 1024 * 1024
IMAGE_LIMIT = 20 * MIB
"""The most bytes one image may have: OpenAI's "Images and vision" guide (image input
requirements) allows images up to 20 MB each."""
FILES_LIMIT = 50 * MIB
"""The most bytes of files one request may carry: OpenAI's "File inputs" guide (file size
limits) allows 50 MB of files per request, all files together."""

USER = "a user message"
TOOL = "a tool result"
NO_AUDIO = (
    "the Responses API takes text, images and files there, no audio (openai SDK: no"
    " input_audio in a message's content or a function_call_output); send audio with"
    " OpenAIModel (Chat Completions) and an audio model"
)


class FileBudget:
    """The bytes of files one request has taken so far, refused past `FILES_LIMIT` (the limit
    is per request, so one budget serves all the messages a request sends)."""

    def __init__(self, provider: str, breakpoints: bool = False) -> None:
        self.provider = provider
        self.breakpoints = breakpoints  # cache points go as explicit cache breakpoints
        self.used = 0

    def take(self, part: DocumentPart, size: int) -> None:
        """Count a file of `size` bytes; refuse it when the request's files go over the limit."""
        self.used += size
        if self.used > FILES_LIMIT:
            together = f"{describe(part)} (with the request's other files)"
            raise ContentTooLargeError(self.provider, together, self.used, FILES_LIMIT)


def _image(provider: str, part: ImagePart) -> JsonObject:
    check_size(provider, part, IMAGE_LIMIT)
    return {"type": "input_image", "image_url": image_url(part), "detail": part.detail or "auto"}


def _file(part: DocumentPart, budget: FileBudget) -> JsonObject:
    if part.url is not None:
        item: JsonObject = {"type": "input_file", "file_url": part.url}
        if part.title:
            item["filename"] = part.title
        return item
    data = part.data if part.data is not None else (part.text or "").encode("utf-8")
    budget.take(part, len(data))
    media_type = part.media_type or "application/pdf"
    return {
        "type": "input_file",
        "file_data": data_url(media_type, data),
        "filename": document_name(part),
    }


def _content(part: ContentPart, where: str, budget: FileBudget) -> JsonObject:
    """One part as an input content item; audio is refused."""
    match part:
        case TextPart():
            return {"type": "input_text", "text": part.text}
        case ImagePart():
            return _image(budget.provider, part)
        case DocumentPart():
            return _file(part, budget)
        case AudioPart():
            raise unsupported(budget.provider, part, where, NO_AUDIO)
        case CachePoint():
            raise AssertionError("content_items leaves cache points out")
        case _:
            assert_never(part)


def has_binary(parts: tuple[ContentPart, ...]) -> bool:
    """True when a message holds a part besides text (then it goes as a list of items)."""
    return any(not isinstance(part, TextPart | CachePoint) for part in parts)


def content_items(
    parts: tuple[ContentPart, ...], where: str, budget: FileBudget
) -> list[JsonObject]:
    """The parts as input content items, in order (blank text between them left out; a cache
    point marks the item before it where the budget says breakpoints go)."""

    def encode(part: ContentPart) -> JsonObject:
        return _content(part, where, budget)

    return encoded_parts(parts, encode, _blank, budget.breakpoints)


def _blank(part: ContentPart) -> bool:
    return isinstance(part, TextPart) and is_blank(part.text)


def user_item(message: UserMessage, budget: FileBudget) -> JsonObject:
    """A user message: its text as `content` (as always), or its parts as a list of items when
    it holds an image, a document or audio."""
    if not has_binary(message.parts) and not marked(message.parts, budget.breakpoints):
        return {"role": "user", "content": message.text}
    return {"role": "user", "content": content_items(message.parts, USER, budget)}


def tool_output(message: ToolMessage, budget: FileBudget) -> list[JsonObject] | None:
    """A tool result's `output` as a list of items, or None when it is text only (then it goes
    as the string it always was)."""
    if not has_binary(message.parts):
        return None
    return content_items(message.parts, TOOL, budget)

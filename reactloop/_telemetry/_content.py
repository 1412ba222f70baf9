"""Messages as the GenAI conventions record content (`gen_ai.input.messages`,
`gen_ai.output.messages`, `gen_ai.system_instructions`): JSON text of role-and-parts objects.

Used only with `Telemetry(record_content=True)`: content may hold personal data. An assistant
message's parts keep their order; its reasoning is recorded as the conventions' reasoning part
(`{"type": "reasoning", "content": ...}`) with the text a person can read only: a signature,
redacted data or encrypted content is never recorded, and a part holding nothing else is left out.

Images, documents and audio (in user and tool messages) are recorded as the conventions' parts,
with their `modality` ("image", "audio", or "document" for a PDF) and `mime_type`: one given by
URL as a `uri` part; bytes of at most `BLOB_BYTES` as a `blob` part holding them in base64; larger
bytes as a `blob_omitted` part (the conventions' generic part) holding only their size, since
tracing backends cap an attribute's length and a 10 MB PDF would be cut or dropped. A text
document is a `text` part. Nothing of a part is recorded without `record_content`.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from reactloop._core import (
    AssistantMessage,
    AssistantPart,
    AudioPart,
    CachePoint,
    ContentPart,
    DocumentPart,
    ImagePart,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from reactloop._unicode import dumps

Part = dict[str, Any]
BLOB_BYTES = 65_536
"""Largest image, document or audio recorded with its bytes (base64); a larger one is named by
its type and size only."""


def _arguments(call: ToolCall) -> Any:
    """A call's arguments as a JSON value; text the model left unparseable stays text."""
    try:
        return orjson.loads(call.arguments)
    except orjson.JSONDecodeError:
        return call.arguments


def _part(part: AssistantPart) -> Part | None:
    """One part of an assistant message as the conventions record it (None: nothing to record)."""
    match part:
        case TextPart(text=text):
            return {"type": "text", "content": text} if text else None
        case ReasoningPart():
            readable = part.readable
            return {"type": "reasoning", "content": readable} if readable else None
        case ToolCall():
            return {
                "type": "tool_call", "id": part.id, "name": part.name,
                "arguments": _arguments(part),
            }  # fmt: skip


def _modality(part: ImagePart | DocumentPart | AudioPart) -> str:
    if isinstance(part, ImagePart):
        return "image"
    return "audio" if isinstance(part, AudioPart) else "document"


def content_part(part: ContentPart) -> Part:
    """A user's or a tool's part as the conventions record it (see the module's note)."""
    if isinstance(part, TextPart):
        return {"type": "text", "content": part.text}
    if isinstance(part, DocumentPart) and part.text is not None:
        return {"type": "text", "content": part.text}
    if isinstance(part, CachePoint):
        return {"type": "cache_point"}
    shown: Part = {"modality": _modality(part)}
    if part.media_type is not None:  # an image by URL may not say
        shown["mime_type"] = part.media_type
    if isinstance(part, AudioPart):
        return _blob(shown, part.data)
    if part.data is None:
        return {"type": "uri", **shown, "uri": part.url}
    return _blob(shown, part.data)


def _blob(shown: Part, data: bytes) -> Part:
    if len(data) > BLOB_BYTES:
        return {"type": "blob_omitted", **shown, "size": len(data)}
    return {"type": "blob", **shown, "content": base64.b64encode(data).decode()}


def _parts(parts: Sequence[ContentPart]) -> list[Part]:
    return [content_part(part) for part in parts]


def _media(parts: Sequence[ContentPart]) -> list[Part]:
    """A tool message's parts other than text (its text is the call's response)."""
    return [content_part(part) for part in parts if not isinstance(part, TextPart)]


def _assistant_parts(message: AssistantMessage) -> list[Part]:
    return [entry for entry in map(_part, message.parts) if entry is not None]


def _entry(message: Message) -> dict[str, Any]:
    match message:
        case AssistantMessage():
            return {"role": "assistant", "parts": _assistant_parts(message)}
        case ToolMessage():
            part = {
                "type": "tool_call_response",
                "id": message.call_id,
                "response": message.text,
            }
            media = [] if message.is_plain else _media(message.parts)
            return {"role": "tool", "parts": [part, *media]}
        case SystemMessage():
            return {"role": "system", "parts": [{"type": "text", "content": message.text}]}
        case _:
            return {"role": "user", "parts": _parts(message.parts)}


def input_messages(messages: Iterable[Message]) -> str:
    """The messages sent to the model."""
    return dumps([_entry(message) for message in messages], where="span content").decode()


def output_messages(answer: AssistantMessage | str, finish_reason: str | None) -> str:
    """The model's answer (or a run's final text), with why it finished when known."""
    message = answer if isinstance(answer, AssistantMessage) else AssistantMessage(answer)
    entry = _entry(message)
    if finish_reason is not None:
        entry["finish_reason"] = finish_reason
    return dumps([entry], where="span content").decode()


def system_instructions(instructions: str) -> str:
    """The request's instructions (the system prompt)."""
    return dumps([{"type": "text", "content": instructions}], where="span content").decode()

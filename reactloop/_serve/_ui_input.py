"""The AI SDK's chat request (what `DefaultChatTransport` posts: `{id, messages, trigger,
messageId}`) read into a `ChatTurn`, and the protocol adapter the HTTP layer mounts.

What is believed of a posted transcript: the chat id (the session), the last user message
(the new turn: text and files) and, on the last assistant message, the answers to approval
requests (`approval-responded` tool parts: approved runs the call, not approved denies it with
the reason given). Without a store, earlier user turns (text and files) and assistant text are
the history; tool calls, tool results, reasoning and system messages a client posts are never
believed (dropped). With a store none of the history is read: the journal is the truth.

A retried request (the same chat and user message ids) names the same run, so it starts once.
`regenerate()` asks again in a run of its own, another turn of the session (the session's
messages then hold both answers).

A call held as external (`@tool(external=True)`) shows as `input-available`; its result is
given through AG-UI or `loop.resume(...)`: a posted `output-available` part is not believed (the
client's tool parts carry the server's results too, so one the client ran cannot be told from
them).

The AI SDK's approval response carries no changed input (`addToolApprovalResponse` takes `id`,
`approved`, `reason`; a posted part's `input` is ignored, the held arguments run): an edited
call is decided through AG-UI or `loop.resume(..., decisions={call_id: Edit(...)})`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from reactloop._core import (
    Approve,
    AssistantMessage,
    AudioPart,
    ContentPart,
    Decision,
    Deny,
    DocumentPart,
    ImagePart,
    Message,
    TextPart,
    UserMessage,
)
from reactloop._errors import ConfigurationError
from reactloop._serve._contracts import ChatTurn, StreamContext, StreamEncoder
from reactloop._serve._errors import MalformedRequestError
from reactloop._serve._json import request_json
from reactloop._serve._ui_stream import UIStreamEncoder, message_id_of
from reactloop._unicode import MAX_ID_LENGTH

TRIGGERS = ("submit-message", "regenerate-message")
ROLES = ("system", "user", "assistant")
AUDIO_FORMATS: Mapping[str, str] = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/flac": "flac",
    "audio/ogg": "ogg",
    "audio/mp4": "m4a",
    "audio/x-m4a": "m4a",
    "audio/webm": "webm",
    "audio/aac": "aac",
}
"""The audio media types a file part may have, and the `AudioPart` format of each."""


def _malformed(what: str, value: object, rule: str) -> MalformedRequestError:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return MalformedRequestError(f"{what} must be {rule}, got {shown}", rule=f"{what}: {rule}")


def _field(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    """`obj[key]`, which must be of `kind` (a non-empty string for `str`)."""
    value = obj.get(key)
    if not isinstance(value, kind) or (kind is str and not value):
        rule = "a non-empty string" if kind is str else f"a JSON {_KIND_NAMES[kind]}"
        raise _malformed(f"{where}.{key}", value, rule)
    return value


_KIND_NAMES: Mapping[type, str] = {dict: "object", list: "array", bool: "boolean", str: "string"}


def _session_id(value: object) -> str:
    """The chat id, which names the session: an id the stores take."""
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= MAX_ID_LENGTH
        or value.isspace()
        or any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in value)
    ):
        rule = f"a chat id of 1 to {MAX_ID_LENGTH} characters without control characters"
        raise _malformed("id", value, rule)
    return value


def run_id_of(chat_id: str, user_message_id: str, regenerated: str | None = None) -> str:
    """The run a user message starts: the same for a retried request (so it starts once),
    another for each regeneration of an answer."""
    key = "\x00".join((chat_id, user_message_id, regenerated or ""))
    return "ui-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`messages`: a non-empty array of messages, each with an id, a role and parts."""
    messages: list[dict[str, Any]] = _field(body, "messages", list, "body")
    if not messages:
        raise _malformed("body.messages", messages, "a non-empty array of UI messages")
    for n, message in enumerate(messages):
        where = f"messages[{n}]"
        if not isinstance(message, dict):
            raise _malformed(where, message, "a UI message object")
        _field(message, "id", str, where)
        if message.get("role") not in ROLES:
            raise _malformed(
                f"{where}.role", message.get("role"), "'system', 'user' or 'assistant'"
            )
        for k, part in enumerate(_field(message, "parts", list, where)):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise _malformed(f"{where}.parts[{k}]", part, "a part object with a string type")
    return messages


def _data_url(url: str, where: str) -> tuple[str, bytes]:
    """A `data:` URL's media type and bytes (base64, or percent-free plain text)."""
    head, comma, payload = url.partition(",")
    if not comma:
        raise _malformed(where, url[:40], "a data URL (data:<type>;base64,<data>)")
    media_type, *params = head[len("data:") :].split(";")
    try:
        data = base64.b64decode(payload, validate=True) if "base64" in params else payload.encode()
    except (binascii.Error, ValueError):
        raise _malformed(where, url[:40], "a data URL with valid base64 data") from None
    return media_type.lower(), data


def _file_part(part: Mapping[str, Any], where: str) -> ContentPart:
    """A file part as an image, a document or audio: bytes from a data URL, a URL kept."""
    url = _field(part, "url", str, where)
    media_type = _field(part, "mediaType", str, where).lower()
    title = part.get("filename") if isinstance(part.get("filename"), str) else None
    try:
        if url.startswith("data:"):
            return _file_bytes(media_type, *_data_url(url, f"{where}.url"), title, where)
        if url.startswith(("https://", "http://")):
            return _file_url(media_type, url, title, where)
    except ConfigurationError as error:
        raise _malformed(where, media_type, f"a file the model can read ({error})") from None
    raise _malformed(f"{where}.url", url[:40], "a data: URL or an http(s) URL")


def _file_bytes(
    media_type: str, sent_type: str, data: bytes, title: str | None, where: str
) -> ContentPart:
    if "/" not in media_type and "/" in sent_type:  # a top-level type ("image"): the URL's
        media_type = sent_type
    if media_type == "image" or media_type.startswith("image/"):  # "image": read from the bytes
        return ImagePart(data, media_type=media_type if "/" in media_type else None)
    if media_type == "application/pdf":
        return DocumentPart(data, title=title)
    if media_type.startswith("text/"):
        return DocumentPart(text=data.decode("utf-8", "replace"), title=title)
    if media_type in AUDIO_FORMATS:
        return AudioPart(data, AUDIO_FORMATS[media_type])
    raise _malformed(f"{where}.mediaType", media_type, "an image, PDF, text or audio type")


def _file_url(media_type: str, url: str, title: str | None, where: str) -> ContentPart:
    if media_type.startswith("image"):
        return ImagePart(url=url, media_type=media_type if "/" in media_type else None)
    if media_type == "application/pdf":
        return DocumentPart(url=url, title=title)
    raise _malformed(f"{where}.mediaType", media_type, "an image or PDF type for a file URL")


def _user_content(message: Mapping[str, Any], where: str) -> tuple[str | ContentPart, ...]:
    """The new turn: a user message's text and file parts, in order; any other part is
    refused, and so is a message with neither text nor a file."""
    content = _user_parts(message, where, strict=True)
    if not content:
        raise _malformed(f"{where}.parts", message["parts"], "a text or a file")
    return content


def _user_parts(
    message: Mapping[str, Any], where: str, *, strict: bool
) -> tuple[str | ContentPart, ...]:
    """A user message's text and file parts (empty texts left out); other parts refused when
    `strict`, else dropped."""
    content: list[str | ContentPart] = []
    for k, part in enumerate(message["parts"]):
        at = f"{where}.parts[{k}]"
        if part["type"] == "text":
            text = _field(part, "text", str, at) if part.get("text") != "" else ""
            content.extend([text] if text else [])
        elif part["type"] == "file":
            content.append(_file_part(part, at))
        elif strict:
            raise _malformed(f"{at}.type", part["type"], "'text' or 'file' in a user message")
    return tuple(content)


def _decisions(message: Mapping[str, Any], where: str) -> dict[str, Decision]:
    """The answers on an assistant message's tool parts in `approval-responded` state, by the
    approval id (the loop's call id)."""
    decisions: dict[str, Decision] = {}
    for k, part in enumerate(message["parts"]):
        if part.get("state") != "approval-responded" or not _is_tool(part["type"]):
            continue
        at = f"{where}.parts[{k}].approval"
        approval = _field(part, "approval", dict, f"{where}.parts[{k}]")
        call_id = _field(approval, "id", str, at)
        approved = _field(approval, "approved", bool, at)
        reason = approval.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise _malformed(f"{at}.reason", reason, "a string")
        decisions[call_id] = Approve() if approved else (Deny(reason) if reason else Deny())
    return decisions


def _is_tool(kind: str) -> bool:
    return kind.startswith("tool-") or kind == "dynamic-tool"


def _history_message(message: Mapping[str, Any], where: str) -> Message | None:
    """An earlier turn as a client may supply it (no store): a user's text and files, or an
    assistant's text; anything else is dropped."""
    if message["role"] == "user":
        parts = _user_parts(message, where, strict=False)
        return UserMessage(parts=parts) if parts else None
    if message["role"] == "assistant":
        texts = [p.get("text") for p in message["parts"] if p["type"] == "text"]
        kept = tuple(TextPart(t) for t in texts if isinstance(t, str) and t)
        return AssistantMessage(parts=kept) if kept else None
    return None


def _history(messages: Sequence[Mapping[str, Any]]) -> tuple[Message, ...]:
    kept = (_history_message(m, f"messages[{n}]") for n, m in enumerate(messages))
    return tuple(message for message in kept if message is not None)


def read_chat_request(body: bytes, *, has_store: bool) -> ChatTurn:
    """The turn an AI SDK chat request asks for: a new user message, or the answers to the
    approval requests on the last assistant message (then `content` is empty)."""
    try:
        parsed = request_json(body)
    except orjson.JSONDecodeError:
        raise _malformed("body", body[:40], "a JSON object (the AI SDK's chat request)") from None
    if not isinstance(parsed, dict):
        raise _malformed("body", parsed, "a JSON object (the AI SDK's chat request)")
    session_id = _session_id(parsed.get("id"))
    trigger = parsed.get("trigger", "submit-message")
    if trigger not in TRIGGERS:
        raise _malformed("body.trigger", trigger, "'submit-message' or 'regenerate-message'")
    messages = _messages(parsed)
    users = [n for n, message in enumerate(messages) if message["role"] == "user"]
    if not users:
        raise _malformed("body.messages", "no user message", "a transcript with a user message")
    last_user = users[-1]
    run_id = _new_run_id(session_id, messages[last_user]["id"], trigger, parsed.get("messageId"))
    history = () if has_store else _history(messages[:last_user])
    last = messages[-1]
    if last["role"] == "assistant" and trigger == "submit-message":
        decisions = _decisions(last, f"messages[{len(messages) - 1}]")
        if not decisions:
            rule = "a user message, or approval responses on the last assistant message"
            raise _malformed("body.messages", "an assistant message to go on with", rule)
        return ChatTurn(
            session_id,
            _answered_run(last["id"]),
            decisions=decisions,
            history=history,
            client_run_id=last["id"],
        )
    content = _user_content(messages[last_user], f"messages[{last_user}]")
    return ChatTurn(session_id, run_id, content=content, history=history)


def _new_run_id(
    session_id: str, user_message_id: str, trigger: str, message_id: object
) -> str | None:
    """The run a turn starts: named by the chat and the user message (a retried request names
    it again); a regeneration names the answer it replaces, and one that names none (the AI
    SDK's `regenerate()` of the last answer) is a fresh run each time (None)."""
    if trigger != "regenerate-message":
        return run_id_of(session_id, user_message_id)
    regenerated = _optional_id(message_id)
    return None if regenerated is None else run_id_of(session_id, user_message_id, regenerated)


def _answered_run(message_id: str) -> str | None:
    """The run whose held calls an assistant message answers: named by the message's id as
    its stream gave it (`{run_id}-assistant`); None (the session's paused run) for a message
    read back from the session's messages."""
    suffix = message_id_of("")
    return message_id[: -len(suffix)] or None if message_id.endswith(suffix) else None


def _optional_id(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _malformed("body.messageId", value, "a string or null")


class UIMessageStreamAdapter:
    """The AI SDK's UI message stream protocol (ai 7), as the HTTP layer mounts it."""

    name = "ai-sdk"

    def read_turn(self, body: bytes, *, has_store: bool) -> ChatTurn:
        """The turn a `DefaultChatTransport` request asks for (`read_chat_request`)."""
        return read_chat_request(body, has_store=has_store)

    def encoder(self, context: StreamContext) -> StreamEncoder:
        """A fresh UI message stream encoder for one response."""
        return UIStreamEncoder(context)


UI_MESSAGE_STREAM = UIMessageStreamAdapter()
"""The AI SDK adapter (`useChat`, `DefaultChatTransport`, `readUIMessageStream`)."""

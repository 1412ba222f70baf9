"""AG-UI 1.0 requests: a `RunAgentInput` body read into a `ChatTurn`, checked by hand (no
pydantic at run time), every refusal a `MalformedRequestError` naming the rule.

- `threadId` is the session, `runId` the stream's AG-UI run id (`client_run_id`); a request
  without `resume` starts the run of that id (sent again, it is the same run: it starts once).
- The new user turn is the last user message (text, image, audio, document parts; a video or
  a provider file handle is refused: the loop cannot read them). Messages after it are the
  client's copy of the run's answer (a reconnect posts its partial one) and are not read.
- `resume` entries answer held calls (the interrupt id is the call id): for an approval
  `{"approved": true}`, `{"approved": false, "reason": ...}` or `{"approved": true,
  "editedArgs": {...}}`; for an external tool `{"result": <any JSON>}` or `{"error": "..."}`;
  status `cancelled` denies the call. A request with `resume` resumes the thread's paused
  run; its messages are not read (the run goes on from where it paused).
- Untrusted history: with a store only the new user message and the resume entries are read
  (the journal is the truth). Without one the earlier turns become `history`, limited to
  user text and media and assistant text: tool calls, tool messages, reasoning (and anything
  encrypted), system and developer messages from a client are dropped, never believed.
- `state`, `tools`, `context` and `forwardedProps` are ignored: the server's tools and
  instructions are the loop's own.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
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
    Edit,
    ExternalFailure,
    ExternalResult,
    ImagePart,
    Message,
    UserMessage,
)
from reactloop._errors import ReactLoopError
from reactloop._serve._agui import AgUiEncoder
from reactloop._serve._contracts import ChatTurn, StreamContext
from reactloop._serve._errors import MalformedRequestError
from reactloop._serve._json import request_json

ROLES = frozenset({"developer", "system", "assistant", "user", "tool", "activity", "reasoning"})
MAX_ID = 256
CANCELLED_REASON = "the user cancelled the request"
_APPROVAL_KEYS = frozenset({"approved", "reason", "editedArgs"})
_EXTERNAL_KEYS = (frozenset({"result"}), frozenset({"error"}))
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/flac": "flac",
    "audio/ogg": "ogg",
    "audio/mp4": "m4a",
    "audio/webm": "webm",
    "audio/aac": "aac",
}


def _malformed(rule: str, value: object) -> MalformedRequestError:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return MalformedRequestError(f"the AG-UI request is malformed: {rule} (got {shown})", rule=rule)


def _object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _malformed(f"{where} is a JSON object", value)
    return value


def _identifier(body: Mapping[str, Any], key: str, where: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID or not value.isprintable():
        raise _malformed(f"{where}.{key} is a printable string of 1 to {MAX_ID} characters", value)
    return value


# --- content parts ------------------------------------------------------------------------


def _decoded(source: Mapping[str, Any], where: str) -> bytes:
    value = source.get("value")
    if not isinstance(value, str):
        raise _malformed(f"{where}.source.value is base64 text", value)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise _malformed(f"{where}.source.value is base64 text", value[:40]) from None


def _source(part: Mapping[str, Any], where: str) -> tuple[bytes | None, str | None, str | None]:
    """A media part's source as (bytes, url, media type); a provider file handle is refused."""
    source = _object(part.get("source"), f"{where}.source")
    kind = source.get("type")
    mime = source.get("mimeType")
    if mime is not None and not isinstance(mime, str):
        raise _malformed(f"{where}.source.mimeType is a string", mime)
    if kind == "data":
        if mime is None:
            raise _malformed(f"{where}.source.mimeType is given for inline data", source)
        return _decoded(source, where), None, mime
    if kind == "url":
        url = source.get("value")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise _malformed(f"{where}.source.value is an http(s) URL", url)
        return None, url, mime
    raise _malformed(f"{where}.source.type is 'data' or 'url' (no provider file handles)", kind)


def _audio(data: bytes | None, mime: str | None, where: str) -> AudioPart:
    audio_format = _AUDIO_FORMATS.get(mime or "")
    if data is None or audio_format is None:
        rule = f"{where} is inline audio of a known type ({', '.join(sorted(_AUDIO_FORMATS))})"
        raise _malformed(rule, mime)
    return AudioPart(data=data, format=audio_format)


def _media(kind: str, part: Mapping[str, Any], where: str) -> ContentPart:
    """An image, document or audio part (the part's own checks refuse what cannot be read)."""
    data, url, mime = _source(part, where)
    try:
        if kind == "image":
            return ImagePart(data=data, url=url, media_type=mime)
        if kind == "document":
            return DocumentPart(data=data, url=url, media_type=mime)
        return _audio(data, mime, where)
    except MalformedRequestError:
        raise
    except ReactLoopError as error:
        raise _malformed(f"{where} is a readable {kind}: {error.message}", mime) from None


def _part(value: object, where: str) -> str | ContentPart:
    part = _object(value, where)
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        if not isinstance(text, str):
            raise _malformed(f"{where}.text is a string", text)
        return text
    if kind in ("image", "audio", "document"):
        return _media(kind, part, where)
    rule = f"{where}.type is 'text', 'image', 'audio' or 'document' (video is not read)"
    raise _malformed(rule, kind)


def user_content(message: Mapping[str, Any], where: str) -> tuple[str | ContentPart, ...]:
    """A user message's content: a string, or a non-empty list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return (content,)
    if not isinstance(content, list) or not content:
        raise _malformed(f"{where}.content is a string or a non-empty list of parts", content)
    return tuple(_part(part, f"{where}.content[{n}]") for n, part in enumerate(content))


# --- messages -----------------------------------------------------------------------------


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The posted messages, each an object with an id and a known role."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _malformed("messages is a list", messages)
    checked = []
    for n, value in enumerate(messages):
        message = _object(value, f"messages[{n}]")
        _identifier(message, "id", f"messages[{n}]")
        if message.get("role") not in ROLES:
            raise _malformed(f"messages[{n}].role is one of {sorted(ROLES)}", message.get("role"))
        checked.append(message)
    return checked


def _believed(message: Mapping[str, Any], where: str) -> Message | None:
    """An earlier turn as the server may take it without a store: user text and media, and
    assistant text; None for everything else (dropped)."""
    role = message["role"]
    if role == "user":
        return UserMessage(parts=user_content(message, where))
    if role == "assistant":
        text = message.get("content")
        if text is not None and not isinstance(text, str):
            raise _malformed(f"{where}.content is a string", text)
        return AssistantMessage(text) if text else None
    return None


def _history(earlier: list[Mapping[str, Any]]) -> tuple[Message, ...]:
    found = (_believed(message, f"messages[{n}]") for n, message in enumerate(earlier))
    return tuple(message for message in found if message is not None)


def _last_user(messages: list[Mapping[str, Any]]) -> int:
    """Where the new user turn is: the last user message (what follows it is the client's copy
    of the run's own answer, e.g. a partial one before a reconnect)."""
    for n in range(len(messages) - 1, -1, -1):
        if messages[n]["role"] == "user":
            return n
    rule = "a new run's messages hold the user's new message (or resume answers held calls)"
    raise _malformed(rule, [message["role"] for message in messages])


# --- resume entries -----------------------------------------------------------------------


def _approval(payload: Mapping[str, Any], where: str) -> Decision:
    approved = payload.get("approved")
    if not isinstance(approved, bool):
        raise _malformed(f"{where}.approved is true or false", approved)
    reason = payload.get("reason")
    if reason is not None and (not isinstance(reason, str) or not reason.strip()):
        raise _malformed(f"{where}.reason is a non-blank string", reason)
    edited = payload.get("editedArgs")
    if edited is None:
        return Approve() if approved else Deny(reason) if reason else Deny()
    if not approved or not isinstance(edited, dict):
        raise _malformed(f"{where}.editedArgs is an object, with approved: true", edited)
    return Edit(edited)


def _external(payload: Mapping[str, Any], where: str) -> Decision:
    if "result" in payload:
        return ExternalResult(payload["result"])
    error = payload["error"]
    if not isinstance(error, str) or not error.strip():
        raise _malformed(f"{where}.error is a non-blank string", error)
    return ExternalFailure(error)


def decision(entry: Mapping[str, Any], where: str) -> Decision:
    """One resume entry's decision: cancelled denies; a resolved payload approves, denies or
    edits (approval holds) or carries an external tool's result or failure."""
    status = entry.get("status")
    if status == "cancelled":
        return Deny(CANCELLED_REASON)
    if status != "resolved":
        raise _malformed(f"{where}.status is 'resolved' or 'cancelled'", status)
    payload = _object(entry.get("payload"), f"{where}.payload")
    keys = frozenset(payload)
    if "approved" in keys and keys <= _APPROVAL_KEYS:
        return _approval(payload, f"{where}.payload")
    if keys in _EXTERNAL_KEYS:
        return _external(payload, f"{where}.payload")
    rule = (
        f"{where}.payload is {{approved, reason?, editedArgs?}} for an approval, or {{result}} "
        "or {error} for an external tool"
    )
    raise _malformed(rule, sorted(keys))


def decisions(body: Mapping[str, Any]) -> dict[str, Decision]:
    """The resume entries' decisions by call id (an interrupt's id is its call's id)."""
    entries = body.get("resume")
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise _malformed("resume is a list of resume entries", entries)
    found: dict[str, Decision] = {}
    for n, value in enumerate(entries):
        entry = _object(value, f"resume[{n}]")
        call_id = _identifier(entry, "interruptId", f"resume[{n}]")
        if call_id in found:
            raise _malformed(f"resume[{n}].interruptId answers an interrupt only once", call_id)
        found[call_id] = decision(entry, f"resume[{n}]")
    return found


# --- the adapter --------------------------------------------------------------------------


def read_input(body: bytes, *, has_store: bool) -> ChatTurn:
    """A RunAgentInput body as a `ChatTurn` (see the module doc)."""
    try:
        parsed = request_json(body)
    except orjson.JSONDecodeError:
        raise _malformed("the body is JSON (a RunAgentInput)", body[:40]) from None
    request = _object(parsed, "the body")
    thread_id = _identifier(request, "threadId", "RunAgentInput")
    run_id = _identifier(request, "runId", "RunAgentInput")
    messages = _messages(request)
    answers = decisions(request)
    if answers:
        return ChatTurn(session_id=thread_id, run_id=None, decisions=answers, client_run_id=run_id)
    last = _last_user(messages)
    content = user_content(messages[last], f"messages[{last}]")
    history = () if has_store else _history(messages[:last])
    return ChatTurn(
        session_id=thread_id, run_id=run_id, content=content, history=history, client_run_id=run_id
    )


class AgUiAdapter:
    """AG-UI 1.0 as the HTTP layer uses it: `read_turn` reads a RunAgentInput, `encoder`
    writes a response's AG-UI events."""

    name = "ag-ui"

    def read_turn(self, body: bytes, *, has_store: bool) -> ChatTurn:
        """The turn a RunAgentInput asks for; `MalformedRequestError` naming the rule."""
        return read_input(body, has_store=has_store)

    def encoder(self, context: StreamContext) -> AgUiEncoder:
        """A fresh AG-UI encoder for one response."""
        return AgUiEncoder(context)


AG_UI = AgUiAdapter()
"""The AG-UI protocol adapter."""

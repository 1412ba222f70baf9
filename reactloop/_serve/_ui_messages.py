"""A session's stored runs as the AI SDK's UI messages (`GET /{chat_id}/messages`, for a page
that reloads): per run, its user turn and one assistant message holding every step (text,
reasoning text, tool parts with their input and output), under the ids the run's stream used,
so a page that reloads and then answers an approval goes on with the same message.

Reasoning is shown as its readable text only: signatures, redacted and encrypted reasoning
never leave the server.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop._core import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    DocumentPart,
    HoldKind,
    ImagePart,
    Message,
    PendingCall,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._output import FINAL_TOOL
from reactloop._serve._masks import masked
from reactloop._serve._ui_stream import DENIED_PREFIX, input_value, message_id_of

UIMessage = dict[str, Any]
UIPart = dict[str, Any]


def user_message_id_of(run_id: str) -> str:
    """The id a run's user turn has in the UI messages."""
    return f"{run_id}-user"


def ui_messages(
    messages: Sequence[Message], chat_id: str, pending: Sequence[PendingCall] = ()
) -> list[UIMessage]:
    """A session's stored turns as UI messages: each user message, then one assistant message
    for the turn that follows it, numbered in order (`{chat_id}-{n}`); `pending` are the held
    calls of its paused run, shown as `approval-requested` (external ones `input-available`).
    An approval answered on such a message resumes the session's paused run, and the rest of
    the run goes on in the same message (its id travels with the request)."""
    groups = _groups(messages)
    held = {call.call_id: call for call in pending}
    return [
        _ui_message(kind, items, f"{chat_id}-{n + 1}", held)
        for n, (kind, items) in enumerate(groups)
    ]


def run_ui_messages(
    run_id: str, messages: Sequence[Message], pending: Sequence[PendingCall] = ()
) -> list[UIMessage]:
    """One run's messages as UI messages, under the ids its stream used: its last user message
    `{run_id}-user`, its last assistant turn `{run_id}-assistant` (earlier ones, a given
    history, numbered)."""
    groups = _groups(messages)
    held = {call.call_id: call for call in pending}
    return [
        _ui_message(kind, items, _run_group_id(run_id, groups, n), held)
        for n, (kind, items) in enumerate(groups)
    ]


def _groups(messages: Sequence[Message]) -> list[tuple[str, list[Message]]]:
    """Messages grouped as the UI shows them: a user message alone, then the assistant answers
    and tool results of its turn together (system messages are the server's: left out)."""
    groups: list[tuple[str, list[Message]]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            groups.append(("user", [message]))
        elif isinstance(message, AssistantMessage | ToolMessage):
            if not groups or groups[-1][0] != "assistant":
                groups.append(("assistant", []))
            groups[-1][1].append(message)
    return groups


def _run_group_id(run_id: str, groups: Sequence[tuple[str, list[Message]]], n: int) -> str:
    """The run's last group of a kind has its stream's id; earlier ones are numbered."""
    kind = groups[n][0]
    if all(other != kind for other, _ in groups[n + 1 :]):
        return message_id_of(run_id) if kind == "assistant" else user_message_id_of(run_id)
    return f"{run_id}-{kind}-{n + 1}"


def _ui_message(
    kind: str, messages: Sequence[Message], message_id: str, held: Mapping[str, PendingCall]
) -> UIMessage:
    if kind == "user":
        [user] = messages
        assert isinstance(user, UserMessage)
        parts = [part for part in map(content_part, user.parts) if part is not None]
        return {"id": message_id, "role": "user", "parts": parts}
    return {"id": message_id, "role": "assistant", "parts": assistant_parts(messages, held)}


def content_part(part: ContentPart) -> UIPart | None:
    """A user's part as a UI text or file part (bytes as a data URL); None for a cache point."""
    match part:
        case TextPart(text=text):
            return {"type": "text", "text": text}
        case ImagePart():
            return _file(part.media_type or "image", part.data, part.url, None)
        case DocumentPart(text=str() as text):
            return _file("text/plain", text.encode(), None, part.title)
        case DocumentPart():
            return _file(part.media_type or "application/pdf", part.data, part.url, part.title)
        case AudioPart():
            return _file(part.media_type, part.data, None, None)
    return None


def _file(media_type: str, data: bytes | None, url: str | None, title: str | None) -> UIPart:
    if url is None:
        url = f"data:{media_type};base64,{base64.b64encode(data or b'').decode()}"
    part: UIPart = {"type": "file", "mediaType": media_type, "url": url}
    if title is not None:
        part["filename"] = title
    return part


def assistant_parts(messages: Sequence[Message], held: Mapping[str, PendingCall]) -> list[UIPart]:
    """A turn's steps: each model answer opens a step (its reasoning, text and tool parts);
    each tool result settles its call's part."""
    parts: list[UIPart] = []
    tools: dict[str, UIPart] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            parts.append({"type": "step-start"})
            for part in message.parts:
                shown = _answer_part(part, held)
                if shown is not None:
                    parts.append(shown)
                    if isinstance(part, ToolCall):
                        tools[part.id] = shown
        elif (  # a held call's stand-in result ("not run: the run stopped") leaves it waiting
            isinstance(message, ToolMessage)
            and message.call_id in tools
            and message.call_id not in held
        ):
            _settle(tools[message.call_id], message)
    return parts


def _answer_part(
    part: TextPart | ReasoningPart | ToolCall, held: Mapping[str, PendingCall]
) -> UIPart | None:
    match part:
        case TextPart(text=text):
            return {"type": "text", "text": text, "state": "done"} if text else None
        case ReasoningPart():
            text = part.text or "\n\n".join(part.summary)
            return {"type": "reasoning", "text": text, "state": "done"} if text else None
        case ToolCall():  # the output tool's call is the structured answer, not a tool part
            return None if part.name == FINAL_TOOL else _tool_part(part, held.get(part.id))


def _tool_part(call: ToolCall, pending: PendingCall | None) -> UIPart:
    part: UIPart = {
        "type": f"tool-{call.name}",
        "toolCallId": call.id,
        "state": "input-available",
        "input": input_value(call.arguments),
    }
    if pending is not None and pending.kind is HoldKind.APPROVAL:
        part["state"] = "approval-requested"
        part["approval"] = {"id": call.id, "requestReason": pending.reason}
    return part


def _settle(part: UIPart, result: ToolMessage) -> None:
    """A tool part given its result: output, error, or (a reviewer's denial) denied."""
    text = result.text
    if not result.is_error:
        part.update(state="output-available", output=text)
    elif text.startswith(DENIED_PREFIX):
        part.update(state="output-denied", approval={"id": part["toolCallId"], "approved": False})
    else:
        part.update(state="output-error", errorText=masked(text))

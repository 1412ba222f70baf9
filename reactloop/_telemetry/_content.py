"""Messages as the GenAI conventions record content (`gen_ai.input.messages`,
`gen_ai.output.messages`, `gen_ai.system_instructions`): JSON text of role-and-parts objects.

Used only with `Telemetry(record_content=True)`: content may hold personal data. An assistant
message's parts keep their order; its reasoning is recorded as the conventions' reasoning part
(`{"type": "reasoning", "content": ...}`) with the text a person can read only: a signature,
redacted data or encrypted content is never recorded, and a part holding nothing else is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from reactloop._core import (
    AssistantMessage,
    AssistantPart,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from reactloop._unicode import dumps

Part = dict[str, Any]


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
            return {"role": "tool", "parts": [part]}
        case SystemMessage():
            return {"role": "system", "parts": [{"type": "text", "content": message.text}]}
        case _:
            return {"role": "user", "parts": [{"type": "text", "content": message.text}]}


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

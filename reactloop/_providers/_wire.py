"""Small helpers both protocols use: the history rules they share, reading untrusted JSON, and
assembling streamed tool calls."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson
from attrs import define, evolve, field

from reactloop._core import (
    AssistantMessage,
    FinishReason,
    JsonObject,
    Message,
    ReasoningPart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    blank_reason,
    fresh_call_id,
    is_blank,
    new_call_id,
)
from reactloop._errors import InvalidRequestError, InvalidResponseError
from reactloop._providers._profiles import model_family

EMPTY_TOOL_RESULT = "(the tool returned no output)"
"""What the model reads for a tool result with no text: both APIs reject an empty one."""


def check_history(provider: str, messages: Sequence[Message]) -> None:
    """Refuse, before anything is sent, a history that no model API accepts as it is.

    Both providers apply the same rules, so a history fails alike on each: every system, user and
    assistant message must carry something (a message is never dropped silently, since dropping
    one changes what the model reads), and at least one of them must not be a system message.
    """
    for index, message in enumerate(messages):
        why = blank_reason(message)
        if why is not None:
            raise InvalidRequestError(
                f"{provider} cannot send messages[{index}] ({type(message).__name__}): {why},"
                " and model APIs reject an empty message; remove it from the history",
                provider=provider,
            )
    if all(isinstance(message, SystemMessage) for message in messages):
        raise InvalidRequestError(
            f"{provider} request has no user, assistant or tool message among its"
            f" {len(messages)} messages: model APIs need a conversation to answer",
            provider=provider,
        )


def wire_ids(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The messages with the tool call ids a provider gets: its own ids back (`wire_id`), unless
    two calls of the request share one; then those calls take their run-unique ids (or a fresh
    one), so that each result still pairs with its own call. Results follow their call's id."""
    calls = [c for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    wanted = Counter(call.wire_id for call in calls)
    if all(call.provider_id is None for call in calls) and len(wanted) == len(calls):
        return messages  # the usual case: every id is the provider's and unique
    used = {wire for wire, times in wanted.items() if times == 1}
    chosen: dict[int, str] = {}  # by position in `calls`
    for position, call in enumerate(calls):
        if wanted[call.wire_id] > 1:
            wire = call.id if call.id not in used else fresh_call_id(call.id, used, 2)
            used.add(wire)
            chosen[position] = wire
        else:
            chosen[position] = call.wire_id
    return _renamed(messages, chosen)


def _renamed(messages: tuple[Message, ...], chosen: dict[int, str]) -> tuple[Message, ...]:
    """The messages with the calls' ids (numbered in order) and their results' ids replaced; a
    result pairs with the latest call of its id before it."""
    out: list[Message] = []
    latest: dict[str, str] = {}  # a call's id -> the id it has on the wire
    position = 0
    for message in messages:
        if isinstance(message, AssistantMessage) and message.tool_calls:
            renamed = []
            for call in message.tool_calls:
                latest[call.id] = chosen[position]
                renamed.append(ToolCall(call.name, call.arguments, chosen[position]))
                position += 1
            out.append(message.with_tool_calls(renamed))
        elif isinstance(message, ToolMessage) and message.call_id in latest:
            out.append(evolve(message, call_id=latest[message.call_id]))
        else:
            out.append(message)
    return tuple(out)


def replays(part: ReasoningPart, provider: str, model: str) -> bool:
    """True when `part` goes back to this provider and model as reasoning, opaque values and
    all: it was produced by the same provider (its configured name) on a model of the same
    family (ADR-0026). Reasoning from elsewhere is dropped or converted as the vendor documents."""
    if part.provider != provider:
        return False
    return (
        part.model is None or part.model == model or model_family(part.model) == model_family(model)
    )


def tool_result_text(message: ToolMessage) -> str:
    """The result's text, or a note saying the tool returned none (never an empty string)."""
    return EMPTY_TOOL_RESULT if is_blank(message.text) else message.text


def obj(value: object, key: str) -> JsonObject:
    """`value[key]` when both are JSON objects, else an empty object."""
    if isinstance(value, dict):
        inner = value.get(key)
        if isinstance(inner, dict):
            return inner
    return {}


def text(value: object, key: str) -> str | None:
    """`value[key]` when it is a string, else None."""
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, str) else None


def count(value: object, key: str) -> int | None:
    """`value[key]` when it is a non-negative integer, else None."""
    inner = value.get(key) if isinstance(value, dict) else None
    is_count = isinstance(inner, int) and not isinstance(inner, bool) and inner >= 0
    return inner if is_count else None


def items(value: object, key: str) -> list[Any]:
    """`value[key]` when it is a list, else an empty list."""
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, list) else []


def required_list(provider: str, body: JsonObject, key: str, kind: str) -> list[Any]:
    """`body[key]`, which a whole `kind` always has as a list: a 200 whose body lacks it is no
    answer of the protocol (an InvalidResponseError), never an empty success."""
    inner = body.get(key)
    if isinstance(inner, list):
        return inner
    got = "no such field" if inner is None else f"a {type(inner).__name__}"
    raise InvalidResponseError(
        f"{provider} answered with a body that is not a {kind}: its {key!r} must be a list, got"
        f" {got}",
        status=200,
        provider=provider,
    )


def is_json(arguments: str) -> bool:
    """True when the text parses as JSON."""
    try:
        orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return False
    return True


def arguments_object(arguments: str) -> JsonObject:
    """A tool call's arguments as an object; text that is not a JSON object gives `{}`."""
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


@define
class CallParts:
    """A tool call as it streams: id and name once, arguments in fragments."""

    id: str | None = None
    name: str | None = None
    parts: list[str] = field(factory=list)
    initial: str = ""

    def arguments(self) -> str:
        """The fragments joined; the initial value when no fragment came; `{}` when empty."""
        return "".join(self.parts) or self.initial or "{}"


def assemble_calls(
    provider: str, calls: list[CallParts], finish: FinishReason
) -> tuple[ToolCall, ...]:
    """Parse each streamed call once it is complete.

    A call cut off by the token limit (finish LENGTH, arguments not valid JSON) was never
    finished by the model and is dropped; any other call keeps its raw arguments, so that invalid
    JSON reaches the tool's own validation and the model reads why.
    """
    assembled: list[ToolCall] = []
    for position, parts in enumerate(calls):
        arguments = parts.arguments()
        if finish is FinishReason.LENGTH and not is_json(arguments):
            continue
        if not parts.name:
            raise InvalidResponseError(
                f"{provider} streamed tool call #{position} without a name", provider=provider
            )
        assembled.append(ToolCall(parts.name, arguments, parts.id or new_call_id()))
    return tuple(assembled)

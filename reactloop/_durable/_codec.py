"""Encoding records as bytes: a cattrs converter preconfigured for orjson.

Unions (messages, records) carry their class name in a `type` field, so a record reads back as
exactly the class it was written as; the layout is part of `SCHEMA_VERSION`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, assert_never

import orjson
from cattrs import Converter
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.orjson import make_converter
from cattrs.strategies import configure_tagged_union

from reactloop._core import (
    AssistantMessage,
    AssistantPart,
    Decision,
    Message,
    ReasoningPart,
    Record,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
)
from reactloop._durable._parts import (
    ContentParts,
    blobs_apart,
    blobs_from,
    content_parts,
    missing_blob,
    read_content_parts,
)
from reactloop._errors import ContractError
from reactloop._stored_errors import UnreadableRunError
from reactloop._unicode import dumps


def keep_content_parts(converter: Converter) -> None:
    """Make `converter` write content parts tagged by kind, bytes as base64 (a tool result's
    `parts`, a run's input parts); before any hook that is generated for a class holding them."""

    def is_parts(kind: object) -> bool:  # a tuple of a union: no class to dispatch on
        return kind == ContentParts

    converter.register_unstructure_hook_func(is_parts, content_parts)
    converter.register_structure_hook_func(is_parts, lambda v, _: read_content_parts(v))


def keep_sub_runs_apart(converter: Converter) -> None:
    """Make `converter` write a `ToolResult` without its sub-run's result (in memory only: a
    sub-run's journal is its own; its id is kept) and read one back without it."""
    in_memory = override(omit=True)
    converter.register_unstructure_hook(
        ToolResult,
        make_dict_unstructure_fn(
            ToolResult, converter, _cattrs_omit_if_default=True, sub_run=in_memory
        ),
    )
    converter.register_structure_hook(
        ToolResult, make_dict_structure_fn(ToolResult, converter, sub_run=in_memory)
    )


def keep_call_ids(converter: Converter) -> None:
    """Make `converter` always write a `ToolCall`'s id: its default is a factory (the next
    process-wide id), so "equal to the default" says nothing, and a provider's `call_1` met
    when the factory's next value is `call_1` would be dropped and read back as another id."""
    converter.register_unstructure_hook(
        ToolCall,
        make_dict_unstructure_fn(
            ToolCall, converter, _cattrs_omit_if_default=True, id=override(omit_if_default=False)
        ),
    )


def keep_costs(converter: Converter) -> None:
    """Make `converter` write a cost (`Usage.cost`, a Decimal) as its exact text, and read it
    back as a Decimal: a float would round the sum of many small costs."""
    converter.register_unstructure_hook(Decimal, str)
    converter.register_structure_hook(Decimal, lambda v, _: Decimal(str(v)))


_TEXT_KEY = "content"  # the stored name of a system, user or tool message's text (0.1's)


def keep_message_layout(converter: Converter) -> None:
    """Make `converter` write messages as 0.1 did (a user message's text under `content`; an
    assistant message as `text` and `tool_calls` unless its parts need their order kept, then
    as `parts`), and read both, so what 0.1 stored still loads and reads back equal. A user or
    tool message with more than one text part is written as tagged `parts`."""
    converter.register_unstructure_hook(SystemMessage, lambda m: {_TEXT_KEY: m.text})
    converter.register_structure_hook(SystemMessage, lambda v, _: SystemMessage(_stored_text(v)))
    converter.register_unstructure_hook(UserMessage, _user_message)
    converter.register_structure_hook(UserMessage, lambda v, _: _read_user_message(v))
    converter.register_unstructure_hook(ToolMessage, _tool_message)
    converter.register_structure_hook(ToolMessage, lambda v, _: _read_tool_message(v))
    converter.register_unstructure_hook(AssistantMessage, lambda m: _assistant(converter, m))
    converter.register_structure_hook(AssistantMessage, lambda v, _: _read_assistant(converter, v))


def _stored_text(value: dict[str, Any]) -> str:
    text: str = value[_TEXT_KEY] if _TEXT_KEY in value else value["text"]
    return text


def _user_message(message: UserMessage) -> dict[str, Any]:
    if message.is_plain:
        return {_TEXT_KEY: message.text}
    return {"parts": content_parts(message.parts)}


def _read_user_message(value: dict[str, Any]) -> UserMessage:
    if "parts" in value:
        return UserMessage(parts=read_content_parts(value["parts"]))
    return UserMessage(_stored_text(value))


def _tool_message(message: ToolMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"call_id": message.call_id, "name": message.name}
    if message.is_plain:
        out[_TEXT_KEY] = message.text
    else:
        out["parts"] = content_parts(message.parts)
    if message.is_error:
        out["is_error"] = True
    return out


def _read_tool_message(value: dict[str, Any]) -> ToolMessage:
    error = value.get("is_error", False)
    if "parts" in value:
        parts = read_content_parts(value["parts"])
        return ToolMessage(value["call_id"], value["name"], is_error=error, parts=parts)
    return ToolMessage(value["call_id"], value["name"], _stored_text(value), error)


def _in_plain_order(message: AssistantMessage) -> bool:
    """True when `text` and `tool_calls` rebuild the parts: one text part (or none), first,
    then only tool calls."""
    parts = message.parts
    start = 1 if parts and isinstance(parts[0], TextPart) else 0
    return all(isinstance(part, ToolCall) for part in parts[start:])


def _assistant(converter: Converter, message: AssistantMessage) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if _in_plain_order(message):
        if message.text:
            out["text"] = message.text
        if message.tool_calls:
            out["tool_calls"] = [converter.unstructure(c, ToolCall) for c in message.tool_calls]
    else:
        out["parts"] = [_part(converter, part) for part in message.parts]
    if message.refusal is not None:
        out["refusal"] = message.refusal
    return out


def _part(converter: Converter, part: AssistantPart) -> dict[str, Any]:
    match part:
        case TextPart():
            return {"type": "text", "text": part.text}
        case ReasoningPart():
            return {"type": "reasoning", **converter.unstructure(part, ReasoningPart)}
        case ToolCall():
            return {"type": "tool_call", **converter.unstructure(part, ToolCall)}
        case _:
            assert_never(part)


def _read_assistant(converter: Converter, value: dict[str, Any]) -> AssistantMessage:
    refusal = value.get("refusal")
    if "parts" not in value:
        calls = [converter.structure(c, ToolCall) for c in value.get("tool_calls", ())]
        return AssistantMessage(value.get("text", ""), calls, refusal)
    parts: list[AssistantPart] = []
    for stored in value["parts"]:
        fields = {key: item for key, item in stored.items() if key != "type"}
        kind = _PART_TYPES[stored["type"]]
        parts.append(converter.structure(fields, kind))
    return AssistantMessage(parts=parts, refusal=refusal)


_PART_TYPES = {"text": TextPart, "reasoning": ReasoningPart, "tool_call": ToolCall}


@functools.cache
def _converter() -> Converter:
    """The records' converter, built on first use: building its hooks takes tens of
    milliseconds, which `import reactloop` and a loop that stores nothing never pay."""
    converter = make_converter(omit_if_default=True)
    keep_costs(converter)  # first: the generated hooks of classes holding a Usage use it
    keep_content_parts(converter)
    keep_sub_runs_apart(converter)
    keep_call_ids(converter)
    keep_message_layout(converter)
    configure_tagged_union(Message, converter, tag_name="type")
    configure_tagged_union(Decision, converter, tag_name="type")  # before the records holding them
    configure_tagged_union(Record, converter, tag_name="type")
    return converter


_OPTIONS = orjson.OPT_NON_STR_KEYS


def encode(record: Record) -> bytes:
    """The record as compact JSON bytes; phase data that is not JSON is a `ContractError`, and
    text that is not valid Unicode is repaired (adr/0022), never a reason to lose a record."""
    return dump_json(_converter().unstructure(record, Record))


def encode_apart(record: Record) -> tuple[bytes, dict[str, bytes]]:
    """The record as `encode` writes it, but its content parts' bytes kept apart: the body
    refers to them by digest, and the blobs (by digest, each once) are returned beside it for
    the store to keep once (adr/0028)."""
    with blobs_apart() as blobs:
        body = encode(record)
    return body, blobs


def dump_json(value: Any) -> bytes:
    """Unstructured records (and what holds them) as compact JSON bytes; phase data that is not
    JSON is a `ContractError`."""
    try:
        return dumps(value, where="a stored record", option=_OPTIONS)
    except TypeError as exc:
        rule = "phase data holds JSON values (str, int, float, bool, None, lists, dicts)"
        raise ContractError("RunState.phase_data", rule, exc) from exc


def unstructure_records(records: Iterable[Record]) -> list[Any]:
    """The records as JSON values, exactly as `encode` writes each (for a document holding many,
    such as a state token)."""
    return [_converter().unstructure(record, Record) for record in records]


def structure_records(values: list[Any]) -> tuple[Record, ...]:
    """The records `unstructure_records` gave; raises cattrs' errors when they cannot be read."""
    return tuple(_converter().structure(value, Record) for value in values)  # type: ignore[arg-type]


def decode(data: bytes, blobs: Mapping[str, bytes] | None = None) -> Record:
    """The record encoded in `data`, its parts' blob references resolved from `blobs`; bytes
    this version cannot read, or a reference to a blob not given, are an `UnreadableRunError`
    (a `StoreError`; the latter names the digest)."""
    try:
        value: Any = orjson.loads(data)
        with blobs_from({} if blobs is None else blobs):
            record: Record = _converter().structure(value, Record)  # type: ignore[arg-type]
    except Exception as exc:
        missing = missing_blob(exc)
        if missing is not None:
            raise UnreadableRunError(str(missing)) from exc
        raise UnreadableRunError(f"a stored record cannot be read: {exc}") from exc
    return record


def json_snapshot(data: dict[str, Any]) -> bytes:
    """Phase data as bytes, to tell whether it changed since it was last journaled."""
    try:
        return dumps(data, where="phase data", option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        rule = "phase data holds JSON values (str, int, float, bool, None, lists, dicts)"
        raise ContractError("RunState.phase_data", rule, exc) from exc


def value_json(value: Any) -> str:
    """A structured output's value as JSON text (attrs classes and dataclasses as objects)."""
    return orjson.dumps(_converter().unstructure(value), option=_OPTIONS).decode()

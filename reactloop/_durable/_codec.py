"""Encoding records as bytes: a cattrs converter preconfigured for orjson.

Unions (messages, records) carry their class name in a `type` field, so a record reads back as
exactly the class it was written as; the layout is part of `SCHEMA_VERSION`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson
from cattrs import Converter
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.orjson import make_converter
from cattrs.strategies import configure_tagged_union

from reactloop._core import Decision, Message, Record, ToolCall, ToolResult
from reactloop._errors import ContractError
from reactloop._stored_errors import UnreadableRunError
from reactloop._unicode import dumps


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


_converter = make_converter(omit_if_default=True)
keep_sub_runs_apart(_converter)
keep_call_ids(_converter)
configure_tagged_union(Message, _converter, tag_name="type")
configure_tagged_union(Decision, _converter, tag_name="type")  # before the records that hold them
configure_tagged_union(Record, _converter, tag_name="type")
_OPTIONS = orjson.OPT_NON_STR_KEYS


def encode(record: Record) -> bytes:
    """The record as compact JSON bytes; phase data that is not JSON is a `ContractError`, and
    text that is not valid Unicode is repaired (adr/0022), never a reason to lose a record."""
    return dump_json(_converter.unstructure(record, Record))


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
    return [_converter.unstructure(record, Record) for record in records]


def structure_records(values: list[Any]) -> tuple[Record, ...]:
    """The records `unstructure_records` gave; raises cattrs' errors when they cannot be read."""
    return tuple(_converter.structure(value, Record) for value in values)  # type: ignore[arg-type]


def decode(data: bytes) -> Record:
    """The record encoded in `data`; bytes this version cannot read are an `UnreadableRunError`
    (a `StoreError`)."""
    try:
        value: Any = orjson.loads(data)
        record: Record = _converter.structure(value, Record)  # type: ignore[arg-type]
    except Exception as exc:
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
    return orjson.dumps(_converter.unstructure(value), option=_OPTIONS).decode()

"""The fields of the classes the schema generator maps to objects: attrs, dataclasses, TypedDicts.

Each kind is read into one shape, `{name: (annotation, default)}`, where the default is
`attrs.NOTHING` for a required field, `OMITTED` for an optional field without a JSON default
(a factory, a `NotRequired` key), else the default value; `_schema.compile_object` does the rest.
Also finds the tag field that tells the classes of a union apart.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Literal, NotRequired, Required

import attrs


class _Omitted:
    """An optional field that has no default value to show in a schema."""

    def __repr__(self) -> str:
        return "OMITTED"


OMITTED: Any = _Omitted()


def is_class(tp: Any) -> bool:
    """An attrs class, a dataclass or a TypedDict (typing's or typing_extensions')."""
    if not isinstance(tp, type):
        return False
    return attrs.has(tp) or dataclasses.is_dataclass(tp) or is_typeddict(tp)


def is_typeddict(tp: Any) -> bool:
    """A TypedDict class, whichever module made it."""
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def class_fields(cls: type[Any]) -> dict[str, tuple[Any, Any]]:
    """The fields `cls.__init__` takes (the keys, for a TypedDict), with their defaults."""
    if is_typeddict(cls):
        return _typeddict_fields(cls)
    hints = typing.get_type_hints(cls, include_extras=True)
    if attrs.has(cls):
        return {f.alias: (hints[f.name], _attrs_default(f)) for f in attrs.fields(cls) if f.init}
    return {
        f.name: (hints[f.name], _dataclass_default(f)) for f in dataclasses.fields(cls) if f.init
    }


def _attrs_default(field: attrs.Attribute[Any]) -> Any:
    return OMITTED if isinstance(field.default, attrs.Factory) else field.default  # type: ignore[arg-type]


def _dataclass_default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return OMITTED
    return attrs.NOTHING


def _typeddict_fields(cls: type[Any]) -> dict[str, tuple[Any, Any]]:
    """Keys are required by the class's totality unless marked `Required` / `NotRequired`."""
    hints = typing.get_type_hints(cls, include_extras=True)
    required_keys: frozenset[str] = cls.__required_keys__
    fields: dict[str, tuple[Any, Any]] = {}
    for name, hint in hints.items():
        origin = typing.get_origin(hint)
        required = name in required_keys
        annotation = hint
        if origin is Required or origin is NotRequired:
            required, annotation = origin is Required, typing.get_args(hint)[0]
        fields[name] = (annotation, attrs.NOTHING if required else OMITTED)
    return fields


Tag = tuple[type, Any]


def tag_table(members: tuple[Any, ...]) -> tuple[str, dict[Tag, int]] | None:
    """A field every class of the union (two or more; other members aside) has as a `Literal`
    with values of its own, if any: its name and which member (by index in `members`) each
    value selects, keyed by type too, so that 1 is not True."""
    classes = [(index, m) for index, m in enumerate(members) if is_class(m)]
    if len(classes) < 2:
        return None
    fields = [(index, class_fields(member)) for index, member in classes]
    for key in fields[0][1]:
        table: dict[Tag, int] = {}
        for index, member_fields in fields:
            values = _literal_values(member_fields.get(key))
            if not values or any((type(v), v) in table for v in values):
                break
            table.update(((type(v), v), index) for v in values)
        else:
            return key, table
    return None


def _literal_values(field: tuple[Any, Any] | None) -> tuple[Any, ...]:
    if field is None:
        return ()
    hint = field[0]
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) is not Literal:
        return ()
    values = typing.get_args(hint)
    return values if all(isinstance(v, str | int | bool) for v in values) else ()

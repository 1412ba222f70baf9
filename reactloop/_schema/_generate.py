"""Python annotations -> JSON schema, plus a converter that validates JSON values against it.

Each annotation is compiled once, when a tool or an output type is defined, into a schema and a
converter function; a call then only runs the converters. Supported: str, int, float, bool, None,
Any, Literal, Enum, list, tuple (fixed and variadic), dict with str keys, Optional and unions,
attrs classes, dataclasses and TypedDicts (total or not, `Required`/`NotRequired`), defaults.

Two rules shared by tools and outputs:
- A null for an optional field whose type does not admit null means "absent": the field gets its
  default (strict provider modes make every field required and send null for the ones left out).
- A union of classes is dispatched on a tag when every member has a `Literal` field of the same
  name with distinct values (e.g. `kind: Literal["cat"]`); otherwise the first member that accepts
  the value wins, in the order written.
"""

from __future__ import annotations

import enum
import threading
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

import attrs

from reactloop._core import JsonObject
from reactloop._schema._classes import class_fields, is_class, tag_table

Converter = Callable[[Any, str], Any]


class Invalid(Exception):
    """A value does not match its schema; `path` locates it (e.g. `items[2].city`). `errors`
    holds every mismatch found, as (path, problem) pairs, the first being `path` and `problem`:
    a model told all of them at once fixes them in one try."""

    def __init__(
        self,
        path: str,
        problem: str,
        *,
        root: str = "arguments",
        errors: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.errors = errors or ((path, problem),)
        super().__init__("; ".join(f"{where or root}: {what}" for where, what in self.errors))
        self.path = path
        self.problem = problem

    @classmethod
    def of(cls, found: list[Invalid], *, root: str = "arguments") -> Invalid:
        """One error holding the errors of all of `found` (at least one), in order."""
        errors = tuple(error for exc in found for error in exc.errors)
        return cls(errors[0][0], errors[0][1], root=root, errors=errors)


def convert_each(items: list[tuple[Converter, Any, str]]) -> list[Any]:
    """`convert(value, path)` for each item; every item that fails is reported, not the first."""
    results: list[Any] = []
    found: list[Invalid] = []
    for convert, value, path in items:
        try:
            results.append(convert(value, path))
        except Invalid as exc:
            found.append(exc)
    if found:
        raise Invalid.of(found)
    return results


class UnsupportedType(Exception):
    """An annotation that has no JSON schema mapping."""


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _string(value: Any, path: str) -> str:
    if type(value) is str:
        return value
    raise Invalid(path, f"expected string, got {_kind(value)} {value!r}")


def _boolean(value: Any, path: str) -> bool:
    if type(value) is bool:
        return value
    raise Invalid(path, f"expected boolean, got {_kind(value)} {value!r}")


def _integer(value: Any, path: str) -> int:
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    raise Invalid(path, f"expected integer, got {_kind(value)} {value!r}")


def _number(value: Any, path: str) -> float:
    if type(value) in (int, float):
        return float(value)
    raise Invalid(path, f"expected number, got {_kind(value)} {value!r}")


def _null(value: Any, path: str) -> None:
    if value is not None:
        raise Invalid(path, f"expected null, got {_kind(value)} {value!r}")


def _json_scalar(value: Any, where: str) -> Any:
    """A `Literal` choice or an Enum value as the JSON value a model sends: an Enum member in a
    `Literal` stands for its value; anything but a JSON scalar could never be matched."""
    plain = value.value if isinstance(value, enum.Enum) else value
    if type(plain) not in _SCALAR_KINDS:
        raise UnsupportedType(
            f"{where} must be JSON scalars (str, int, float, bool or None), got {value!r}"
        )
    return plain


def _literal(choices: tuple[Any, ...]) -> tuple[JsonObject, Converter]:
    pairs = [(_json_scalar(choice, "Literal choices"), choice) for choice in choices]
    plain = [wire for wire, _ in pairs]

    def convert(value: Any, path: str) -> Any:
        for wire, choice in pairs:
            if value == wire and type(value) is type(wire):
                return choice
        raise Invalid(path, f"expected one of {plain!r}, got {value!r}")

    return {"enum": plain}, convert


def _enum(cls: type[enum.Enum]) -> tuple[JsonObject, Converter]:
    values = [_json_scalar(member.value, f"the values of Enum {cls.__name__}") for member in cls]

    def convert(value: Any, path: str) -> Any:
        try:
            return cls(value)
        except ValueError:
            raise Invalid(path, f"expected one of {values!r}, got {value!r}") from None

    return {"enum": values}, convert


def _array(item: Any, out: Callable[[list[Any]], Any]) -> tuple[JsonObject, Converter]:
    schema, item_convert = compile_type(item)
    leaf = not schema.keys() & {"properties", "additionalProperties", "items", "anyOf"}

    def convert(value: Any, path: str) -> Any:
        if type(value) is not list:
            raise Invalid(path, f"expected array, got {_kind(value)} {value!r}")
        try:  # no path per item unless one fails (then again, to name every one that does)
            if leaf:
                return out([item_convert(v, path) for v in value])
            return out([item_convert(v, f"{path}[{i}]") for i, v in enumerate(value)])
        except Invalid:
            pass
        return out(convert_each([(item_convert, v, f"{path}[{i}]") for i, v in enumerate(value)]))

    return {"type": "array", "items": schema}, convert


def _fixed_tuple(items: tuple[Any, ...]) -> tuple[JsonObject, Converter]:
    compiled = [compile_type(item) for item in items]
    size = len(compiled)

    def convert(value: Any, path: str) -> Any:
        if type(value) is not list or len(value) != size:
            raise Invalid(path, f"expected array of {size} items, got {value!r}")
        pairs = enumerate(zip(compiled, value, strict=True))
        return tuple(convert_each([(c, v, f"{path}[{i}]") for i, ((_, c), v) in pairs]))

    schema: JsonObject = {"type": "array", "prefixItems": [s for s, _ in compiled]}
    schema.update(minItems=size, maxItems=size)
    return schema, convert


def _mapping(key: Any, item: Any) -> tuple[JsonObject, Converter]:
    if key not in (str, Any):
        raise UnsupportedType(f"dict keys must be str, not {key!r}")
    schema, item_convert = compile_type(item)

    def convert(value: Any, path: str) -> Any:
        if type(value) is not dict:
            raise Invalid(path, f"expected object, got {_kind(value)} {value!r}")
        converted = convert_each([(item_convert, v, f"{path}.{k}") for k, v in value.items()])
        return dict(zip(value, converted, strict=True))

    return {"type": "object", "additionalProperties": schema}, convert


def _union(members: tuple[Any, ...]) -> tuple[JsonObject, Converter]:
    compiled = [compile_type(member) for member in members]
    structural = _first_match(compiled)
    tagged = tag_table(members)
    if tagged is None:
        return {"anyOf": [schema for schema, _ in compiled]}, structural
    key, table = tagged
    by_tag = {tag: compiled[index][1] for tag, index in table.items()}

    def convert(value: Any, path: str) -> Any:
        if type(value) is dict:
            tag = value.get(key)
            member = by_tag.get((type(tag), tag)) if isinstance(tag, str | int | bool) else None
            if member is not None:
                return member(value, path)
        return structural(value, path)

    return {"anyOf": [schema for schema, _ in compiled]}, convert


def _first_match(compiled: list[tuple[JsonObject, Converter]]) -> Converter:
    """Try the members whose schema admits the value's JSON kind (all of them when none does,
    for a full error), in order: raising and catching `Invalid` is what a union costs."""
    members = [(_json_kinds(schema), convert) for schema, convert in compiled]
    everyone = [convert for _, convert in members]

    def candidates(kinds: tuple[str, ...]) -> list[Converter]:
        return [c for k, c in members if k is None or not k.isdisjoint(kinds)] or everyone

    by_type = {tp: candidates(kinds) for tp, kinds in _KINDS_OF.items()}
    whole_floats = candidates(("number", "integer"))

    def convert(value: Any, path: str) -> Any:
        tried = by_type.get(type(value), everyone)
        if type(value) is float and value.is_integer():
            tried = whole_floats
        problems = []
        for member_convert in tried:
            try:
                return member_convert(value, path)
            except Invalid as exc:
                problems.append(exc.problem if exc.path == path else str(exc))
        raise Invalid(path, "matches no alternative: " + " | ".join(problems))

    return convert


_SCALAR_KINDS: dict[type, tuple[str, ...]] = {
    type(None): ("null",),
    bool: ("boolean",),
    int: ("integer", "number"),
    float: ("number",),
    str: ("string",),
}
_KINDS_OF: dict[type, tuple[str, ...]] = {**_SCALAR_KINDS, list: ("array",), dict: ("object",)}


def _json_kinds(schema: JsonObject) -> frozenset[str] | None:
    """The JSON kinds a generated schema can admit (it names one type at most, never a list);
    None when it does not say (any)."""
    if "type" in schema:
        return frozenset([schema["type"]])
    if "enum" in schema:
        return frozenset(k for value in schema["enum"] for k in _SCALAR_KINDS[type(value)])
    if "anyOf" in schema:
        found = [_json_kinds(member) for member in schema["anyOf"]]
        return None if None in found else frozenset().union(*found)  # type: ignore[arg-type]
    return None


_compiling = threading.local()


def _class(cls: type[Any]) -> tuple[JsonObject, Converter]:
    """An attrs class, dataclass or TypedDict as an object; a recursive one is refused."""
    stack: list[type[Any]] = _compiling.__dict__.setdefault("stack", [])
    if cls in stack:
        raise UnsupportedType(f"recursive type {cls.__qualname__} has no finite JSON schema")
    stack.append(cls)
    try:
        schema, convert_fields = compile_object(class_fields(cls), {})
    finally:
        stack.pop()
    if typing.is_typeddict(cls):
        return schema, convert_fields

    def convert(value: Any, path: str) -> Any:
        fields = convert_fields(value, path)
        try:
            return cls(**fields)
        except (TypeError, ValueError) as exc:  # the class's own validators refused the value
            raise Invalid(path, f"{cls.__name__} refused it: {exc}") from None

    return schema, convert


_SCALARS: dict[Any, tuple[JsonObject, Converter]] = {
    str: ({"type": "string"}, _string),
    bool: ({"type": "boolean"}, _boolean),
    int: ({"type": "integer"}, _integer),
    float: ({"type": "number"}, _number),
    None: ({"type": "null"}, _null),
    type(None): ({"type": "null"}, _null),
    Any: ({}, lambda value, path: value),
}


def compile_type(tp: Any) -> tuple[JsonObject, Converter]:
    """Compile one annotation into (JSON schema, converter); raise `UnsupportedType` if unmapped."""
    if tp in _SCALARS:
        return _SCALARS[tp]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum(tp)
    if is_class(tp):
        return _class(tp)
    return _compile_generic(tp, typing.get_origin(tp), typing.get_args(tp))


def _compile_generic(tp: Any, origin: Any, args: tuple[Any, ...]) -> tuple[JsonObject, Converter]:
    if origin is typing.Annotated:
        return compile_type(args[0])
    if origin is Literal:
        return _literal(args)
    if origin in (Union, types.UnionType):
        return _union(args)
    if origin is list or tp is list:
        return _array(args[0] if args else Any, list)
    if origin is tuple or tp is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return _array(args[0] if args else Any, tuple)
        return _fixed_tuple(args)
    if origin is dict or tp is dict:
        return _mapping(*(args or (str, Any)))
    raise UnsupportedType(f"no JSON schema for annotation {tp!r}")


_MISSING = attrs.NOTHING


def compile_object(
    fields: dict[str, tuple[Any, Any]], descriptions: dict[str, str]
) -> tuple[JsonObject, Callable[[Any, str], dict[str, Any]]]:
    """Compile named fields (annotation, default or NOTHING) into an object schema and converter."""
    properties: JsonObject = {}
    converters: dict[str, Converter] = {}
    required = [name for name, (_, default) in fields.items() if default is _MISSING]
    for name, (annotation, default) in fields.items():
        schema, converters[name] = compile_type(annotation)
        schema = dict(schema)
        if name in descriptions:
            schema["description"] = descriptions[name]
        if default is not _MISSING and _is_json(default):
            schema["default"] = default.value if isinstance(default, enum.Enum) else default
        properties[name] = schema
    object_schema: JsonObject = {"type": "object", "properties": properties}
    object_schema.update(required=required, additionalProperties=False)
    absent_on_null = frozenset(
        name for name in fields if name not in required and not _admits_null(converters[name])
    )

    def convert(value: Any, path: str) -> dict[str, Any]:
        if type(value) is not dict:
            raise Invalid(path, f"expected object, got {_kind(value)} {value!r}")
        return _convert_fields(value, path, converters, required, absent_on_null)

    return object_schema, convert


def _admits_null(convert: Converter) -> bool:
    try:
        convert(None, "")
    except Invalid:
        return False
    return True


def _convert_fields(
    value: dict[str, Any],
    path: str,
    converters: dict[str, Converter],
    required: list[str],
    absent_on_null: frozenset[str],
) -> dict[str, Any]:
    prefix = f"{path}." if path else ""
    present = [
        (name, convert)
        for name, convert in converters.items()
        if name in value and (value[name] is not None or name not in absent_on_null)
    ]
    if value.keys() <= converters.keys() and all(name in value for name in required):
        try:  # keyed by our own (interned) names, not the parsed JSON's: calling a class with
            # 50 keyword arguments whose names are fresh strings costs twice the conversion
            return {name: convert(value[name], prefix + name) for name, convert in present}
        except Invalid:
            pass  # again, to report every problem
    found = _shape_problems(value, path, converters, required)
    try:
        converted = convert_each([(c, value[name], prefix + name) for name, c in present])
    except Invalid as exc:
        found.append(exc)
    if found:
        raise Invalid.of(found)
    return {name: item for (name, _), item in zip(present, converted, strict=True)}


def _shape_problems(
    value: dict[str, Any], path: str, converters: dict[str, Converter], required: list[str]
) -> list[Invalid]:
    """Unknown and missing properties, each kind as one problem."""
    found: list[Invalid] = []
    unknown = sorted(set(value) - set(converters))
    if unknown:
        rule = f"unexpected properties {unknown}; allowed are {sorted(converters)}"
        found.append(Invalid(path, rule))
    missing = [name for name in required if name not in value]
    if missing:
        found.append(Invalid(path, f"missing required properties {missing}"))
    return found


def _is_json(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool | enum.Enum)

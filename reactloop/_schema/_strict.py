"""JSON schemas rewritten into what each provider's strict structured-output mode accepts.

A rewrite only ever widens what the provider enforces, never narrows it: a keyword the provider
does not support moves into the description (as `{keyword: value}`, a hint the model may follow,
like the vendors' own SDKs do) and our converter, which still holds the original schema, checks
it on the way back. What cannot be widened into a strict schema (a mapping with free-form keys,
a value of any type) raises `StrictSchemaError`.

OpenAI (structured outputs guide, "Supported schemas"; openai-python `to_strict_json_schema`):
every object has `additionalProperties: false` and lists ALL its properties in `required`; a
property that was optional becomes nullable (null then means "absent", see `_schema`); every
node has a type: an enum's comes from its values (`{"type": "string", "enum": [...]}`; values of
several types become an anyOf of typed enums), a const becomes a one-value enum, and enum values
must be scalars; the top is not an anyOf; the size limits of `_strict_limits` hold; kept:
type (or a list of types), properties, required, items, enum, anyOf, $ref/$defs,
description, title, pattern, format (date-time, time, date, duration, email, hostname, ipv4,
ipv6, uuid), minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minItems,
maxItems; `oneOf` becomes `anyOf`, a one-member `allOf` is merged, a `$ref` with a description
beside it is replaced by its definition (the API takes nothing beside a `$ref`; recursion through
bare `$ref`s is fine); `default`, `minLength`,
`maxLength`, other formats and the rest go to the description.

Anthropic (structured outputs docs, "JSON Schema limitations"; anthropic-sdk-python
`lib/_parse/_transform.py`): every object has `additionalProperties: false`; `required` stays
as written (optional properties are allowed); kept: type, properties, required, items, enum
(scalars only), const, anyOf, allOf, $ref/$defs, description, title, format (date-time, time,
date, duration, email, hostname, uri, ipv4, ipv6, uuid), minItems of 0 or 1; `oneOf` becomes
`anyOf`; numeric and string constraints, other minItems, maxItems, `default` and the rest go to
the description. A recursive schema (a `$ref` leading back to itself) raises `StrictSchemaError`.

Both: a fixed-length tuple (`prefixItems`) becomes `items: {anyOf: [its item schemas]}` with
its length as minItems/maxItems (then filtered as above).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import attrs
import orjson

from reactloop._core import JsonObject
from reactloop._errors import StrictSchemaError
from reactloop._schema._strict_limits import Limits, check_limits, resolve_ref

_OPENAI_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_ANTHROPIC_FORMATS = _OPENAI_FORMATS | {"uri"}
_NUMERIC = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_ANNOTATIONS = ("description", "title")
_DEFS = ("$defs", "definitions")


@attrs.frozen
class _Rules:
    """What one provider's strict mode keeps; everything else is moved to the description."""

    provider: str
    kept: frozenset[str]
    formats: frozenset[str]
    all_required: bool
    all_of: bool
    min_items: frozenset[int] | None  # None: every minItems is kept
    scalar_enums: bool  # enum / const values must be scalars
    typed_values: bool  # an enum / const node needs a `type` (inferred from its values)
    ref_siblings: bool  # a $ref may carry a description beside it
    recursion: bool  # a $ref may lead back to itself
    limits: Limits | None  # how big the schema may be (None: not documented)
    root_any_of: bool  # the top may be an anyOf beside its object type

    def keeps(self, keyword: str, value: Any) -> bool:
        if keyword == "format":
            return value in self.formats
        if keyword == "minItems" and self.min_items is not None:
            return value in self.min_items
        return keyword in self.kept


_OPENAI = _Rules(
    "OpenAI",
    _NUMERIC | {"pattern", "minItems", "maxItems", "format"},
    _OPENAI_FORMATS,
    all_required=True,
    all_of=False,
    min_items=None,
    scalar_enums=True,
    typed_values=True,
    ref_siblings=False,
    recursion=True,
    limits=Limits("OpenAI"),
    root_any_of=False,
)
_ANTHROPIC = _Rules(
    "Anthropic",
    frozenset({"minItems", "format"}),
    _ANTHROPIC_FORMATS,
    all_required=False,
    all_of=True,
    min_items=frozenset({0, 1}),
    scalar_enums=True,
    typed_values=False,
    ref_siblings=True,
    recursion=False,
    limits=None,
    root_any_of=True,
)


def strict_schema_openai(schema: JsonObject) -> JsonObject:
    """`schema` as OpenAI strict mode (`strict: true`) accepts it; the top must be an object."""
    return _transform(schema, _OPENAI)


def strict_schema_anthropic(schema: JsonObject) -> JsonObject:
    """`schema` as Anthropic's structured outputs / strict tools accept it; the top must be an
    object."""
    return _transform(schema, _ANTHROPIC)


def _transform(schema: JsonObject, rules: _Rules) -> JsonObject:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise StrictSchemaError(rules.provider, "#", "the top level must be an object schema")
    strict = _Walk(rules, schema).node(copy.deepcopy(schema), "#")
    if not rules.recursion:
        _refuse_cycles(strict, rules.provider)
    if not rules.root_any_of and "anyOf" in strict:
        raise StrictSchemaError(rules.provider, "#", "the top level must not be an anyOf")
    if rules.limits is not None:
        check_limits(strict, rules.limits)
    return strict


class _Walk:
    """One rewrite: `node` returns the strict form of a schema found at JSON pointer `where`."""

    def __init__(self, rules: _Rules, root: JsonObject) -> None:
        self.rules = rules
        self.root = root

    def fail(self, where: str, problem: str) -> StrictSchemaError:
        return StrictSchemaError(self.rules.provider, where, problem)

    def node(self, schema: Any, where: str) -> JsonObject:
        if not isinstance(schema, dict) or not schema.keys() - {*_ANNOTATIONS, "default"}:
            raise self.fail(where, "a value of any type (an empty schema) has no strict form")
        schema = dict(schema)
        out: JsonObject = {k: schema.pop(k) for k in _ANNOTATIONS if k in schema}
        for defs in _DEFS:
            if defs in schema:
                found = schema.pop(defs).items()
                out[defs] = {k: self.node(s, f"{where}/{defs}/{k}") for k, s in found}
        if "$ref" in schema:
            return self._ref(schema, out, where)
        self._combinators(schema, out, where)
        self._values(schema, out, where)
        if "type" not in out and not out.keys() & {"anyOf", "allOf", "enum", "const"}:
            raise self.fail(where, "a schema without a type has no strict form")
        if _has_type(out, "object") or "properties" in schema:
            self._object(schema, out, where)
        if _has_type(out, "array") or "items" in schema or "prefixItems" in schema:
            self._array(schema, out, where)
        for keyword in [k for k in schema if self.rules.keeps(k, schema[k])]:
            out[keyword] = schema.pop(keyword)
        return _leftovers(out, schema)

    def _ref(self, schema: JsonObject, out: JsonObject, where: str) -> JsonObject:
        """A `$ref`; where the provider takes nothing beside one, the definition is inlined."""
        out["$ref"] = ref = schema.pop("$ref")
        out = _leftovers(out, schema)
        if self.rules.ref_siblings or len(out) == 1:
            return out
        target = resolve_ref(self.root, ref)
        if target is None:
            raise self.fail(where, f"$ref {ref!r} points nowhere in this schema")
        return {**self.node(target, where), **{k: v for k, v in out.items() if k != "$ref"}}

    def _combinators(self, schema: JsonObject, out: JsonObject, where: str) -> None:
        members = [*schema.pop("anyOf", []), *schema.pop("oneOf", [])]
        if members:
            out["anyOf"] = [self.node(s, f"{where}/anyOf/{i}") for i, s in enumerate(members)]
        all_of = schema.pop("allOf", None)
        if all_of is None:
            return
        if self.rules.all_of:
            out["allOf"] = [self.node(s, f"{where}/allOf/{i}") for i, s in enumerate(all_of)]
        elif len(all_of) == 1:
            merged = self.node({**schema, **all_of[0]}, f"{where}/allOf/0")
            schema.clear()
            out.update({k: v for k, v in merged.items() if k not in out})
        else:
            raise self.fail(where, "allOf with several schemas has no strict form")

    def _values(self, schema: JsonObject, out: JsonObject, where: str) -> None:
        if "type" in schema:
            out["type"] = schema.pop("type")
        for keyword in ("enum", "const"):
            if keyword not in schema:
                continue
            value = schema.pop(keyword)
            choices = value if keyword == "enum" else [value]
            if self.rules.scalar_enums and any(isinstance(c, dict | list) for c in choices):
                raise self.fail(where, f"{keyword} values must be scalars, got {value!r}")
            out[keyword] = value
        if self.rules.typed_values and out.keys() & {"enum", "const"}:
            self._typed_values(out, where)

    def _typed_values(self, out: JsonObject, where: str) -> None:
        """OpenAI takes typed enums: a const becomes a one-value enum and a node without a type
        gets the JSON type of its values; values of several types (`Literal["a", 1, None]`)
        become an `anyOf` with one typed enum per type."""
        choices = out.pop("enum", None)
        if "const" in out:
            const = out.pop("const")
            choices = [const] if choices is None or const in choices else []
        if not choices:
            raise self.fail(where, f"an enum must admit a value, got {choices!r}")
        if "type" in out:
            out["enum"] = choices
            return
        if "anyOf" in out:
            raise self.fail(where, "an enum without a type beside anyOf has no strict form")
        groups: dict[str, list[Any]] = {}
        for choice in choices:
            groups.setdefault(_value_type(choice), []).append(choice)
        if "number" in groups and "integer" in groups:
            groups["number"] = [*groups.pop("integer"), *groups["number"]]
        typed = [_typed_enum(kind, group) for kind, group in groups.items()]
        if len(typed) == 1:
            out.update(typed[0])
        else:
            out["anyOf"] = typed

    def _object(self, schema: JsonObject, out: JsonObject, where: str) -> None:
        properties = schema.pop("properties", {})
        extra = schema.pop("additionalProperties", None)
        if isinstance(extra, dict) or (not properties and extra is not False):
            raise self.fail(where, "an object with free-form keys (a dict) has no strict form")
        required = [k for k in schema.pop("required", []) if k in properties]
        out["properties"] = {}
        for name, sub in properties.items():
            strict = self.node(sub, f"{where}/properties/{name}")
            if self.rules.all_required and name not in required:
                strict = _nullable(strict)
            out["properties"][name] = strict
        out["required"] = list(properties) if self.rules.all_required else required
        out["additionalProperties"] = False

    def _array(self, schema: JsonObject, out: JsonObject, where: str) -> None:
        prefix = schema.pop("prefixItems", None)
        if prefix is not None:
            members = [self.node(s, f"{where}/prefixItems/{i}") for i, s in enumerate(prefix)]
            unique = [m for i, m in enumerate(members) if m not in members[:i]]
            schema.pop("items", None)
            out["items"] = unique[0] if len(unique) == 1 else {"anyOf": unique}
            schema.setdefault("minItems", len(prefix))
            schema.setdefault("maxItems", len(prefix))
        elif "items" in schema:
            out["items"] = self.node(schema.pop("items"), f"{where}/items")
        else:
            raise self.fail(where, "an array needs a schema for its items")


def _value_type(value: Any) -> str:
    """The JSON type of an enum / const value (a scalar: the rules refuse the others)."""
    if isinstance(value, bool):
        return "boolean"
    return {str: "string", int: "integer", float: "number"}.get(type(value), "null")


def _typed_enum(kind: str, values: list[Any]) -> JsonObject:
    return {"type": "null"} if kind == "null" else {"type": kind, "enum": values}


def _refs(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str):
            yield schema["$ref"]
        for value in schema.values():
            yield from _refs(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _refs(item)


def _refuse_cycles(root: JsonObject, provider: str) -> None:
    """Raise when following `$ref`s from the top can come back to a definition on the way."""

    def visit(ref: str, trail: tuple[str, ...]) -> None:
        if ref in trail:
            raise StrictSchemaError(provider, ref, "a recursive schema has no strict form")
        target = resolve_ref(root, ref)
        for inner in _refs({k: v for k, v in target.items() if k not in _DEFS} if target else {}):
            visit(inner, (*trail, ref))

    for ref in _refs({k: v for k, v in root.items() if k not in _DEFS}):
        visit(ref, ())


def _has_type(schema: JsonObject, name: str) -> bool:
    declared = schema.get("type")
    return declared == name or (isinstance(declared, list) and name in declared)


def admits_null(schema: JsonObject) -> bool:
    """Whether `schema` (as the generator or a strict rewrite makes them) accepts null."""
    if _has_type(schema, "null") or None in schema.get("enum", [1]):
        return True
    if "const" in schema:
        return schema["const"] is None
    return any(admits_null(member) for member in schema.get("anyOf", []))


def _nullable(schema: JsonObject) -> JsonObject:
    """`schema` or null: a type list when that is exact, else an `anyOf` with null."""
    if admits_null(schema):
        return schema
    declared = schema.get("type")
    if isinstance(declared, str | list) and not schema.keys() & {"enum", "const", "anyOf"}:
        names = [declared] if isinstance(declared, str) else declared
        return {**schema, "type": [*names, "null"]}
    hoisted = {k: schema[k] for k in _ANNOTATIONS if k in schema}
    inner = {k: v for k, v in schema.items() if k not in hoisted}
    return {"anyOf": [inner, {"type": "null"}], **hoisted}


def _leftovers(out: JsonObject, rest: JsonObject) -> JsonObject:
    """Unsupported keywords as a hint in the description (`{minLength: 3, default: "x"}`)."""
    if not rest:
        return out
    hint = ", ".join(f"{k}: {orjson.dumps(v).decode()}" for k, v in rest.items())
    described = out.get("description")
    out["description"] = f"{described}\n\n{{{hint}}}" if described else f"{{{hint}}}"
    return out

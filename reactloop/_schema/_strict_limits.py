"""The size limits of a strict schema: OpenAI refuses a larger one (`invalid_json_schema`).

OpenAI's structured outputs guide ("Supported schemas", "Objects have limitations on nesting
depth and size"): at most 5,000 object properties in all, 10 levels of nested objects, 1,000
enum values in all, 120,000 characters of property names, definition names, enum and const
values together, and no more than 15,000 characters of string values in one enum of more than
250 values. Checked on the strict form (what is sent) so that AUTO can fall back to a final-answer
tool instead of sending a request that is sure to fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from reactloop._core import JsonObject
from reactloop._errors import StrictSchemaError

_DEFS = ("$defs", "definitions")


@attrs.frozen
class Limits:
    """How big one provider's strict schema may be."""

    provider: str
    depth: int = 10
    properties: int = 5000
    enum_values: int = 1000
    characters: int = 120_000
    big_enum: int = 250  # an enum of more values ...
    big_enum_characters: int = 15_000  # ... may hold this many characters of strings


def check_limits(root: JsonObject, limits: Limits) -> None:
    """Raise `StrictSchemaError` naming the first limit `root` (a strict schema) exceeds."""
    properties = enum_values = characters = 0
    for node, where in _nodes(root, "#"):
        names = node.get("properties", {})
        properties += len(names)
        characters += sum(map(len, names)) + sum(len(k) for d in _DEFS for k in node.get(d, {}))
        values = node.get("enum", []) + ([node["const"]] if "const" in node else [])
        enum_values += len(values)
        strings = sum(len(v) for v in values if isinstance(v, str))
        characters += strings
        if len(values) > limits.big_enum and strings > limits.big_enum_characters:
            found = f"{strings} characters in an enum of {len(values)} values"
            most = f"{limits.big_enum_characters} in one of more than {limits.big_enum}"
            _refuse(limits, where, found, most)
    _over(limits, "object properties", properties, limits.properties)
    _over(limits, "enum values", enum_values, limits.enum_values)
    _over(limits, "characters of names and enum values", characters, limits.characters)
    _Depth(root, limits).visit(root, "#", 0, ())


def _over(limits: Limits, what: str, count: int, most: int) -> None:
    if count > most:
        _refuse(limits, "#", f"{count} {what}", str(most))


def _refuse(limits: Limits, where: str, found: str, most: str) -> None:
    problem = f"{found}, more than the {most} {limits.provider} takes"
    raise StrictSchemaError(limits.provider, where, problem)


def _nodes(schema: Any, where: str) -> Iterator[tuple[JsonObject, str]]:
    """Every schema inside `schema` (itself included) with its JSON pointer."""
    if not isinstance(schema, dict):
        return
    yield schema, where
    for name, sub in _children(schema, where):
        yield from _nodes(sub, name)
    for defs in _DEFS:
        for name, sub in schema.get(defs, {}).items():
            yield from _nodes(sub, f"{where}/{defs}/{name}")


def _children(schema: JsonObject, where: str) -> Iterator[tuple[str, Any]]:
    """The schemas a value of `schema` nests (its properties, items, alternatives)."""
    for name, sub in schema.get("properties", {}).items():
        yield f"{where}/properties/{name}", sub
    if isinstance(schema.get("items"), dict):
        yield f"{where}/items", schema["items"]
    for index, sub in enumerate(schema.get("anyOf", [])):
        yield f"{where}/anyOf/{index}", sub


@attrs.define
class _Depth:
    """Objects nested in objects, through `$ref`s too (a recursive one counts once)."""

    root: JsonObject
    limits: Limits
    seen: dict[str, int] = attrs.Factory(dict)  # a definition's deepest visit so far

    def visit(self, node: Any, where: str, depth: int, trail: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref not in trail and self.seen.get(ref, -1) < depth:
                self.seen[ref] = depth
                self.visit(resolve_ref(self.root, ref), where, depth, (*trail, ref))
            return
        if "properties" in node:
            depth += 1
            if depth > self.limits.depth:
                found = f"{depth} levels of nested objects"
                _refuse(self.limits, where, found, str(self.limits.depth))
        for name, sub in _children(node, where):
            self.visit(sub, name, depth, trail)


def resolve_ref(root: JsonObject, ref: str) -> Any:
    """The schema a local `$ref` names, or None."""
    target: Any = root
    for part in ref.removeprefix("#").split("/")[1:]:
        if not isinstance(target, dict):
            return None
        target = target.get(part.replace("~1", "/").replace("~0", "~"))
    return target if ref.startswith("#") else None

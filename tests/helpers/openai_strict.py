"""A checker of OpenAI's strict structured-output rules, written from OpenAI's own documentation
(platform.openai.com/docs/guides/structured-outputs, "Supported schemas"), not from our rewrite.

What the guide says a strict schema must be, and what this checks on every node:
- the root is an object, not an `anyOf`;
- supported types: string, number, boolean, integer, object, array, null (a list of them for a
  nullable value), enum and anyOf; every node states its `type` (an enum's too), except an
  `anyOf` (each member is checked) and a bare `$ref` to `$defs`/`definitions` (nothing beside it);
- every object has `additionalProperties: false` and lists all its properties in `required`;
- supported keywords only: string `pattern` and `format` (date-time, time, date, duration,
  email, hostname, ipv4, ipv6, uuid); number `multipleOf`, `maximum`, `exclusiveMaximum`,
  `minimum`, `exclusiveMinimum`; array `items`, `minItems`, `maxItems`; plus `description`,
  `title` (and `const`, counted in the size limits);
- sizes: 5,000 object properties in all, 10 levels of nesting, 1,000 enum values, 120,000
  characters of property names, definition names, enum and const values; 15,000 characters of
  strings in one enum of more than 250 values.
"""

from __future__ import annotations

from typing import Any

TYPES = frozenset({"string", "number", "boolean", "integer", "object", "array", "null"})
FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_BY_TYPE = {
    "string": {"pattern", "format"},
    "number": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "array": {"items", "minItems", "maxItems"},
    "object": {"properties", "required", "additionalProperties"},
}
_BY_TYPE["integer"] = _BY_TYPE["number"]
_ANY_NODE = {"type", "enum", "const", "description", "title", "$defs", "definitions"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {str: "string", float: "number", type(None): "null"}.get(type(value), "other")


class _Checker:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.problems: list[str] = []
        self.properties = self.enum_values = self.characters = 0

    def say(self, where: str, problem: str) -> None:
        self.problems.append(f"{where}: {problem}")

    def node(self, node: Any, where: str, depth: int) -> None:
        if not isinstance(node, dict):
            self.say(where, f"not a schema: {node!r}")
            return
        for defs in ("$defs", "definitions"):
            for name, sub in node.get(defs, {}).items():
                self.characters += len(name)
                self.node(sub, f"{where}/{defs}/{name}", 0)
        if "$ref" in node:
            self.ref(node, where)
        elif "anyOf" in node:
            self.any_of(node, where, depth)
        elif "type" not in node:
            self.say(where, f"no type: {sorted(node)}")
        else:
            self.typed(node, where, depth)

    def ref(self, node: dict[str, Any], where: str) -> None:
        if set(node) != {"$ref"}:
            self.say(where, f"keywords beside $ref: {sorted(set(node) - {'$ref'})}")
        ref = node["$ref"]
        target: Any = self.root
        for part in ref.removeprefix("#").split("/")[1:]:
            target = target.get(part) if isinstance(target, dict) else None
        if not ref.startswith("#") or not isinstance(target, dict):
            self.say(where, f"$ref {ref!r} resolves to no schema here")

    def any_of(self, node: dict[str, Any], where: str, depth: int) -> None:
        extra = set(node) - {"anyOf", "description", "title", "$defs", "definitions"}
        if extra:
            self.say(where, f"keywords beside anyOf: {sorted(extra)}")
        if not isinstance(node["anyOf"], list) or not node["anyOf"]:
            self.say(where, "anyOf must be a non-empty list")
            return
        for index, member in enumerate(node["anyOf"]):
            self.node(member, f"{where}/anyOf/{index}", depth)

    def typed(self, node: dict[str, Any], where: str, depth: int) -> None:
        declared = node["type"]
        kinds = declared if isinstance(declared, list) else [declared]
        if not kinds or not set(kinds) <= TYPES or len(set(kinds)) != len(kinds):
            self.say(where, f"type {declared!r} is not a supported type or list of them")
            return
        allowed = _ANY_NODE.union(*(_BY_TYPE.get(k, set()) for k in kinds))
        if set(node) - allowed:
            self.say(where, f"unsupported keywords {sorted(set(node) - allowed)}")
        if node.get("format", "date") not in FORMATS:
            self.say(where, f"unsupported format {node['format']!r}")
        self.values(node, where, kinds)
        if "object" in kinds:
            self.object(node, where, depth + 1)
        if "array" in kinds:
            if not isinstance(node.get("items"), dict):
                self.say(where, "an array without an items schema")
            else:
                self.node(node["items"], f"{where}/items", depth)

    def values(self, node: dict[str, Any], where: str, kinds: list[str]) -> None:
        values = [*node.get("enum", []), *([node["const"]] if "const" in node else [])]
        self.enum_values += len(node.get("enum", []))
        strings = sum(len(v) for v in values if isinstance(v, str))
        self.characters += strings
        if len(node.get("enum", [])) > 250 and strings > 15_000:
            self.say(where, f"an enum of {len(node['enum'])} values holds {strings} characters")
        for value in values:
            kind = _json_type(value)
            if kind not in kinds and not (kind == "integer" and "number" in kinds):
                self.say(where, f"value {value!r} is not of type {kinds}")

    def object(self, node: dict[str, Any], where: str, depth: int) -> None:
        if depth > 10:
            self.say(where, f"{depth} levels of nesting")
        properties = node.get("properties")
        if not isinstance(properties, dict):
            self.say(where, "an object without properties")
            return
        if node.get("additionalProperties") is not False:
            self.say(where, "additionalProperties is not false")
        if sorted(node.get("required", [])) != sorted(properties):
            self.say(where, f"required {node.get('required')} is not all of {list(properties)}")
        self.properties += len(properties)
        for name, sub in properties.items():
            self.characters += len(name)
            self.node(sub, f"{where}/properties/{name}", depth)


def openai_strict_problems(schema: Any) -> list[str]:
    """Every way `schema` breaks OpenAI's documented strict-mode rules (empty: it keeps them)."""
    checker = _Checker(schema)
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        checker.say("#", "the root must be an object schema, not an anyOf")
    checker.node(schema, "#", 0)
    for what, count, most in (
        ("object properties", checker.properties, 5000),
        ("enum values", checker.enum_values, 1000),
        ("characters of names and values", checker.characters, 120_000),
    ):
        if count > most:
            checker.say("#", f"{count} {what}, more than {most}")
    return checker.problems

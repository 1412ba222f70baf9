"""A small validator for a raw JSON schema given as an output type: parsed JSON in, the same out.

It checks the keywords structured outputs use: `type` (a name or a list), `enum`, `const`,
`properties`, `required`, `additionalProperties` (false or a schema), `items`, `prefixItems`,
`minItems`, `maxItems`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
`minLength`, `maxLength`, `pattern`, `anyOf`, `oneOf`, `allOf`, and local `$ref`s into `$defs` /
`definitions` (recursion allowed). Other keywords (`format`, `description`, `default`, ...) are
annotations here and not checked. Like the typed converters, a null for an optional property whose
schema rejects null means "absent" (strict provider modes send it) and the key is dropped. The
schema is compiled once into closures; errors are `_schema.Invalid` naming the path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from reactloop._errors import ToolArgumentsError
from reactloop._schema._generate import Converter, Invalid, convert_each

Check = Callable[[Any, str], None]

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "number": lambda v: type(v) in (int, float),
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
}


def _kind(value: Any) -> str:
    return next((name for name, test in _TYPES.items() if test(value)), type(value).__name__)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers, 1 equals 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


class _Compiler:
    """Compiles one schema; `$ref`s resolve against its root, each compiled once, lazily."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs: dict[str, Converter] = {}

    def compile(self, schema: Any) -> Converter:
        if schema is True or schema == {}:
            return lambda value, path: value
        if schema is False:
            return _refuse
        if not isinstance(schema, dict):
            raise ValueError(f"a JSON schema must be an object or a boolean, got {schema!r}")
        if "$ref" in schema:
            return self._ref(schema["$ref"])
        checks = _checks(schema)
        shape = self._shape(schema)
        return _combine(checks, shape, self._combinators(schema))

    def _ref(self, ref: str) -> Converter:
        def convert(value: Any, path: str) -> Any:
            if ref not in self.refs:
                self.refs[ref] = self.compile(self._resolve(ref))
            return self.refs[ref](value, path)

        self._resolve(ref)  # an unresolvable reference fails at compile time
        return convert

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise ValueError(f"only local $refs are supported, got {ref!r}")
        target = self.root
        for part in filter(None, ref[1:].split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or key not in target:
                raise ValueError(f"$ref {ref!r} points nowhere")
            target = target[key]
        return target

    def _shape(self, schema: dict[str, Any]) -> Converter | None:
        if any(k in schema for k in ("properties", "required", "additionalProperties")):
            return self._object(schema)
        if "items" in schema or "prefixItems" in schema:
            return self._array(schema)
        return None

    def _object(self, schema: dict[str, Any]) -> Converter:
        properties = {k: self.compile(s) for k, s in schema.get("properties", {}).items()}
        required: list[str] = list(schema.get("required", []))
        extra = schema.get("additionalProperties", True)
        extra_convert = None if extra is False else self.compile(extra)
        return _object_converter(properties, required, extra_convert)

    def _array(self, schema: dict[str, Any]) -> Converter:
        prefix = [self.compile(s) for s in schema.get("prefixItems", [])]
        rest = self.compile(schema.get("items", True))

        def convert(value: Any, path: str) -> Any:
            if type(value) is not list:
                return value
            return convert_each(
                [
                    (prefix[i] if i < len(prefix) else rest, item, f"{path}[{i}]")
                    for i, item in enumerate(value)
                ]
            )

        return convert

    def _combinators(self, schema: dict[str, Any]) -> list[Converter]:
        found: list[Converter] = []
        if "anyOf" in schema:
            found.append(_any_of([self.compile(s) for s in schema["anyOf"]]))
        if "oneOf" in schema:
            found.append(_one_of([self.compile(s) for s in schema["oneOf"]]))
        for member in schema.get("allOf", []):
            found.append(self.compile(member))
        return found


def _refuse(value: Any, path: str) -> Any:
    raise Invalid(path, f"no value is allowed here, got {value!r}")


def _combine(checks: list[Check], shape: Converter | None, more: list[Converter]) -> Converter:
    def convert(value: Any, path: str) -> Any:
        for check in checks:
            check(value, path)
        result = shape(value, path) if shape is not None else value
        for other in more:
            other(value, path)
        return result

    return convert


def _object_converter(
    properties: dict[str, Converter], required: list[str], extra: Converter | None
) -> Converter:
    admits_null: dict[str, bool] = {}

    def absent(name: str, item: Any) -> bool:
        if item is not None or name in required or name not in properties:
            return False
        if name not in admits_null:
            admits_null[name] = _accepts(properties[name], None)
        return not admits_null[name]

    def convert(value: Any, path: str) -> Any:
        if type(value) is not dict:
            return value
        value = {k: v for k, v in value.items() if not absent(k, v)}
        missing = [name for name in required if name not in value]
        found = [Invalid(path, f"missing required properties {missing}")] if missing else []
        prefix = f"{path}." if path else ""
        try:
            converted = convert_each(
                [(_property(k, properties, extra), v, prefix + k) for k, v in value.items()]
            )
        except Invalid as exc:
            found.append(exc)
        if found:
            raise Invalid.of(found)
        return dict(zip(value, converted, strict=True))

    return convert


def _property(name: str, properties: dict[str, Converter], extra: Converter | None) -> Converter:
    """The converter of property `name`; one that refuses it when no property of the name is
    allowed (the problem is then the object's, at its path)."""
    if name in properties:
        return properties[name]
    if extra is not None:
        return extra

    def unexpected(item: Any, path: str) -> Any:
        allowed = sorted(properties)
        where = path[: -len(name)].rstrip(".")
        raise Invalid(where, f"unexpected property {name!r}; allowed are {allowed}")

    return unexpected


def _accepts(convert: Converter, value: Any) -> bool:
    try:
        convert(value, "")
    except Invalid:
        return False
    return True


def _any_of(members: list[Converter]) -> Converter:
    def convert(value: Any, path: str) -> Any:
        problems = []
        for member in members:
            try:
                return member(value, path)
            except Invalid as exc:
                problems.append(exc.problem if exc.path == path else str(exc))
        raise Invalid(path, "matches no alternative: " + " | ".join(problems))

    return convert


def _one_of(members: list[Converter]) -> Converter:
    def convert(value: Any, path: str) -> Any:
        matching = [member for member in members if _accepts(member, value)]
        if len(matching) != 1:
            raise Invalid(path, f"matches {len(matching)} alternatives, expected exactly one")
        return matching[0](value, path)

    return convert


def _checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"]))
    if "enum" in schema:
        checks.append(_enum_check(list(schema["enum"])))
    if "const" in schema:
        checks.append(_enum_check([schema["const"]]))
    checks.extend(_bound_checks(schema))
    if "pattern" in schema:
        checks.append(_pattern_check(schema["pattern"]))
    return checks


def _type_check(names: str | list[str]) -> Check:
    wanted = [names] if isinstance(names, str) else list(names)
    tests = [_TYPES[name] for name in wanted]
    expected = " or ".join(wanted)

    def check(value: Any, path: str) -> None:
        if not any(test(value) for test in tests):
            raise Invalid(path, f"expected {expected}, got {_kind(value)} {value!r}")

    return check


def _enum_check(choices: list[Any]) -> Check:
    def check(value: Any, path: str) -> None:
        if not any(_same(value, choice) for choice in choices):
            raise Invalid(path, f"expected one of {choices!r}, got {value!r}")

    return check


_Bound = tuple[Callable[[Any], bool], Callable[[Any], Any], Callable[[Any, Any], bool]]
_BOUNDS: dict[str, _Bound] = {
    "minimum": (_TYPES["number"], lambda v: v, lambda v, b: v >= b),
    "maximum": (_TYPES["number"], lambda v: v, lambda v, b: v <= b),
    "exclusiveMinimum": (_TYPES["number"], lambda v: v, lambda v, b: v > b),
    "exclusiveMaximum": (_TYPES["number"], lambda v: v, lambda v, b: v < b),
    "minLength": (_TYPES["string"], len, lambda v, b: v >= b),
    "maxLength": (_TYPES["string"], len, lambda v, b: v <= b),
    "minItems": (_TYPES["array"], len, lambda v, b: v >= b),
    "maxItems": (_TYPES["array"], len, lambda v, b: v <= b),
}


def _bound_checks(schema: dict[str, Any]) -> list[Check]:
    return [_bound(keyword, schema[keyword]) for keyword in _BOUNDS if keyword in schema]


def _bound(keyword: str, bound: Any) -> Check:
    applies, measure, holds = _BOUNDS[keyword]

    def check(value: Any, path: str) -> None:
        if applies(value) and not isinstance(value, bool) and not holds(measure(value), bound):
            raise Invalid(path, f"{keyword} is {bound!r}, got {value!r}")

    return check


def _pattern_check(pattern: str) -> Check:
    compiled = re.compile(pattern)

    def check(value: Any, path: str) -> None:
        if type(value) is str and compiled.search(value) is None:
            raise Invalid(path, f"expected a string matching {pattern!r}, got {value!r}")

    return check


def compile_raw(schema: Any) -> Converter:
    """Compile a JSON schema into a converter returning the (validated) parsed JSON."""
    return _Compiler(schema).compile(schema)


def _any_object(value: Any, path: str) -> Any:
    return value


def compile_input(schema: Any) -> Converter:
    """The validator of a tool's input schema given as JSON (an MCP server's); a schema the
    validator cannot compile (a remote `$ref`) leaves the checking to the tool's owner (any JSON
    object is let through)."""
    try:
        return compile_raw(schema)
    except (ValueError, TypeError, KeyError, re.error):
        return _any_object


def schema_arguments(name: str, arguments: str, convert: Converter) -> dict[str, Any]:
    """The model's JSON arguments for tool `name`, parsed and checked by `convert` (the tool's
    compiled input schema); anything else is a `ToolArgumentsError` saying what is wrong."""
    try:
        value = orjson.loads(arguments) if arguments.strip() else {}
    except orjson.JSONDecodeError as exc:
        raise ToolArgumentsError(name, [f"arguments are not valid JSON ({exc})"]) from None
    if type(value) is not dict:
        problem = f"arguments must be a JSON object, got {type(value).__name__}"
        raise ToolArgumentsError(name, [problem])
    try:
        checked: dict[str, Any] = convert(value, "")
    except Invalid as exc:
        raise ToolArgumentsError(name, [str(exc)]) from None
    return checked

"""An output type as a schema and a converter, from the tools' own schema generator.

Providers want an object at the top of a tool's parameters and of a strict response format, so a
type whose schema is not an object travels wrapped as `{"result": value}` and is unwrapped on
the way back.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from reactloop._errors import ConfigurationError
from reactloop._messages import JsonObject
from reactloop._schema import Converter, Invalid, UnsupportedType, compile_type

WRAPPER = "result"


@frozen
class OutputSpec:
    """The schema of an output type, its converter, and a name for providers."""

    name: str
    schema: JsonObject
    convert_json: Converter
    wrapped: bool

    @property
    def object_schema(self) -> JsonObject:
        """The schema as providers take it: an object (a non-object type wrapped)."""
        if not self.wrapped:
            return self.schema
        return {
            "type": "object",
            "properties": {WRAPPER: self.schema},
            "required": [WRAPPER],
            "additionalProperties": False,
        }

    def unwrap(self, value: Any) -> Any:
        """The answer inside the wrapper object, for a wrapped type."""
        if not self.wrapped:
            return value
        if not isinstance(value, dict) or set(value) != {WRAPPER}:
            raise Invalid("", f"expected an object with exactly one property {WRAPPER!r}")
        return value[WRAPPER]

    def convert(self, value: Any) -> Any:
        """The typed value of a JSON value; `Invalid` naming the path when it does not match."""
        return self.convert_json(value, "")


_TYPE_RULE = (
    "a type with a JSON schema (attrs class, dataclass, TypedDict, primitive, container,"
    " Literal, union) or a JSON schema (a dict)"
)


def _name_of(name: object) -> str:
    """A name providers accept (letters, digits, '_', '-'; at most 64)."""
    cleaned = "".join(ch for ch in str(name or "output") if ch.isalnum() or ch in "_-")
    return cleaned[:64] or "output"


def _any_json(value: Any, path: str) -> Any:
    return value


def output_spec(output_type: object) -> OutputSpec:
    """The spec of an output type (a Python type the tools' schema generator maps) or of a raw
    JSON schema (a dict: the output is then the parsed JSON)."""
    if isinstance(output_type, dict):
        if not all(isinstance(key, str) for key in output_type):
            raise ConfigurationError.invalid("output_type", output_type, "a JSON schema (a dict)")
        wrapped = output_type.get("type") != "object"
        name = str(output_type.get("title", "output"))
        return OutputSpec(
            _name_of(type("x", (), {"__name__": name})), output_type, _any_json, wrapped
        )
    try:
        schema, convert = compile_type(output_type)
    except UnsupportedType as exc:
        rule = f"{_TYPE_RULE} ({exc})"
        raise ConfigurationError.invalid("output_type", output_type, rule) from None
    name = _name_of(getattr(output_type, "__name__", None))
    return OutputSpec(name, schema, convert, schema.get("type") != "object")

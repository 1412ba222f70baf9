"""What a structured output is on the wire: its JSON schema, its name, and the way back to `T`.

`OutputSpec.of(output)` takes an output type (anything the tools' schema generator maps: attrs
classes, dataclasses, TypedDicts, primitives, containers, Literal, Enum, unions) or a raw JSON
schema (a dict: the output is then the parsed JSON, checked by `_raw_schema`). Providers want an
object at the top of a tool's parameters and of OpenAI's `response_format`, so any other output
is wrapped as `{"result": <value>}` (`WRAPPER_KEY`) and unwrapped by `convert`. Errors on the
way back are `Invalid` with a path in the terms of the schema the model saw (`result[2].city`
for a wrapped list), so a repair message can quote it. The provider strict forms of `schema`
come from `strict_schema_openai` / `strict_schema_anthropic` (re-exported here).
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Generic, TypeVar, overload

import attrs
import orjson

from reactloop._core import JsonObject
from reactloop._errors import ConfigurationError
from reactloop._schema import (
    Converter,
    Invalid,
    UnsupportedType,
    compile_object,
    compile_raw,
    compile_type,
    strict_schema_anthropic,
    strict_schema_openai,
)
from reactloop._validate import tool_name

__all__ = [
    "WRAPPER_KEY",
    "OutputSpec",
    "strict_schema_anthropic",
    "strict_schema_openai",
]

T = TypeVar("T")

WRAPPER_KEY = "result"
_ENUM_DOC = "An enumeration."
_TYPE_RULE = (
    "an attrs class, dataclass, TypedDict, str, int, float, bool, None, list, tuple, dict with "
    "str keys, Literal, Enum, a union of these, or a JSON schema dict"
)


@attrs.frozen
class OutputSpec(Generic[T]):
    """An output type compiled once: `schema` (an object at the top, what a final-answer tool's
    parameters or a `response_format` carry), `value_schema` (the output's own schema),
    `wrapped` (whether `schema` is `{"result": value_schema}`), `name`, `description` (the
    class's docstring or the raw schema's description, if any) and `convert`."""

    name: str
    schema: JsonObject
    value_schema: JsonObject
    wrapped: bool
    _converter: Converter = attrs.field(repr=False)
    description: str | None = None

    @overload
    @classmethod
    def of(cls, output: type[T], *, name: str | None = None) -> OutputSpec[T]: ...

    @overload
    @classmethod
    def of(cls, output: object, *, name: str | None = None) -> OutputSpec[Any]: ...

    @classmethod
    def of(cls, output: Any, *, name: str | None = None) -> OutputSpec[Any]:
        """Compile `output` (a type or a JSON schema dict); `name` defaults to the class name,
        the schema's `title`, else "output". Raises `ConfigurationError` if it has no schema."""
        value_schema, converter = _compile(output)
        chosen = _name(output, value_schema) if name is None else _checked_name(name)
        about = _description(output)
        if value_schema.get("type") == "object":
            return cls(chosen, value_schema, value_schema, False, converter, about)
        schema, converter = _wrap(output, value_schema)
        return cls(chosen, schema, value_schema, True, converter, about)

    def convert(self, value: Any) -> T:
        """The typed output from the JSON value the model sent for `schema`; raises `Invalid`."""
        try:
            result: T = self._converter(value, "")
        except Invalid as exc:
            raise Invalid(exc.path, exc.problem, root="output", errors=exc.errors) from None
        return result

    def parse(self, text: str | bytes) -> T:
        """`convert` of JSON text; text that is not JSON raises `Invalid` too."""
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise Invalid("", f"not valid JSON ({exc})", root="output") from None
        return self.convert(value)


def _compile(output: Any) -> tuple[JsonObject, Converter]:
    if isinstance(output, dict):
        if not all(isinstance(key, str) for key in output):
            raise ConfigurationError.invalid("output_type", output, "a JSON schema (str keys)")
        try:
            return dict(output), compile_raw(output)
        except (ValueError, TypeError, re.error) as exc:
            rule = f"a JSON schema ({exc})"
            raise ConfigurationError.invalid("output_type", output, rule) from None
    try:
        return compile_type(output)
    except UnsupportedType as exc:
        raise ConfigurationError.invalid("output_type", output, f"{_TYPE_RULE} ({exc})") from None


def _wrap(output: Any, value_schema: JsonObject) -> tuple[JsonObject, Converter]:
    """`{"result": value}` as an object schema; a raw schema's `$defs` move to the top, where
    its `$ref`s point."""
    inner = dict(value_schema)
    hoisted: JsonObject = {k: inner.pop(k) for k in ("$defs", "definitions") if k in inner}
    schema: JsonObject = {
        "type": "object",
        "properties": {WRAPPER_KEY: inner},
        "required": [WRAPPER_KEY],
        "additionalProperties": False,
        **hoisted,
    }
    if isinstance(output, dict):
        check = compile_raw(schema)
        return schema, lambda value, path: check(value, path)[WRAPPER_KEY]
    _, convert = compile_object({WRAPPER_KEY: (output, attrs.NOTHING)}, {})
    return schema, lambda value, path: convert(value, path)[WRAPPER_KEY]


def _name(output: Any, value_schema: JsonObject) -> str:
    if isinstance(output, type):
        candidate = output.__name__
    elif isinstance(output, dict) and isinstance(value_schema.get("title"), str):
        candidate = value_schema["title"]
    else:
        return "output"
    return re.sub(r"[^A-Za-z0-9_-]", "_", candidate)[:64] or "output"


def _description(output: Any) -> str | None:
    """A docstring the user wrote (not the one dataclasses or Enum make up), or the raw
    schema's description."""
    if isinstance(output, dict):
        found = output.get("description")
        return found if isinstance(found, str) else None
    if not isinstance(output, type):
        return None
    doc = output.__dict__.get("__doc__")
    if not isinstance(doc, str) or doc.startswith(f"{output.__name__}(") or doc == _ENUM_DOC:
        return None
    return inspect.cleandoc(doc)


def _checked_name(name: object) -> str:
    return tool_name("name", name)

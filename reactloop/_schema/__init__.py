"""JSON schemas from Python types and back: tool parameters and output types, raw schemas,
and the strict forms providers require. Used by `@tool` and structured output.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._schema._generate import (
    Converter,
    Invalid,
    UnsupportedType,
    compile_object,
    compile_type,
)
from reactloop._schema._raw import compile_input, compile_raw, schema_arguments
from reactloop._schema._strict import strict_schema_anthropic, strict_schema_openai

__all__ = [
    "Converter",
    "Invalid",
    "UnsupportedType",
    "compile_input",
    "compile_object",
    "compile_raw",
    "compile_type",
    "schema_arguments",
    "strict_schema_anthropic",
    "strict_schema_openai",
]

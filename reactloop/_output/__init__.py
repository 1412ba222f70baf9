"""Structured output: the output spec and strategies, output schemas, streamed partial
values and partial JSON. Published by `reactloop.output`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._output._options import OutputOptions
from reactloop._output._partial import PartialJson, strip_fences
from reactloop._output._spec import (
    FINAL_TOOL,
    Output,
    OutputRetry,
    OutputStrategy,
    OutputValidationError,
    OutputValidator,
    build_output,
    output_validator,
)
from reactloop._output._stream import NOTHING, PartialAnswers

__all__ = [
    "FINAL_TOOL",
    "NOTHING",
    "Output",
    "OutputOptions",
    "OutputRetry",
    "OutputStrategy",
    "OutputValidationError",
    "OutputValidator",
    "PartialAnswers",
    "PartialJson",
    "build_output",
    "output_validator",
    "strip_fences",
]

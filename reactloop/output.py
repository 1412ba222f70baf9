"""Structured output: runs that end with a typed value instead of text.

`ReActLoop(model, output_type=Invoice)` makes every run end with a validated `Invoice`
(`RunResult[Invoice]`): the model is asked for it by a strategy (`OutputStrategy`: the provider's
native structured outputs, a final-answer tool, or the schema in the prompt), the answer is
validated against the type and sent back on a mismatch (`output_retries`), and
`output_validators` may check or change the value, or raise `OutputRetry` to ask again.
"""

from reactloop._core import publish
from reactloop._output import (
    FINAL_TOOL,
    OutputOptions,
    OutputRetry,
    OutputStrategy,
    OutputValidationError,
    OutputValidator,
    PartialJson,
    strip_fences,
)
from reactloop._phases import OutputPhase

__all__ = [
    "FINAL_TOOL",
    "OutputOptions",
    "OutputPhase",
    "OutputRetry",
    "OutputStrategy",
    "OutputValidationError",
    "OutputValidator",
    "PartialJson",
    "strip_fences",
]

publish(__name__, globals())

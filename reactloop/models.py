"""Talking to models: the `Model` contract, request and response values, settings, and retries.

The concrete providers (OpenAI, Anthropic, model strings) live in `reactloop.providers`.
"""

from reactloop._contracts import (
    Model,
)
from reactloop._messages import (
    FinishReason,
    ForcedTool,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ResponseFormat,
    ResponseFormatKind,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)
from reactloop._retry import (
    RetryNotice,
    RetryPolicy,
    call_with_retry,
    is_retryable,
)

__all__ = [
    "FinishReason",
    "ForcedTool",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ResponseFormat",
    "ResponseFormatKind",
    "RetryNotice",
    "RetryPolicy",
    "TextDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolSpec",
    "call_with_retry",
    "is_retryable",
]

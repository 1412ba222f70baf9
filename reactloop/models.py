"""Talking to models: the `Model` contract, request and response values, settings, and retries.

The concrete providers (OpenAI, Anthropic, model strings) live in `reactloop.providers`.
"""

from reactloop._core import (
    CacheSettings,
    FinishReason,
    ForcedTool,
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ReasoningDelta,
    ReasoningEffort,
    ReasoningSettings,
    ResponseFormat,
    ResponseFormatKind,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    publish,
)
from reactloop._policies import RetryNotice, RetryPolicy, call_with_retry, is_retryable

__all__ = [
    "CacheSettings",
    "FinishReason",
    "ForcedTool",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ReasoningDelta",
    "ReasoningEffort",
    "ReasoningSettings",
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

publish(__name__, globals())

"""Talking to models: the `Model` contract, request and response values, the OpenAI and
Anthropic providers, settings, and retries."""

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
from reactloop._providers import (
    AnthropicModel,
    InstructionsRole,
    MaxTokensField,
    OpenAIModel,
    model_from_string,
)
from reactloop._retry import (
    RetryNotice,
    RetryPolicy,
    call_with_retry,
    is_retryable,
)

__all__ = [
    "AnthropicModel",
    "FinishReason",
    "ForcedTool",
    "InstructionsRole",
    "MaxTokensField",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIModel",
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
    "model_from_string",
]

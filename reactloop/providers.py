"""The model providers: OpenAI Chat Completions (and compatible servers), OpenAI Responses,
Anthropic Messages and Gemini (native API), each implementing the `Model` contract,
`model_from_string` for "openai:gpt-4o", and `FallbackModel` (the next model asked when one is
unavailable)."""

from reactloop import AnthropicModel, OpenAIModel  # published by the top level first, as theirs
from reactloop._core import publish
from reactloop._providers import (
    DEFAULT_SWITCH_ON,
    HOSTS,
    AzureOpenAIModel,
    AzureOpenAIResponsesModel,
    FallbackModel,
    GeminiModel,
    InstructionsRole,
    MaxTokensField,
    ModelProfile,
    OpenAICompatibleHost,
    OpenAIResponsesModel,
    ReasoningDialect,
    ResponsesConversation,
    model_from_string,
    model_profile,
)

__all__ = [
    "DEFAULT_SWITCH_ON",
    "HOSTS",
    "AnthropicModel",
    "AzureOpenAIModel",
    "AzureOpenAIResponsesModel",
    "FallbackModel",
    "GeminiModel",
    "InstructionsRole",
    "MaxTokensField",
    "ModelProfile",
    "OpenAICompatibleHost",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "ReasoningDialect",
    "ResponsesConversation",
    "model_from_string",
    "model_profile",
]

publish(__name__, globals())

"""The model providers: OpenAI Chat Completions (and compatible servers), OpenAI Responses and
Anthropic Messages, each implementing the `Model` contract, and `model_from_string` for
"openai:gpt-4o"."""

from reactloop._core import publish
from reactloop._providers import (
    AnthropicModel,
    InstructionsRole,
    MaxTokensField,
    ModelProfile,
    OpenAIModel,
    OpenAIResponsesModel,
    ResponsesConversation,
    model_from_string,
    model_profile,
)

__all__ = [
    "AnthropicModel",
    "InstructionsRole",
    "MaxTokensField",
    "ModelProfile",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "ResponsesConversation",
    "model_from_string",
    "model_profile",
]

publish(__name__, globals())

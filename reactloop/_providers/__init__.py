"""Real model providers over HTTP: OpenAI Chat Completions (and compatible servers), OpenAI
Responses, Anthropic, Gemini, and model strings. Published by `reactloop.providers` and
`reactloop.models`."""

from reactloop._providers._anthropic import AnthropicModel
from reactloop._providers._azure import AzureOpenAIModel, AzureOpenAIResponsesModel
from reactloop._providers._content import ContentTooLargeError, UnsupportedContentError
from reactloop._providers._fallback import DEFAULT_SWITCH_ON, FallbackModel, SwitchOn
from reactloop._providers._gemini import GeminiModel
from reactloop._providers._hosts import HOSTS, OpenAICompatibleHost, ReasoningDialect
from reactloop._providers._http_errors import RetryHints, retry_hints
from reactloop._providers._openai import InstructionsRole, MaxTokensField, OpenAIModel
from reactloop._providers._profiles import ModelProfile, model_profile
from reactloop._providers._registry import model_from_string
from reactloop._providers._responses import OpenAIResponsesModel, ResponsesConversation
from reactloop._providers._safety import ContentFilteredError, FilterVerdict

__all__ = [
    "DEFAULT_SWITCH_ON",
    "HOSTS",
    "AnthropicModel",
    "AzureOpenAIModel",
    "AzureOpenAIResponsesModel",
    "ContentFilteredError",
    "ContentTooLargeError",
    "FallbackModel",
    "FilterVerdict",
    "GeminiModel",
    "InstructionsRole",
    "MaxTokensField",
    "ModelProfile",
    "OpenAICompatibleHost",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "ReasoningDialect",
    "ResponsesConversation",
    "RetryHints",
    "SwitchOn",
    "UnsupportedContentError",
    "model_from_string",
    "model_profile",
    "retry_hints",
]

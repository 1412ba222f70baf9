"""Real model providers over HTTP: OpenAI Chat Completions (and compatible servers), OpenAI
Responses, Anthropic, Gemini, and model strings. Published by `reactloop.providers` and
`reactloop.models`.

The providers, the hosts and model strings need httpx, so their modules load on first use of one
of their names (`LAZY`): `import reactloop` and a loop over another `Model` never load httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from reactloop._providers._content import ContentTooLargeError, UnsupportedContentError
from reactloop._providers._fallback import DEFAULT_SWITCH_ON, FallbackModel, SwitchOn
from reactloop._providers._profiles import ModelProfile, model_profile
from reactloop._providers._safety import ContentFilteredError, FilterVerdict

if TYPE_CHECKING:
    from reactloop._providers._anthropic import AnthropicModel
    from reactloop._providers._azure import AzureOpenAIModel, AzureOpenAIResponsesModel
    from reactloop._providers._gemini import GeminiModel
    from reactloop._providers._hosts import HOSTS, OpenAICompatibleHost, ReasoningDialect
    from reactloop._providers._http_errors import RetryHints, retry_hints
    from reactloop._providers._openai import InstructionsRole, MaxTokensField, OpenAIModel
    from reactloop._providers._registry import model_from_string
    from reactloop._providers._responses import OpenAIResponsesModel, ResponsesConversation

LAZY = {
    "AnthropicModel": "reactloop._providers._anthropic",
    "AzureOpenAIModel": "reactloop._providers._azure",
    "AzureOpenAIResponsesModel": "reactloop._providers._azure",
    "GeminiModel": "reactloop._providers._gemini",
    "HOSTS": "reactloop._providers._hosts",
    "OpenAICompatibleHost": "reactloop._providers._hosts",
    "ReasoningDialect": "reactloop._providers._hosts",
    "RetryHints": "reactloop._providers._http_errors",
    "retry_hints": "reactloop._providers._http_errors",
    "InstructionsRole": "reactloop._providers._openai",
    "MaxTokensField": "reactloop._providers._openai",
    "OpenAIModel": "reactloop._providers._openai",
    "model_from_string": "reactloop._providers._registry",
    "OpenAIResponsesModel": "reactloop._providers._responses",
    "ResponsesConversation": "reactloop._providers._responses",
}
"""The names whose modules need httpx, each with its module."""


def __getattr__(name: str) -> object:
    """Load a name of `LAZY` from its module on first use (then it is a plain global)."""
    module = LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = getattr(importlib.import_module(module), name)
    globals()[name] = found
    return found


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

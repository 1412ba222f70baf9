"""`model_from_string`: a model named by a string picks and configures its provider.

Forms:

- `openai:MODEL`: OpenAI (key from `OPENAI_API_KEY`; `OPENAI_BASE_URL` may point elsewhere).
- `openai-responses:MODEL`: OpenAI over the Responses API (`OpenAIResponsesModel`, stateless;
  key from `OPENAI_API_KEY`, `OPENAI_BASE_URL` as for `openai:`).
- `anthropic:MODEL`: Anthropic (key from `ANTHROPIC_API_KEY`).
- `google:MODEL` or `gemini:MODEL`: Gemini over Google's native API (`GeminiModel`; key from
  `GEMINI_API_KEY`, else `GOOGLE_API_KEY`; `GEMINI_BASE_URL` or `GOOGLE_GEMINI_BASE_URL` may
  point elsewhere).
- `openai-compatible:MODEL@BASE_URL`: any Chat Completions server (vLLM, Ollama, llama.cpp, ...)
  at `BASE_URL`, e.g. `openai-compatible:qwen2.5:7b@http://127.0.0.1:11434/v1`. The key is
  optional and read from `OPENAI_COMPATIBLE_API_KEY` only, never from `OPENAI_API_KEY`, so that an
  OpenAI key is not sent to another server; the output limit is sent as `max_tokens`.
"""

from __future__ import annotations

import os
import re

from reactloop._core import Model
from reactloop._errors import ConfigurationError
from reactloop._providers._anthropic import AnthropicModel
from reactloop._providers._gemini import GeminiModel
from reactloop._providers._openai import MaxTokensField, OpenAIModel
from reactloop._providers._responses import OpenAIResponsesModel
from reactloop._validate import checked_arguments, did_you_mean

_COMPATIBLE = re.compile(r"^(?P<model>.+?)@(?P<url>https?://\S+)$")
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
PROVIDERS = ("openai", "openai-responses", "anthropic", "google", "gemini", "openai-compatible")
FORMS = (
    "'openai:MODEL', 'openai-responses:MODEL', 'anthropic:MODEL', 'google:MODEL' or"
    " 'openai-compatible:MODEL@http://HOST:PORT/v1'"
)


def _compatible(rest: str, spec: str) -> Model:
    match = _COMPATIBLE.match(rest)
    if match is None:
        rule = "'openai-compatible:MODEL@URL' with an http:// or https:// URL"
        raise ConfigurationError(
            f"model string {spec!r} must name a base URL: {rule}",
            option="model",
            value=spec,
            rule=rule,
        )
    return OpenAIModel(
        match["model"],
        api_key=os.environ.get(COMPATIBLE_KEY_ENV, ""),
        base_url=match["url"],
        provider="openai-compatible",
        max_tokens_field=MaxTokensField.MAX_TOKENS,
    )


@checked_arguments
def model_from_string(spec: str) -> Model:
    """The configured provider for a model string; see the module doc for the forms."""
    if not isinstance(spec, str):
        raise ConfigurationError.invalid("model", spec, f"a model string: {FORMS}")
    prefix, colon, rest = spec.strip().partition(":")
    if not colon or not rest:
        raise ConfigurationError(
            f"model string {spec!r} must have the form {FORMS}",
            option="model",
            value=spec,
            rule=FORMS,
        )
    if prefix == "openai":
        return OpenAIModel(rest)
    if prefix == "openai-responses":
        return OpenAIResponsesModel(rest)
    if prefix == "anthropic":
        return AnthropicModel(rest)
    if prefix in ("google", "gemini"):
        return GeminiModel(rest)
    if prefix == "openai-compatible":
        return _compatible(rest, spec)
    hint = did_you_mean(prefix, PROVIDERS)
    raise ConfigurationError(
        f"model string {spec!r} names an unknown provider {prefix!r}{hint}: use {FORMS}",
        option="model",
        value=spec,
        rule=FORMS,
    )

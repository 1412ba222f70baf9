"""`model_from_string`: a model named by a string picks and configures its provider.

Forms:

- `openai:MODEL`: OpenAI (key from `OPENAI_API_KEY`; `OPENAI_BASE_URL` may point elsewhere).
- `openai-responses:MODEL`: OpenAI over the Responses API (`OpenAIResponsesModel`, stateless;
  key from `OPENAI_API_KEY`, `OPENAI_BASE_URL` as for `openai:`).
- `anthropic:MODEL`: Anthropic (key from `ANTHROPIC_API_KEY`).
- `google:MODEL` or `gemini:MODEL`: Gemini over Google's native API (`GeminiModel`; key from
  `GEMINI_API_KEY`, else `GOOGLE_API_KEY`; `GEMINI_BASE_URL` or `GOOGLE_GEMINI_BASE_URL` may
  point elsewhere).
- `azure:DEPLOYMENT` and `azure-responses:DEPLOYMENT`: a deployment of Azure OpenAI over Chat
  Completions or Responses (`AzureOpenAIModel`, `AzureOpenAIResponsesModel`; endpoint from
  `AZURE_OPENAI_ENDPOINT`, key from `AZURE_OPENAI_API_KEY`, the v1 API unless
  `OPENAI_API_VERSION` names a dated one).
- `openai-compatible:MODEL@BASE_URL`: any Chat Completions server (vLLM, Ollama, llama.cpp, ...)
  at `BASE_URL`, e.g. `openai-compatible:qwen2.5:7b@http://127.0.0.1:11434/v1`. The key is
  optional and read from `OPENAI_COMPATIBLE_API_KEY` only, never from `OPENAI_API_KEY`, so that an
  OpenAI key is not sent to another server; the output limit is sent as `max_tokens`.
- `openrouter:MODEL`, `groq:MODEL`, `deepseek:MODEL`, `cerebras:MODEL`: that host's preset
  (`OpenAIModel` with `host=`; key from `OPENROUTER_API_KEY`, `GROQ_API_KEY`,
  `DEEPSEEK_API_KEY`, `CEREBRAS_API_KEY` only).
- `ollama:MODEL`: a local Ollama (`OLLAMA_BASE_URL`, else `OLLAMA_HOST`'s server plus `/v1`, else
  `http://127.0.0.1:11434/v1`; no key unless `OLLAMA_API_KEY` is set).
- `vllm:MODEL@BASE_URL`: a vLLM server at `BASE_URL` (key from `VLLM_API_KEY`, optional).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from reactloop._core import Model
from reactloop._errors import ConfigurationError
from reactloop._providers._anthropic import AnthropicModel
from reactloop._providers._azure import AzureOpenAIModel, AzureOpenAIResponsesModel
from reactloop._providers._gemini import GeminiModel
from reactloop._providers._hosts import HOSTS, OLLAMA
from reactloop._providers._openai import MaxTokensField, OpenAIModel
from reactloop._providers._responses import OpenAIResponsesModel
from reactloop._validate import checked_arguments, did_you_mean

_COMPATIBLE = re.compile(r"^(?P<model>.+?)@(?P<url>https?://\S+)$")
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
PROVIDERS = (
    "openai", "openai-responses", "anthropic", "google", "gemini", "openai-compatible", *HOSTS,
)  # fmt: skip
AZURE_FORMS = ("azure", "azure-responses")  # 'azure:DEPLOYMENT', 'azure-responses:DEPLOYMENT'
FORMS = (
    "'openai:MODEL', 'openai-responses:MODEL', 'anthropic:MODEL', 'google:MODEL' (or"
    " 'gemini:MODEL'), 'azure:DEPLOYMENT', 'azure-responses:DEPLOYMENT',"
    " 'openai-compatible:MODEL@http://HOST:PORT/v1' or a host preset's "
    + ", ".join(f"'{name}:MODEL@URL'" if name == "vllm" else f"'{name}:MODEL'" for name in HOSTS)
)
"""Every form `model_from_string` takes, as its errors list them."""


_BY_NAME: dict[str, Callable[[str], Model]] = {
    "openai": OpenAIModel,
    "openai-responses": OpenAIResponsesModel,
    "anthropic": AnthropicModel,
    "google": GeminiModel,
    "gemini": GeminiModel,
}
"""The forms that take the model name alone."""


def _ollama_url() -> str | None:
    """Ollama's server from `OLLAMA_HOST` (`host:port` or a URL, as Ollama reads it), with the
    OpenAI-compatible API's `/v1`; None when unset (`OLLAMA_BASE_URL` or the default then)."""
    server = os.environ.get("OLLAMA_HOST", "").strip().rstrip("/")
    if not server or os.environ.get(OLLAMA.url_env or ""):
        return None
    return (server if "://" in server else f"http://{server}") + "/v1"


def _hosted(prefix: str, rest: str, spec: str) -> Model:
    """A host preset's model string: `vllm:MODEL@URL`, `ollama:MODEL`, `groq:MODEL`, ..."""
    if prefix == "vllm":
        match = _at_url(rest, spec, prefix)
        return OpenAIModel(match["model"], host=prefix, base_url=match["url"])
    if prefix == "ollama":
        return OpenAIModel(rest, host=prefix, base_url=_ollama_url())
    return OpenAIModel(rest, host=prefix)


def _at_url(rest: str, spec: str, prefix: str) -> re.Match[str]:
    match = _COMPATIBLE.match(rest)
    if match is None:
        rule = f"'{prefix}:MODEL@URL' with an http:// or https:// URL"
        raise ConfigurationError(
            f"model string {spec!r} must name a base URL: {rule}",
            option="model",
            value=spec,
            rule=rule,
        )
    return match


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
    if prefix in HOSTS:
        return _hosted(prefix, rest, spec)
    if prefix in _BY_NAME:
        return _BY_NAME[prefix](rest)
    if prefix == "openai-compatible":
        return _compatible(rest, spec)
    if prefix == AZURE_FORMS[0]:
        return AzureOpenAIModel(rest)
    if prefix == AZURE_FORMS[1]:
        return AzureOpenAIResponsesModel(rest)
    hint = did_you_mean(prefix, (*PROVIDERS, *AZURE_FORMS))
    raise ConfigurationError(
        f"model string {spec!r} names an unknown provider {prefix!r}{hint}: use {FORMS}",
        option="model",
        value=spec,
        rule=FORMS,
    )

"""Presets for OpenAI-compatible hosts: what each one accepts or returns differently from OpenAI's
Chat Completions, as one frozen value `OpenAICompatibleHost` that `OpenAIModel(host=...)` takes.

Each difference is encoded only where the host's own documentation states it (the page is named
beside it, and in `docs/providers.md`); the defaults are OpenAI's behaviour, so a host without a
difference in some respect is spelled like OpenAI there. A model without a host pays nothing for
this module: the provider consults a host only when it has one.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from types import MappingProxyType

import orjson
from attrs import evolve, field, frozen

from reactloop._core import (
    AssistantMessage,
    JsonObject,
    ModelResponse,
    ModelSettings,
    ReasoningEffort,
    ReasoningPart,
    ReasoningSettings,
    Usage,
)
from reactloop._errors import ConfigurationError
from reactloop._providers._http_errors import ErrorDetail, stream_error
from reactloop._providers._options import check_base_url
from reactloop._providers._profiles import ModelProfile, check_efforts, frozen_set
from reactloop._providers._reasoning import check_effort, openai_reasoning, refuse
from reactloop._providers._wire import items, obj, text
from reactloop._validate import (
    boolean,
    checked_arguments,
    did_you_mean,
    fail,
    member,
    optional_text,
)
from reactloop._validate import text as check_text


class MaxTokensField(enum.StrEnum):
    """The body field for the output limit: OpenAI's current one, or the older one servers know."""

    MAX_COMPLETION_TOKENS = "max_completion_tokens"
    MAX_TOKENS = "max_tokens"


class ReasoningDialect(enum.StrEnum):
    """How a host takes `ModelSettings.reasoning`.

    - `EFFORT`: OpenAI's `reasoning_effort` (the default; Ollama documents it too).
    - `OPENROUTER`: `reasoning: {effort}` or `reasoning: {max_tokens}` (a thinking budget).
    - `EFFORT_PARSED`: `reasoning_effort` with `reasoning_format: "parsed"`, so the reasoning
      comes back in its own `reasoning` field rather than inside the answer's text (Groq,
      Cerebras).
    - `DEEPSEEK`: `thinking: {type: enabled|disabled}`, with `reasoning_effort` beside it.
    - `NONE`: no documented request field; a reasoning setting is refused before sending.
    """

    EFFORT = "effort"
    OPENROUTER = "openrouter"
    EFFORT_PARSED = "effort_parsed"
    DEEPSEEK = "deepseek"
    NONE = "none"


_REASONING_BACK = (None, "reasoning_content", "reasoning")


@checked_arguments
@frozen
class OpenAICompatibleHost:
    """One OpenAI-compatible host: where it is, how it is authenticated, and how it differs.

    - `name`: the provider name errors and reasoning parts carry ("openrouter").
    - `base_url`: its API's base URL (None: the user gives one, as for vLLM); `url_env`: an
      environment variable that overrides it.
    - `key_env`: the one environment variable its key is read from (never `OPENAI_API_KEY`, so a
      key never goes to another host); `key_required`: refuse to build without a key.
    - `max_tokens_field`: the output limit's body field.
    - `stream_usage`: send `stream_options: {include_usage: true}` in a streamed request.
    - `reasoning`: how a reasoning setting is spelled (`ReasoningDialect`);
      `reasoning_efforts`: the effort levels that field takes (None: any, the model judges).
    - `reasoning_back`: the assistant-message field earlier reasoning goes back in, within a
      tool loop (None: the host documents none, and reasoning is not sent back).
    - `reasoning_details`: the host returns `reasoning_details` that must go back unchanged.
    - `usage_cost`: the host reports what a call cost in `usage.cost` (dollars).
    - `docs`: the pages these differences come from.
    """

    name: str
    base_url: str | None = None
    url_env: str | None = None
    key_env: str | None = None
    key_required: bool = False
    max_tokens_field: MaxTokensField = MaxTokensField.MAX_COMPLETION_TOKENS
    stream_usage: bool = True
    reasoning: ReasoningDialect = ReasoningDialect.EFFORT
    reasoning_efforts: frozenset[str] | None = field(default=None, converter=frozen_set)
    reasoning_back: str | None = "reasoning_content"
    reasoning_details: bool = False
    usage_cost: bool = False
    docs: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        check_text("OpenAICompatibleHost.name", self.name)
        if self.base_url is not None:
            check_base_url("OpenAICompatibleHost", self.base_url)
        optional_text("OpenAICompatibleHost.url_env", self.url_env)
        optional_text("OpenAICompatibleHost.key_env", self.key_env)
        for name in ("key_required", "stream_usage", "reasoning_details", "usage_cost"):
            boolean(f"OpenAICompatibleHost.{name}", getattr(self, name))
        member("OpenAICompatibleHost.max_tokens_field", self.max_tokens_field, MaxTokensField)
        member("OpenAICompatibleHost.reasoning", self.reasoning, ReasoningDialect)
        check_efforts("OpenAICompatibleHost.reasoning_efforts", self.reasoning_efforts)
        if self.reasoning_back not in _REASONING_BACK:
            fail("OpenAICompatibleHost.reasoning_back", self.reasoning_back, str(_REASONING_BACK))
        if not isinstance(self.docs, tuple) or not all(isinstance(d, str) for d in self.docs):
            fail("OpenAICompatibleHost.docs", self.docs, "a tuple of page addresses")
        if self.key_required and self.key_env is None:
            fail("OpenAICompatibleHost.key_env", None, "a variable name when key_required is set")


OPENROUTER = OpenAICompatibleHost(
    "openrouter",
    base_url="https://openrouter.ai/api/v1",
    key_env="OPENROUTER_API_KEY",
    key_required=True,
    max_tokens_field=MaxTokensField.MAX_TOKENS,
    stream_usage=False,  # usage-accounting: stream_options.include_usage "deprecated, no effect"
    reasoning=ReasoningDialect.OPENROUTER,
    reasoning_efforts=frozenset({"none", "minimal", "low", "medium", "high", "xhigh"}),
    reasoning_back="reasoning",
    reasoning_details=True,
    usage_cost=True,
    docs=(
        "https://openrouter.ai/docs/use-cases/reasoning-tokens",
        "https://openrouter.ai/docs/use-cases/usage-accounting",
        "https://openrouter.ai/docs/api/reference/errors-and-debugging",
    ),
)

GROQ = OpenAICompatibleHost(
    "groq",
    base_url="https://api.groq.com/openai/v1",
    key_env="GROQ_API_KEY",
    key_required=True,
    stream_usage=False,  # not a field of Groq's request; usage comes in x_groq.usage
    reasoning=ReasoningDialect.EFFORT_PARSED,
    reasoning_efforts=frozenset({"none", "low", "medium", "high"}),
    reasoning_back="reasoning",
    docs=(
        "https://console.groq.com/docs/reasoning",
        "https://console.groq.com/docs/api-reference#chat-create",
    ),
)

DEEPSEEK = OpenAICompatibleHost(
    "deepseek",
    base_url="https://api.deepseek.com",
    key_env="DEEPSEEK_API_KEY",
    key_required=True,
    max_tokens_field=MaxTokensField.MAX_TOKENS,
    reasoning=ReasoningDialect.DEEPSEEK,
    docs=(
        "https://api-docs.deepseek.com/guides/thinking_mode",
        "https://api-docs.deepseek.com/api/create-chat-completion",
        "https://api-docs.deepseek.com/quick_start/error_codes",
    ),
)

CEREBRAS = OpenAICompatibleHost(
    "cerebras",
    base_url="https://api.cerebras.ai/v1",
    key_env="CEREBRAS_API_KEY",
    key_required=True,
    reasoning=ReasoningDialect.EFFORT_PARSED,
    reasoning_back=None,  # no documented assistant field for earlier reasoning
    docs=(
        "https://inference-docs.cerebras.ai/capabilities/reasoning",
        "https://inference-docs.cerebras.ai/resources/openai",
    ),
)

OLLAMA = OpenAICompatibleHost(
    "ollama",
    base_url="http://127.0.0.1:11434/v1",
    url_env="OLLAMA_BASE_URL",
    key_env="OLLAMA_API_KEY",
    max_tokens_field=MaxTokensField.MAX_TOKENS,
    reasoning_back=None,
    docs=("https://docs.ollama.com/api/openai-compatibility",),
)

VLLM = OpenAICompatibleHost(
    "vllm",
    key_env="VLLM_API_KEY",
    max_tokens_field=MaxTokensField.MAX_TOKENS,
    reasoning=ReasoningDialect.NONE,
    reasoning_back=None,
    docs=(
        "https://docs.vllm.ai/en/stable/features/reasoning_outputs/",
        "https://docs.vllm.ai/en/stable/serving/openai_compatible_server/",
    ),
)

HOSTS: Mapping[str, OpenAICompatibleHost] = MappingProxyType(
    {host.name: host for host in (OPENROUTER, GROQ, DEEPSEEK, CEREBRAS, OLLAMA, VLLM)}
)
"""The presets by name: `OpenAIModel(MODEL, host="groq")` or the model string `groq:MODEL`."""


def host_named(owner: str, host: object) -> OpenAICompatibleHost | None:
    """`OpenAIModel(host=)`: None, an `OpenAICompatibleHost`, or the name of a preset."""
    if host is None or isinstance(host, OpenAICompatibleHost):
        return host
    if isinstance(host, str) and host in HOSTS:
        return HOSTS[host]
    hint = did_you_mean(host, HOSTS)
    fail(f"{owner}.host", host, f"None, an OpenAICompatibleHost or one of {sorted(HOSTS)}{hint}")
    return None  # not reached: fail raises


def host_back(host: OpenAICompatibleHost) -> tuple[str | None, bool]:
    """Where reasoning goes back to the host: its assistant field, and whether
    `reasoning_details` go back."""
    return host.reasoning_back, host.reasoning_details


def host_url(host: OpenAICompatibleHost, base_url: str | None, model: str) -> str:
    """The base URL: the one given, else the host's environment variable, else its own."""
    url = base_url or (os.environ.get(host.url_env) if host.url_env else None) or host.base_url
    if url is None:
        rule = "the URL of the server (this host has no default URL)"
        raise ConfigurationError(
            f"{host.name} model {model!r} needs base_url=: {rule}",
            option="OpenAIModel.base_url",
            value=None,
            rule=rule,
        )
    return url


def host_key(host: OpenAICompatibleHost, api_key: str | None, model: str) -> str | None:
    """The key: the one given, else the host's own environment variable (never OpenAI's)."""
    if api_key is not None:
        return api_key
    key = os.environ.get(host.key_env) if host.key_env else None
    if not key and host.key_required:
        raise ConfigurationError(
            f"{host.name} model {model!r} needs an API key: pass api_key= or set {host.key_env}",
            option="OpenAIModel.api_key",
            value=None,
            rule=f"a key, or {host.key_env} set",
        )
    return key or None


def host_reasoning(
    host: OpenAICompatibleHost,
    model: str,
    settings: ModelSettings,
    profile: ModelProfile,
) -> JsonObject:
    """The body fields of `settings.reasoning` as the host documents them (empty without one)."""
    reasoning = settings.reasoning
    if reasoning is None:
        return {}
    match host.reasoning:
        case ReasoningDialect.EFFORT:
            _check_host_effort(host, model, reasoning)
            return openai_reasoning(host.name, model, settings, profile)
        case ReasoningDialect.OPENROUTER:
            return _openrouter(host, model, reasoning, profile)
        case ReasoningDialect.EFFORT_PARSED:
            _check_host_effort(host, model, reasoning)
            body = openai_reasoning(host.name, model, settings, profile)
            if reasoning.effort is ReasoningEffort.NONE:
                return body  # reasoning off: no reasoning to format
            return {**body, "reasoning_format": "parsed"}
        case ReasoningDialect.DEEPSEEK:
            return _deepseek(host, model, settings, profile)
        case ReasoningDialect.NONE:
            rule = (
                f"None: {host.name} documents no reasoning request field (a server's own field,"
                " such as chat_template_kwargs, goes through extra_body=)"
            )
            raise refuse(host.name, model, "effort", reasoning.effort, rule)


def _check_host_effort(
    host: OpenAICompatibleHost, model: str, reasoning: ReasoningSettings
) -> None:
    levels = host.reasoning_efforts
    effort = reasoning.effort
    if effort is None or levels is None or effort.value in levels:
        return
    order = [level.value for level in ReasoningEffort]
    taken = ", ".join(repr(level) for level in sorted(levels, key=order.index))
    rule = f"one of the levels {host.name} takes ({taken})"
    raise refuse(host.name, model, "effort", effort.value, rule)


def _openrouter(
    host: OpenAICompatibleHost, model: str, reasoning: ReasoningSettings, profile: ModelProfile
) -> JsonObject:
    """`reasoning: {effort}` or `reasoning: {max_tokens}`: "one of the following (not both)"."""
    if reasoning.summary is not None:
        rule = "None (OpenRouter's reasoning field takes no summary setting)"
        raise refuse(host.name, model, "summary", reasoning.summary, rule)
    if reasoning.budget_tokens is not None and reasoning.effort is not None:
        rule = "None when an effort is set (OpenRouter takes one of effort and max_tokens)"
        raise refuse(host.name, model, "budget_tokens", reasoning.budget_tokens, rule)
    if reasoning.budget_tokens is not None:
        if not profile.thinking_budget:
            rule = "None (the model thinks by effort level: set ReasoningSettings.effort)"
            raise refuse(host.name, model, "budget_tokens", reasoning.budget_tokens, rule)
        return {"reasoning": {"max_tokens": reasoning.budget_tokens}}
    if reasoning.effort is None:
        return {}
    _check_host_effort(host, model, reasoning)
    check_effort(host.name, model, reasoning.effort, profile)
    return {"reasoning": {"effort": reasoning.effort.value}}


def _deepseek(
    host: OpenAICompatibleHost, model: str, settings: ModelSettings, profile: ModelProfile
) -> JsonObject:
    """`thinking: {type: disabled}` for the effort "none"; else `thinking: {type: enabled}` and
    the effort as `reasoning_effort` (DeepSeek maps every level to one of its own)."""
    reasoning = settings.reasoning
    if reasoning is not None and reasoning.effort is ReasoningEffort.NONE:
        for name in ("budget_tokens", "summary"):
            if getattr(reasoning, name) is not None:
                rule = 'None when the effort is "none"'
                raise refuse(host.name, model, name, getattr(reasoning, name), rule)
        return {"thinking": {"type": "disabled"}}
    body = openai_reasoning(host.name, model, settings, profile)
    return {"thinking": {"type": "enabled"}, **body} if body else body


def host_usage(host: OpenAICompatibleHost, usage: Usage, reported: object) -> Usage:
    """`usage` with what the host reports beyond OpenAI's fields: OpenRouter's `usage.cost`."""
    if not host.usage_cost or not isinstance(reported, dict):
        return usage
    cost = reported.get("cost")
    if isinstance(cost, bool) or not isinstance(cost, int | float | str):
        return usage
    try:
        return evolve(usage, cost=Decimal(str(cost)))
    except InvalidOperation:
        return usage


class HostReading:
    """What a host returns beyond Chat Completions, read from a body or gathered from a stream's
    chunks: Groq's `x_groq` (usage and an error that stopped the stream), OpenRouter's
    `reasoning_details` (given back unchanged) and `usage.cost`."""

    def __init__(self, host: OpenAICompatibleHost) -> None:
        self.host = host
        self.details: list[JsonObject] = []
        self.reported: object = None

    def chunk(self, chunk: JsonObject) -> object:
        """Take one chunk; the usage object `x_groq` carries (to decode), else None."""
        if isinstance(chunk.get("usage"), dict):
            self.reported = chunk["usage"]
        if self.host.reasoning_details:
            for choice in items(chunk, "choices"):
                if isinstance(choice, dict) and choice.get("index", 0) == 0:
                    _merge_details(self.details, items(obj(choice, "delta"), "reasoning_details"))
        extra = chunk.get("x_groq")
        if not isinstance(extra, dict):
            return None
        if isinstance(extra.get("error"), str):  # "why a stream was stopped early" (Groq SDK)
            raise stream_error(self.host.name, ErrorDetail(extra["error"]), None)
        return extra.get("usage") if isinstance(extra.get("usage"), dict) else None

    def body(self, body: JsonObject) -> None:
        """Take a whole `chat.completion`."""
        self.reported = body.get("usage")
        if self.host.reasoning_details:
            choices = [c for c in items(body, "choices") if isinstance(c, dict)]
            if choices:
                message = obj(choices[0], "message")
                _merge_details(self.details, items(message, "reasoning_details"))

    def finish(self, response: ModelResponse, model: str) -> ModelResponse:
        """The response with what was read: the cost, the reasoning details on its reasoning."""
        usage = host_usage(self.host, response.usage, self.reported)
        message = response.message
        if self.details:
            message = _with_details(message, self.details, self.host.name, model)
        if usage is response.usage and message is response.message:
            return response
        return evolve(response, message=message, usage=usage)


def _merge_details(into: list[JsonObject], new: list[object]) -> None:
    """Add streamed `reasoning_details` items: one with the `index` of an earlier item extends
    its text fields; any other is appended."""
    for item in new:
        if not isinstance(item, dict):
            continue
        index = item.get("index")
        known = next((d for d in into if index is not None and d.get("index") == index), None)
        if known is None:
            into.append(dict(item))
            continue
        for key, value in item.items():
            if key in ("text", "summary", "data") and isinstance(value, str):
                known[key] = (text(known, key) or "") + value
            elif value is not None:
                known[key] = value


def _with_details(
    message: AssistantMessage, details: list[JsonObject], provider: str, model: str
) -> AssistantMessage:
    """The message with `reasoning_details` kept on its first reasoning part (as JSON text, an
    opaque value that goes back unchanged), or on a new one before its other parts."""
    blob = orjson.dumps(details).decode()
    parts = list(message.parts)
    first = parts[0] if parts else None
    if isinstance(first, ReasoningPart) and not first.is_opaque:
        parts[0] = evolve(first, encrypted=blob)
    else:
        parts.insert(0, ReasoningPart(encrypted=blob, provider=provider, model=model or None))
    return AssistantMessage(parts=parts, refusal=message.refusal)

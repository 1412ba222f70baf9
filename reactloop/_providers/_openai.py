"""`OpenAIModel`: the OpenAI Chat Completions protocol, for OpenAI and any compatible server
(an OpenAI-compatible host's differences: `_hosts`; reading answers: `_chat_decode`)."""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from typing import Any, assert_never

import httpx
from attrs import frozen

from reactloop._core import (
    AssistantMessage,
    DeltaSink,
    ForcedTool,
    JsonObject,
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ResponseFormat,
    ResponseFormatKind,
    SystemMessage,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    UserMessage,
    is_blank,
    only_reasoning,
)
from reactloop._errors import (
    ConfigurationError,
)
from reactloop._providers._auth import AuthScheme, Secret, resolve_key
from reactloop._providers._base import HttpModel
from reactloop._providers._chat_content import (
    check_files,
    tool_attachments,
    tool_content,
    user_content,
)
from reactloop._providers._chat_decode import (
    ChatStream,
    decode_completion,
    decode_finish,
    decode_usage,
    reasoning_of,
)
from reactloop._providers._chat_reasoning import (
    OUTSIDE_LOOP,
    Recipient,
    reasoning_fields,
    tool_calls_of,
)
from reactloop._providers._hosts import (
    HostReading,
    MaxTokensField,
    OpenAICompatibleHost,
    host_back,
    host_key,
    host_named,
    host_reasoning,
    host_url,
)
from reactloop._providers._http import (
    DEFAULT_IDLE_TIMEOUT,
    HttpChannel,
)
from reactloop._providers._openai_cache import openai_cache, takes_breakpoints
from reactloop._providers._options import (
    check_base_url,
    check_extra_body,
    check_http_options,
)
from reactloop._providers._profiles import (
    OPENAI_DEFAULTS,
    ModelProfile,
    check_sampling,
    model_profile,
)
from reactloop._providers._reasoning import openai_reasoning
from reactloop._providers._wire import (
    check_history,
    wire_ids,
)
from reactloop._redact import redacted
from reactloop._schema import strict_schema_openai
from reactloop._validate import boolean, checked_arguments, member

__all__ = [  # what other modules import from here, those read from _chat_decode and _hosts too
    "OPENAI_BASE_URL",
    "OWNED",
    "PATH",
    "ChatStream",
    "InstructionsRole",
    "MaxTokensField",
    "OpenAIModel",
    "OpenAIOptions",
    "decode_completion",
    "decode_finish",
    "decode_usage",
    "encode_message",
    "encode_messages",
    "encode_request",
    "encode_response_format",
    "openai_channel",
    "reasoning_of",
]

OPENAI_BASE_URL = "https://api.openai.com/v1"
PATH = "/chat/completions"


class InstructionsRole(enum.StrEnum):
    """The role that carries `ModelRequest.instructions`: `system`, or `developer` (o-series)."""

    SYSTEM = "system"
    DEVELOPER = "developer"


@frozen
class OpenAIOptions:
    """How a request is spelled for one server: instructions role, limit field, usage in streams,
    and the compatible host whose differences apply (None: OpenAI's own spelling)."""

    instructions_role: InstructionsRole = InstructionsRole.SYSTEM
    max_tokens_field: MaxTokensField = MaxTokensField.MAX_COMPLETION_TOKENS
    include_usage: bool = True
    host: OpenAICompatibleHost | None = None


def _assistant(message: AssistantMessage, to: Recipient) -> JsonObject:
    """Text as `content`; a refusal alone as a `refusal` content part, the one form the API takes
    for it (`content: null` is accepted only beside tool calls). Reasoning goes back only where
    `to` takes it: `reasoning_content` of an answer that made tool calls (DeepSeek wants it in
    every later request) or of the current tool loop, thought signatures on their calls; any
    other reasoning is dropped (the API has no place for it; DeepSeek ignores earlier turns')."""
    encoded: JsonObject = {"role": "assistant", "content": None}
    if not is_blank(message.text):
        encoded["content"] = message.text
        if not is_blank(message.refusal):
            encoded["refusal"] = message.refusal
    elif message.refusal is not None and not is_blank(message.refusal):
        encoded["content"] = [{"type": "refusal", "refusal": message.refusal}]
    if (to.current_loop or message.tool_calls) and (fields := reasoning_fields(message, to)):
        encoded.update(fields)
    if message.tool_calls:
        encoded["tool_calls"] = tool_calls_of(message, to.provider, to.model)
    return encoded


def encode_message(message: Message, to: Recipient = OUTSIDE_LOOP) -> JsonObject:
    """One neutral message as a Chat Completions message."""
    match message:
        case SystemMessage():
            return {"role": "system", "content": message.text}
        case UserMessage():
            return {"role": "user", "content": user_content(to.provider, message, to.breakpoints)}
        case AssistantMessage():
            return _assistant(message, to)
        case ToolMessage():
            content = tool_content(message)
            return {"role": "tool", "tool_call_id": message.call_id, "content": content}
        case _:
            assert_never(message)


def encode_messages(
    messages: tuple[Message, ...],
    provider: str,
    model: str,
    breakpoints: bool = False,
    host: OpenAICompatibleHost | None = None,
) -> list[JsonObject]:
    """The messages in order; those after the last user message form the current tool loop.
    After a run of tool results, a user message carries what they could not (`_chat_content`);
    with `breakpoints`, a user message's cache points go as explicit cache breakpoints; a `host`
    says where reasoning goes back."""
    field, details = ("reasoning_content", False) if host is None else host_back(host)
    last_user = max(
        (index for index, message in enumerate(messages) if isinstance(message, UserMessage)),
        default=-1,
    )
    check_files(provider, messages)
    attachments = tool_attachments(provider, messages)
    earlier = Recipient(provider, model, False, breakpoints, field, details)
    current = Recipient(provider, model, True, breakpoints, field, details)
    encoded: list[JsonObject] = []
    for index, message in enumerate(messages):
        if not only_reasoning(message):  # nothing the API takes without what followed it
            encoded.append(encode_message(message, current if index > last_user else earlier))
        if index in attachments:
            encoded.append(attachments[index])
    return encoded


def _tool(spec: ToolSpec) -> JsonObject:
    function = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
    return {"type": "function", "function": function}


def _tool_choice(choice: ToolChoice | ForcedTool) -> str | JsonObject:
    match choice:
        case ForcedTool():
            return {"type": "function", "function": {"name": choice.name}}
        case ToolChoice.AUTO | ToolChoice.NONE | ToolChoice.REQUIRED:
            return choice.value
        case _:
            assert_never(choice)


def encode_response_format(response_format: ResponseFormat) -> JsonObject:
    """The `response_format` body field."""
    match response_format.kind:
        case ResponseFormatKind.TEXT:
            return {"type": "text"}
        case ResponseFormatKind.JSON_OBJECT:
            return {"type": "json_object"}
        case ResponseFormatKind.JSON_SCHEMA:
            if response_format.schema is None:
                raise ConfigurationError("ResponseFormat JSON_SCHEMA needs a schema, got None")
            schema = {
                "name": response_format.name,
                "schema": response_format.schema,
                "strict": response_format.strict,
            }
            return {"type": "json_schema", "json_schema": schema}
        case _:
            assert_never(response_format.kind)


def _settings(settings: ModelSettings, max_field: MaxTokensField, has_tools: bool) -> JsonObject:
    body: JsonObject = {}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_output_tokens is not None:
        body[max_field.value] = settings.max_output_tokens
    if settings.response_format is not None:
        body["response_format"] = encode_response_format(settings.response_format)
    if has_tools and settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.stop_sequences:
        body["stop"] = list(settings.stop_sequences)
    if settings.seed is not None:
        body["seed"] = settings.seed
    if settings.service_tier is not None:
        body["service_tier"] = settings.service_tier
    return body


OWNED = frozenset(
    {"model", "messages", "tools", "tool_choice", "stream", "stream_options", "temperature",
     "max_tokens", "max_completion_tokens", "response_format", "parallel_tool_calls", "top_p",
     "stop", "seed", "service_tier"}
)  # fmt: skip
"""The body fields reactloop always sets: an `extra_body` may not name them. The fields it sets
for some requests only (the reasoning settings' fields, a structured output's) are refused by
`ExtraBody.apply` in a request that sets them, and stay an escape hatch for the others."""


def encode_request(
    request: ModelRequest,
    model: str,
    *,
    stream: bool,
    options: OpenAIOptions = OpenAIOptions(),
    provider: str = "openai",
    profile: ModelProfile | None = None,
) -> JsonObject:
    """The Chat Completions body for a neutral request; a history no API accepts is refused, and
    a temperature the model's profile says it rejects."""
    check_history(provider, request.messages)
    profile = model_profile(model) if profile is None else profile
    check_sampling(provider, model, request.settings, profile, OPENAI_DEFAULTS)
    breakpoints = takes_breakpoints(profile, request.settings.cache)
    host = options.host
    messages = encode_messages(wire_ids(request.messages), provider, model, breakpoints, host)
    if request.instructions:
        instructions = {"role": options.instructions_role.value, "content": request.instructions}
        messages.insert(0, instructions)
    body: JsonObject = {"model": model, "messages": messages}
    if request.tools:
        body["tools"] = [_tool(spec) for spec in request.tools]
        body["tool_choice"] = _tool_choice(request.tool_choice)
    body.update(_settings(request.settings, options.max_tokens_field, bool(request.tools)))
    if host is None:
        body.update(openai_reasoning(provider, model, request.settings, profile))
    else:
        body.update(host_reasoning(host, model, request.settings, profile))
    if request.settings.cache is not None:
        body.update(openai_cache(request, profile))
    if stream:
        body["stream"] = True
        if options.include_usage:
            body["stream_options"] = {"include_usage": True}
    return body


def openai_channel(
    owner: str,
    provider: str,
    model: str,
    *,
    api_key: str | None,
    base_url: str | None,
    http_client: httpx.AsyncClient | None,
    idle_timeout: float | None,
    extra_headers: dict[str, str] | None,
    host: OpenAICompatibleHost | None = None,
) -> HttpChannel:
    """The channel of an OpenAI API: the base URL from `base_url`, `OPENAI_BASE_URL` or
    OpenAI's; the key from `api_key` or `OPENAI_API_KEY` (needed only on OpenAI's own URL). A
    host's URL and key come from its own variables (`_hosts`), never OpenAI's."""
    if host is not None:
        url, key = host_url(host, base_url, model), host_key(host, api_key, model)
        secret = Secret(key) if key else None
    else:
        url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
        secret = resolve_key(api_key, "OPENAI_API_KEY")
    check_base_url(owner, url)
    if secret is None and url.rstrip("/") == OPENAI_BASE_URL:
        raise ConfigurationError(
            f"{provider} model {model!r} needs an API key: pass api_key= or set OPENAI_API_KEY"
        )
    headers = {"content-type": "application/json", **(extra_headers or {})}
    return HttpChannel(
        provider, url, headers, secret=secret, auth=AuthScheme.BEARER,
        client=http_client, idle_timeout=idle_timeout,
    )  # fmt: skip


def _options(
    role: object, field: object, usage: object, host: OpenAICompatibleHost | None
) -> OpenAIOptions:
    """The spelling options: each one given, else the host's, else OpenAI's."""
    if field is None:
        field = MaxTokensField.MAX_COMPLETION_TOKENS if host is None else host.max_tokens_field
    if usage is None:
        usage = True if host is None else host.stream_usage
    return OpenAIOptions(
        member("OpenAIModel.instructions_role", role, InstructionsRole),
        member("OpenAIModel.max_tokens_field", field, MaxTokensField),
        boolean("OpenAIModel.include_usage", usage),
        host,
    )


@checked_arguments
class OpenAIModel(HttpModel):
    """A model served over OpenAI Chat Completions: OpenAI itself or a compatible server.

    The key comes from `api_key` or `OPENAI_API_KEY`, the base URL from `base_url`,
    `OPENAI_BASE_URL`, or OpenAI's. A key is required only for OpenAI's own URL. Use it as an
    async context manager, or call `aclose()`, to close its connection pool. `profile` overrides
    what the model is taken to accept (default: its family's, see `model_profile`; native
    structured outputs only on OpenAI's own API unless a profile is given).

    `host` (an `OpenAICompatibleHost`, or a preset's name: "openrouter", "groq", "deepseek",
    "cerebras", "ollama", "vllm") spells requests and reads answers as that host documents, with
    its URL and its own key variable; `provider`, `max_tokens_field` and `include_usage`, when
    given, beat the preset's.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str | None = None,
        instructions_role: InstructionsRole = InstructionsRole.SYSTEM,
        max_tokens_field: MaxTokensField | None = None,
        include_usage: bool | None = None,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
        extra_headers: dict[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        profile: ModelProfile | None = None,
        host: OpenAICompatibleHost | str | None = None,
    ) -> None:
        preset = host_named("OpenAIModel", host)
        if provider is None:
            provider = "openai" if preset is None else preset.name
        check_http_options(
            "OpenAIModel", model=model, api_key=api_key, base_url=base_url, provider=provider,
            idle_timeout=idle_timeout, http_client=http_client, extra_headers=extra_headers,
        )  # fmt: skip
        self.model = model
        self._use_profile("OpenAIModel", profile, model)
        # OpenAI's own API has strict structured outputs; a compatible server may not.
        self.supports_native_output &= provider == "openai" or profile is not None
        self.options = _options(instructions_role, max_tokens_field, include_usage, preset)
        self.extra_body = check_extra_body("OpenAIModel", extra_body, OWNED)
        self._channel = openai_channel(
            "OpenAIModel", provider, model, api_key=api_key, base_url=base_url,
            http_client=http_client, idle_timeout=idle_timeout, extra_headers=extra_headers,
            host=preset,
        )  # fmt: skip

    def strict_output_schema(self, schema: JsonObject) -> JsonObject:
        """A structured output's schema as this provider's strict mode takes it."""
        return strict_schema_openai(schema)

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.model!r}, base_url={redacted(self.base_url)!r})"

    def _body(self, request: ModelRequest, *, stream: bool) -> JsonObject:
        return encode_request(
            request, self.model, stream=stream, options=self.options, provider=self.provider,
            profile=self.profile,
        )  # fmt: skip

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One plain call: the whole response at once."""
        body = self._body(request, stream=False)
        answer = await self._channel.post_json(PATH, self.extra_body.apply(body))
        response = decode_completion(self.provider, answer, self.model)
        if self.options.host is None:
            return response
        reading = HostReading(self.options.host)
        reading.body(answer)
        return reading.finish(response, self.model)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """One streamed call: deltas go to `on_delta`, the assembled response is returned."""
        body = self._body(request, stream=True)
        accumulator = ChatStream(self.provider, on_delta, self.model, self.options.host)
        await self._channel.post_stream(PATH, self.extra_body.apply(body), accumulator.handle)
        return accumulator.response()

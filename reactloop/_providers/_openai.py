"""`OpenAIModel`: the OpenAI Chat Completions protocol, for OpenAI and any compatible server.

Only choice 0 is read (reactloop never asks for `n > 1`; extra choices a server sends are
ignored). A stream is complete at `data: [DONE]` or once choice 0 reported its finish reason; a
stream that ends before either was cut and raises `ProviderUnavailableError`.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from typing import Any, assert_never

import httpx
import orjson
from attrs import frozen

from reactloop._core import (
    AssistantMessage,
    DeltaSink,
    FinishReason,
    ForcedTool,
    JsonObject,
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ReasoningDelta,
    ResponseFormat,
    ResponseFormatKind,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
    is_blank,
    new_call_id,
    only_reasoning,
)
from reactloop._errors import (
    ConfigurationError,
    InvalidResponseError,
    ProviderUnavailableError,
)
from reactloop._providers._auth import AuthScheme, resolve_key
from reactloop._providers._base import HttpModel
from reactloop._providers._chat_content import (
    check_files,
    tool_attachments,
    tool_content,
    user_content,
)
from reactloop._providers._chat_reasoning import (
    OUTSIDE_LOOP,
    Recipient,
    message_parts,
    reasoning_content,
    thought_signature,
    tool_calls_of,
)
from reactloop._providers._http import (
    DEFAULT_IDLE_TIMEOUT,
    HttpChannel,
    error_detail,
    parse_json,
    stream_error,
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
    check_profile,
    check_sampling,
    model_profile,
)
from reactloop._providers._reasoning import openai_reasoning
from reactloop._providers._sse import SseEvent
from reactloop._providers._wire import (
    CallParts,
    assemble_calls,
    check_history,
    count,
    items,
    obj,
    text,
    wire_ids,
)
from reactloop._redact import redacted
from reactloop._schema import strict_schema_openai
from reactloop._validate import boolean, checked_arguments, member

OPENAI_BASE_URL = "https://api.openai.com/v1"
PATH = "/chat/completions"

_FINISH = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "content_filter": FinishReason.CONTENT_FILTER,
}


class InstructionsRole(enum.StrEnum):
    """The role that carries `ModelRequest.instructions`: `system`, or `developer` (o-series)."""

    SYSTEM = "system"
    DEVELOPER = "developer"


class MaxTokensField(enum.StrEnum):
    """The body field for the output limit: OpenAI's current one, or the older one servers know."""

    MAX_COMPLETION_TOKENS = "max_completion_tokens"
    MAX_TOKENS = "max_tokens"


@frozen
class OpenAIOptions:
    """How a request is spelled for one server: instructions role, limit field, usage in streams."""

    instructions_role: InstructionsRole = InstructionsRole.SYSTEM
    max_tokens_field: MaxTokensField = MaxTokensField.MAX_COMPLETION_TOKENS
    include_usage: bool = True


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
    if to.current_loop or message.tool_calls:
        thought = reasoning_content(message, to.provider, to.model)
        if thought is not None:
            encoded["reasoning_content"] = thought
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
    messages: tuple[Message, ...], provider: str, model: str, breakpoints: bool = False
) -> list[JsonObject]:
    """The messages in order; those after the last user message form the current tool loop.
    After a run of tool results, a user message carries what they could not (`_chat_content`);
    with `breakpoints`, a user message's cache points go as explicit cache breakpoints."""
    last_user = max(
        (index for index, message in enumerate(messages) if isinstance(message, UserMessage)),
        default=-1,
    )
    check_files(provider, messages)
    attachments = tool_attachments(provider, messages)
    encoded: list[JsonObject] = []
    for index, message in enumerate(messages):
        if not only_reasoning(message):  # nothing the API takes without what followed it
            to = Recipient(provider, model, index > last_user, breakpoints)
            encoded.append(encode_message(message, to))
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
    messages = encode_messages(wire_ids(request.messages), provider, model, breakpoints)
    if request.instructions:
        instructions = {"role": options.instructions_role.value, "content": request.instructions}
        messages.insert(0, instructions)
    body: JsonObject = {"model": model, "messages": messages}
    if request.tools:
        body["tools"] = [_tool(spec) for spec in request.tools]
        body["tool_choice"] = _tool_choice(request.tool_choice)
    body.update(_settings(request.settings, options.max_tokens_field, bool(request.tools)))
    body.update(openai_reasoning(provider, model, request.settings, profile))
    if request.settings.cache is not None:
        body.update(openai_cache(request, profile))
    if stream:
        body["stream"] = True
        if options.include_usage:
            body["stream_options"] = {"include_usage": True}
    return body


def decode_usage(usage: object) -> Usage:
    """Usage as reported: `prompt_tokens` is the whole input (cache reads and writes included),
    `completion_tokens` the whole output (reasoning included); the details say how much of each."""
    prompt = obj(usage, "prompt_tokens_details")
    completion = obj(usage, "completion_tokens_details")
    written = count(prompt, "cache_write_tokens")
    if written is None:
        written = count(usage, "cache_write_tokens")
    return Usage(
        input_tokens=count(usage, "prompt_tokens") or 0,
        output_tokens=count(usage, "completion_tokens") or 0,
        cache_read_tokens=count(prompt, "cached_tokens") or 0,
        cache_write_tokens=written or 0,
        reasoning_tokens=count(completion, "reasoning_tokens") or 0,
    )


def decode_finish(reason: object, refusal: str | None, has_calls: bool) -> FinishReason:
    """The neutral finish reason; a refusal that merely `stop`ped is reported as REFUSAL."""
    if not isinstance(reason, str):
        finish = FinishReason.TOOL_CALLS if has_calls else FinishReason.STOP
    else:
        finish = _FINISH.get(reason, FinishReason.OTHER)
    if refusal is not None and finish is FinishReason.STOP:
        return FinishReason.REFUSAL
    return finish


def _decode_call(provider: str, call: object) -> ToolCall:
    function = obj(call, "function")
    name = text(function, "name")
    if not name:
        raise InvalidResponseError(f"{provider} sent a tool call without a name", provider=provider)
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = orjson.dumps(arguments or {}).decode()
    return ToolCall(name, arguments or "{}", text(call, "id") or new_call_id())


def _first_choice(provider: str, body: JsonObject) -> JsonObject:
    choices = [choice for choice in items(body, "choices") if isinstance(choice, dict)]
    if not choices:
        raise InvalidResponseError(f"{provider} response has no choices", provider=provider)
    return next((choice for choice in choices if choice.get("index") == 0), choices[0])


def decode_completion(provider: str, body: JsonObject, model: str | None = None) -> ModelResponse:
    """A whole `chat.completion` as a neutral response (`model`: the configured model, which
    its reasoning parts name)."""
    if "error" in body and "choices" not in body:
        raise stream_error(provider, error_detail(body), None)
    choice = _first_choice(provider, body)
    message = obj(choice, "message")
    calls = [
        (_decode_call(provider, call), thought_signature(call))
        for call in items(message, "tool_calls")
    ]
    refusal = text(message, "refusal")
    finish = decode_finish(choice.get("finish_reason"), refusal, bool(calls))
    by = Recipient(provider, model or "")
    reasoning, content = reasoning_of(message) or "", text(message, "content") or ""
    parts = message_parts(reasoning, content, calls, by)
    assistant = AssistantMessage(parts=parts, refusal=refusal)
    usage = decode_usage(body.get("usage"))
    return ModelResponse(assistant, usage, finish, text(body, "model"), text(body, "id"))


def reasoning_of(value: JsonObject) -> str | None:
    """The reasoning text of a message or delta: DeepSeek's `reasoning_content`, else the
    `reasoning` that OpenRouter, vLLM, Ollama and Groq send."""
    return text(value, "reasoning_content") or text(value, "reasoning")


class ChatStream:
    """Accumulates `chat.completion.chunk` events into one response, forwarding deltas."""

    def __init__(self, provider: str, on_delta: DeltaSink, model: str | None = None) -> None:
        self.provider = provider
        self.on_delta = on_delta
        self.configured = model  # the model the reasoning parts name
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.signatures: dict[int, str] = {}
        self.refusal: list[str] = []
        self.calls: dict[int, CallParts] = {}
        self.finish: str | None = None
        self.usage = Usage()
        self.model: str | None = None
        self.id: str | None = None
        self.done = False

    async def handle(self, event: SseEvent) -> bool:
        """Take one event; True at `[DONE]`."""
        if event.data.strip() == "[DONE]":
            self.done = True
            return True
        chunk = parse_json(self.provider, event.data.encode())
        if "error" in chunk and not chunk.get("choices"):
            raise stream_error(self.provider, error_detail(chunk), None)
        self.model = text(chunk, "model") or self.model
        self.id = text(chunk, "id") or self.id
        if isinstance(chunk.get("usage"), dict):
            self.usage = decode_usage(chunk["usage"])
        for choice in items(chunk, "choices"):
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                await self._choice(choice)
        return False

    async def _choice(self, choice: JsonObject) -> None:
        delta = obj(choice, "delta")
        thought = reasoning_of(delta)
        if thought:
            self.reasoning.append(thought)
            await self.on_delta(ReasoningDelta(thought))
        content = text(delta, "content")
        if content:
            self.text.append(content)
            await self.on_delta(TextDelta(content))
        refusal = text(delta, "refusal")
        if refusal:
            self.refusal.append(refusal)
        for item in items(delta, "tool_calls"):
            if isinstance(item, dict):
                await self._call_delta(item)
        if isinstance(choice.get("finish_reason"), str):
            self.finish = choice["finish_reason"]

    def _index(self, item: JsonObject) -> int:
        index = count(item, "index")
        if index is not None:
            return index
        known = next((i for i, c in self.calls.items() if c.id and c.id == item.get("id")), None)
        if known is not None:
            return known
        fresh = "id" in item or not self.calls
        return len(self.calls) if fresh else max(self.calls)

    async def _call_delta(self, item: JsonObject) -> None:
        index = self._index(item)
        parts = self.calls.setdefault(index, CallParts())
        function = obj(item, "function")
        call_id, name = text(item, "id"), text(function, "name")
        parts.id = parts.id or call_id
        parts.name = parts.name or name
        signature = thought_signature(item)
        if signature is not None:
            self.signatures[index] = signature
        fragment = text(function, "arguments") or ""
        if fragment:
            parts.parts.append(fragment)
        if fragment or call_id or name:
            await self.on_delta(ToolCallDelta(index, fragment, call_id, name))

    def response(self) -> ModelResponse:
        """The assembled response; raises if the stream was cut before it was complete."""
        if not (self.done or self.finish is not None):
            raise ProviderUnavailableError(
                f"{self.provider} stream ended before the response was complete"
                " (no finish_reason and no [DONE]): the connection was cut",
                provider=self.provider,
            )
        refusal = "".join(self.refusal) or None
        finish = decode_finish(self.finish, refusal, bool(self.calls))
        calls = []
        for index in sorted(self.calls):
            assembled = assemble_calls(self.provider, [self.calls[index]], finish)
            calls += [(call, self.signatures.get(index)) for call in assembled]
        by = Recipient(self.provider, self.configured or "")
        parts = message_parts("".join(self.reasoning), "".join(self.text), calls, by)
        message = AssistantMessage(parts=parts, refusal=refusal)
        return ModelResponse(message, self.usage, finish, self.model, self.id)


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
) -> HttpChannel:
    """The channel of an OpenAI API: the base URL from `base_url`, `OPENAI_BASE_URL` or
    OpenAI's; the key from `api_key` or `OPENAI_API_KEY` (needed only on OpenAI's own URL)."""
    url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
    check_base_url(owner, url)
    secret = resolve_key(api_key, "OPENAI_API_KEY")
    if secret is None and url.rstrip("/") == OPENAI_BASE_URL:
        raise ConfigurationError(
            f"{provider} model {model!r} needs an API key: pass api_key= or set OPENAI_API_KEY"
        )
    headers = {"content-type": "application/json", **(extra_headers or {})}
    return HttpChannel(
        provider, url, headers, secret=secret, auth=AuthScheme.BEARER,
        client=http_client, idle_timeout=idle_timeout,
    )  # fmt: skip


@checked_arguments
class OpenAIModel(HttpModel):
    """A model served over OpenAI Chat Completions: OpenAI itself or a compatible server.

    The key comes from `api_key` or `OPENAI_API_KEY`, the base URL from `base_url`,
    `OPENAI_BASE_URL`, or OpenAI's. A key is required only for OpenAI's own URL. Use it as an
    async context manager, or call `aclose()`, to close its connection pool. `profile` overrides
    what the model is taken to accept (default: its family's, see `model_profile`; native
    structured outputs only on OpenAI's own API unless a profile is given).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "openai",
        instructions_role: InstructionsRole = InstructionsRole.SYSTEM,
        max_tokens_field: MaxTokensField = MaxTokensField.MAX_COMPLETION_TOKENS,
        include_usage: bool = True,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
        extra_headers: dict[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        check_http_options(
            "OpenAIModel", model=model, api_key=api_key, base_url=base_url, provider=provider,
            idle_timeout=idle_timeout, http_client=http_client, extra_headers=extra_headers,
        )  # fmt: skip
        self.model = model
        self.profile = check_profile("OpenAIModel", profile, model)
        # OpenAI's own API has strict structured outputs; a compatible server may not.
        self.supports_native_output = self.profile.native_output and (
            provider == "openai" or profile is not None
        )
        self.supports_forced_tool_choice = self.profile.forced_tool_choice
        self.options = OpenAIOptions(
            member("OpenAIModel.instructions_role", instructions_role, InstructionsRole),
            member("OpenAIModel.max_tokens_field", max_tokens_field, MaxTokensField),
            boolean("OpenAIModel.include_usage", include_usage),
        )
        self.extra_body = check_extra_body("OpenAIModel", extra_body, OWNED)
        self._channel = openai_channel(
            "OpenAIModel", provider, model, api_key=api_key, base_url=base_url,
            http_client=http_client, idle_timeout=idle_timeout, extra_headers=extra_headers,
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
        return decode_completion(self.provider, answer, self.model)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """One streamed call: deltas go to `on_delta`, the assembled response is returned."""
        body = self._body(request, stream=True)
        accumulator = ChatStream(self.provider, on_delta, self.model)
        await self._channel.post_stream(PATH, self.extra_body.apply(body), accumulator.handle)
        return accumulator.response()

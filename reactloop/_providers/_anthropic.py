"""`AnthropicModel`: the Anthropic Messages protocol (`anthropic-version: 2023-06-01`, still the
current version of the Messages API).

The system prompt travels apart (`instructions`, then any `SystemMessage`, joined), except that a
model that accepts mid-conversation system messages gets a later `SystemMessage` in place, where
Anthropic's placement rules allow it. Tool results are `tool_result` blocks of a user turn;
consecutive turns of one role are merged, so parallel results share one turn. Sampling settings
are sent only when set, and refused before sending for a model that rejects them. A stream is
complete once `message_delta` brought the stop reason: `message_stop` is not waited for (the last
event of a cut stream is lost by SSE rules).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, assert_never

import httpx
import orjson

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
    ResponseFormat,
    ResponseFormatKind,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolMessage,
    Usage,
    UserMessage,
    is_blank,
    new_call_id,
)
from reactloop._errors import (
    ConfigurationError,
    InvalidResponseError,
    ProviderUnavailableError,
)
from reactloop._providers._http import (
    DEFAULT_IDLE_TIMEOUT,
    AuthScheme,
    HttpChannel,
    HttpModel,
    error_detail,
    parse_json,
    resolve_key,
    stream_error,
)
from reactloop._providers._options import (
    check_base_url,
    check_extra_body,
    check_http_options,
)
from reactloop._providers._profiles import (
    ANTHROPIC_DEFAULTS,
    ModelProfile,
    check_profile,
    check_sampling,
    model_profile,
)
from reactloop._providers._sse import SseEvent
from reactloop._providers._wire import (
    CallParts,
    arguments_object,
    assemble_calls,
    check_history,
    count,
    items,
    obj,
    text,
    tool_result_text,
    wire_ids,
)
from reactloop._redact import redacted
from reactloop._schema import strict_schema_anthropic
from reactloop._validate import checked_arguments, integer

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
PATH = "/v1/messages"
DEFAULT_MAX_TOKENS = 4096
JSON_OBJECT_PROMPT = "Answer with a single JSON object and nothing else."
HISTORY_TOOL_DESCRIPTION = "A tool used earlier in this conversation; not available now."

MAX_CONTINUATIONS = 5
"""How many times a `pause_turn` is continued within one call before the paused response is
returned as it is (finish reason OTHER)."""

_STOP = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "refusal": FinishReason.REFUSAL,
}
PAUSE_TURN = "pause_turn"


class Role(enum.StrEnum):
    """The roles of a Messages turn (`system`: mid-conversation, on models that take it)."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


def _tool_use(call: ToolCall) -> JsonObject:
    input_ = arguments_object(call.arguments)
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": input_}


def _tool_result(message: ToolMessage) -> JsonObject:
    block: JsonObject = {
        "type": "tool_result",
        "tool_use_id": message.call_id,
        "content": tool_result_text(message),
    }
    if message.is_error:
        block["is_error"] = True
    return block


def _text_blocks(content: str) -> list[JsonObject]:
    return [{"type": "text", "text": content}] if content.strip() else []


def _turn(message: UserMessage | AssistantMessage | ToolMessage) -> tuple[Role, list[JsonObject]]:
    match message:
        case UserMessage():
            return Role.USER, _text_blocks(message.text)
        case AssistantMessage():
            calls = [_tool_use(call) for call in message.tool_calls]
            said = message.refusal if is_blank(message.text) else message.text
            return Role.ASSISTANT, _text_blocks(said or "") + calls
        case ToolMessage():
            return Role.USER, [_tool_result(message)]
        case _:
            assert_never(message)


def takes_system_turns(model: str) -> bool:
    """True for a model that accepts `{"role": "system"}` turns inside `messages` (its profile's
    `system_turns`: Anthropic documents Claude Opus 4.8 only; other models answer 400)."""
    return model_profile(model).system_turns


def _fits_in_place(turns: list[JsonObject], following: Message | None) -> bool:
    """Anthropic's placement rules for a system turn: never first, right after a user turn, and
    last or followed by an assistant turn (two system messages in a row are merged into one)."""
    after_user = bool(turns) and turns[-1]["role"] in (Role.USER, Role.SYSTEM)
    return after_user and (following is None or isinstance(following, AssistantMessage))


def _append(turns: list[JsonObject], role: Role, blocks: list[JsonObject]) -> None:
    if turns and turns[-1]["role"] == role.value:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role.value, "content": blocks})


def encode_messages(
    messages: tuple[Message, ...], *, system_turns: bool = False
) -> tuple[list[str], list[JsonObject]]:
    """System texts apart, and the turns with consecutive same-role turns merged.

    With `system_turns`, a `SystemMessage` that Anthropic's placement rules allow where it stands
    stays there as a `system` turn; any other goes to the system texts. No message is dropped.
    """
    system: list[str] = []
    turns: list[JsonObject] = []
    for index, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            following = next((m for m in messages[index + 1 :] if not _is_system(m)), None)
            if system_turns and _fits_in_place(turns, following):
                _append(turns, Role.SYSTEM, _text_blocks(message.text))
            else:
                system.append(message.text)
            continue
        _append(turns, *_turn(message))
    return system, turns


def _is_system(message: Message) -> bool:
    return isinstance(message, SystemMessage)


def _history_tools(messages: tuple[Message, ...]) -> list[JsonObject]:
    names: dict[str, None] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            names.update(dict.fromkeys(call.name for call in message.tool_calls))
        elif isinstance(message, ToolMessage):
            names[message.name] = None
    schema = {"type": "object"}
    return [
        {"name": name, "description": HISTORY_TOOL_DESCRIPTION, "input_schema": schema}
        for name in names
    ]


def _tool_choice(choice: ToolChoice | ForcedTool) -> JsonObject:
    match choice:
        case ForcedTool():
            return {"type": "tool", "name": choice.name}
        case ToolChoice.AUTO:
            return {"type": "auto"}
        case ToolChoice.REQUIRED:
            return {"type": "any"}
        case ToolChoice.NONE:
            return {"type": "none"}
        case _:
            assert_never(choice)


def encode_tools(request: ModelRequest) -> JsonObject:
    """`tools` and `tool_choice`; without tools, minimal ones for the history's tool blocks."""
    if not request.tools:
        history = _history_tools(request.messages)
        return {"tools": history, "tool_choice": {"type": "none"}} if history else {}
    tools = [
        {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}
        for spec in request.tools
    ]
    choice = _tool_choice(request.tool_choice)
    parallel = request.settings.parallel_tool_calls
    if parallel is False and choice["type"] != "none":
        choice["disable_parallel_tool_use"] = True
    return {"tools": tools, "tool_choice": choice}


def encode_output(response_format: ResponseFormat | None) -> tuple[JsonObject, list[str]]:
    """`output_config` for a JSON schema; a system sentence for a bare JSON object."""
    if response_format is None:
        return {}, []
    match response_format.kind:
        case ResponseFormatKind.TEXT:
            return {}, []
        case ResponseFormatKind.JSON_OBJECT:
            return {}, [JSON_OBJECT_PROMPT]
        case ResponseFormatKind.JSON_SCHEMA:
            if response_format.schema is None:
                raise ConfigurationError("ResponseFormat JSON_SCHEMA needs a schema, got None")
            output = {"type": "json_schema", "schema": response_format.schema}
            return {"output_config": {"format": output}}, []
        case _:
            assert_never(response_format.kind)


def _escape_hatches(provider: str, settings: ModelSettings) -> JsonObject:
    """`top_p`, `stop_sequences` and `service_tier` when set; a seed is refused (the Messages
    API has none)."""
    if settings.seed is not None:
        rule = f"None for {provider} (the Messages API takes no seed)"
        raise ConfigurationError.invalid("ModelSettings.seed", settings.seed, rule)
    body: JsonObject = {}
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.stop_sequences:
        body["stop_sequences"] = list(settings.stop_sequences)
    if settings.service_tier is not None:
        body["service_tier"] = settings.service_tier
    return body


OWNED = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "stream", "max_tokens", "temperature",
     "top_p", "stop_sequences", "service_tier"}
)  # fmt: skip
"""The body fields reactloop sets: an `extra_body` may not name them."""


def encode_request(
    request: ModelRequest,
    model: str,
    *,
    stream: bool,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    provider: str = "anthropic",
    profile: ModelProfile | None = None,
) -> JsonObject:
    """The Messages body for a neutral request; a history or setting no API accepts is refused."""
    check_history(provider, request.messages)
    settings = request.settings
    profile = model_profile(model) if profile is None else profile
    check_sampling(provider, model, settings, profile, ANTHROPIC_DEFAULTS)
    messages = wire_ids(request.messages)
    system, turns = encode_messages(messages, system_turns=profile.system_turns)
    output, extra_system = encode_output(settings.response_format)
    prompt = [request.instructions or "", *system, *extra_system]
    body: JsonObject = {
        "model": model,
        "max_tokens": settings.max_output_tokens or max_tokens,
        "messages": turns,
    }
    if any(prompt):
        body["system"] = "\n\n".join(part for part in prompt if part)
    body.update(encode_tools(request))
    body.update(output)
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    body.update(_escape_hatches(provider, settings))
    if stream:
        body["stream"] = True
    return body


def decode_usage(usage: object) -> Usage:
    """Usage as reported: Anthropic's `input_tokens` leaves out cache reads and writes, so the
    total input adds them back; thinking tokens (when reported) are part of `output_tokens`."""
    read = count(usage, "cache_read_input_tokens") or 0
    written = count(usage, "cache_creation_input_tokens") or 0
    return Usage(
        input_tokens=(count(usage, "input_tokens") or 0) + read + written,
        output_tokens=count(usage, "output_tokens") or 0,
        cache_read_tokens=read,
        cache_write_tokens=written,
        reasoning_tokens=count(obj(usage, "output_tokens_details"), "thinking_tokens") or 0,
        cache_write_1h_tokens=count(obj(usage, "cache_creation"), "ephemeral_1h_input_tokens") or 0,
    )


def merge_usage(reported: JsonObject, usage: object) -> None:
    """Fold one stream event's `usage` into what the stream reported so far (later figures win;
    a field an event leaves out keeps its earlier value)."""
    if isinstance(usage, dict):
        reported.update(usage)


def decode_stop(reason: str | None) -> FinishReason:
    """The neutral finish reason of a `stop_reason`."""
    return FinishReason.OTHER if reason is None else _STOP.get(reason, FinishReason.OTHER)


def _refusal(finish: FinishReason, details: object, answer: str) -> str | None:
    if finish is not FinishReason.REFUSAL:
        return None
    return text(details, "explanation") or answer


def _decode_tool_use(provider: str, block: JsonObject) -> ToolCall:
    name = text(block, "name")
    if not name:
        raise InvalidResponseError(
            f"{provider} sent a tool_use block without a name", provider=provider
        )
    arguments = orjson.dumps(block.get("input") or {}).decode()
    return ToolCall(name, arguments, text(block, "id") or new_call_id())


def decode_message(provider: str, body: JsonObject) -> ModelResponse:
    """A whole `message` as a neutral response."""
    if body.get("type") == "error":
        raise stream_error(provider, error_detail(body), None)
    parts: list[str] = []
    calls: list[ToolCall] = []
    for block in items(body, "content"):
        kind = text(block, "type")
        if kind == "text":
            parts.append(text(block, "text") or "")
        elif kind == "tool_use":
            calls.append(_decode_tool_use(provider, block))
    finish = decode_stop(text(body, "stop_reason"))
    answer = "".join(parts)
    refusal = _refusal(finish, body.get("stop_details"), answer)
    message = AssistantMessage(answer, tuple(calls), refusal)
    usage = decode_usage(body.get("usage"))
    return ModelResponse(message, usage, finish, text(body, "model"), text(body, "id"))


class MessageStream:
    """Accumulates Messages stream events into one response, forwarding deltas."""

    def __init__(self, provider: str, on_delta: DeltaSink, first_call: int = 0) -> None:
        self.provider = provider
        self.on_delta = on_delta
        self.first_call = first_call  # calls streamed before, in earlier parts of a paused turn
        self.text: list[str] = []
        self.calls: list[CallParts] = []
        self.raw = RawBlocks()
        self.blocks: dict[int, int | None] = {}
        self.reported: JsonObject = {}
        self.model: str | None = None
        self.id: str | None = None
        self.stop_reason: str | None = None
        self.stop_details: object = None
        self.stopped = False
        self._handlers: dict[str, Callable[[JsonObject], Awaitable[None]]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "message_delta": self._message_delta,
            "error": self._error,
        }

    async def handle(self, event: SseEvent) -> bool:
        """Take one event; True at `message_stop`. Unknown events and `ping` are ignored."""
        data = parse_json(self.provider, event.data.encode())
        kind = text(data, "type") or event.event
        if kind == "message_stop":
            self.stopped = True
            return True
        handler = self._handlers.get(kind)
        if handler is not None:
            await handler(data)
        return False

    async def _error(self, data: JsonObject) -> None:
        raise stream_error(self.provider, error_detail(data), None)

    async def _message_start(self, data: JsonObject) -> None:
        message = obj(data, "message")
        self.model = text(message, "model")
        self.id = text(message, "id")
        merge_usage(self.reported, message.get("usage"))

    async def _text(self, piece: str) -> None:
        if piece:
            self.text.append(piece)
            await self.on_delta(TextDelta(piece))

    async def _block_start(self, data: JsonObject) -> None:
        index, block = count(data, "index"), obj(data, "content_block")
        kind = text(block, "type")
        if index is None:
            return
        self.raw.start(index, block)
        if kind == "text":
            self.blocks[index] = None
            await self._text(text(block, "text") or "")
        elif kind == "tool_use":
            self.blocks[index] = len(self.calls)
            call_id, name = text(block, "id"), text(block, "name")
            initial = block.get("input")
            seed = orjson.dumps(initial).decode() if initial else ""
            self.calls.append(CallParts(call_id, name, initial=seed))
            position = self.first_call + len(self.calls) - 1
            await self.on_delta(ToolCallDelta(position, "", call_id, name))

    async def _block_delta(self, data: JsonObject) -> None:
        index, delta = count(data, "index"), obj(data, "delta")
        if index is not None:
            self.raw.delta(index, delta)
        if index is None or index not in self.blocks:
            return
        position = self.blocks[index]
        kind = text(delta, "type")
        if kind == "text_delta" and position is None:
            await self._text(text(delta, "text") or "")
        elif kind == "input_json_delta" and position is not None:
            fragment = text(delta, "partial_json") or ""
            if fragment:
                self.calls[position].parts.append(fragment)
                await self.on_delta(ToolCallDelta(self.first_call + position, fragment))

    async def _message_delta(self, data: JsonObject) -> None:
        delta = obj(data, "delta")
        self.stop_reason = text(delta, "stop_reason") or self.stop_reason
        self.stop_details = delta.get("stop_details", self.stop_details)
        merge_usage(self.reported, data.get("usage"))

    def response(self) -> ModelResponse:
        """The assembled response; raises if the stream was cut before the stop reason came."""
        if self.stop_reason is None and not self.stopped:
            raise ProviderUnavailableError(
                f"{self.provider} stream ended before the response was complete"
                " (no stop_reason in message_delta): the connection was cut",
                provider=self.provider,
            )
        finish = decode_stop(self.stop_reason)
        answer = "".join(self.text)
        calls = assemble_calls(self.provider, self.calls, finish)
        refusal = _refusal(finish, self.stop_details, answer)
        message = AssistantMessage(answer, calls, refusal)
        return ModelResponse(message, decode_usage(self.reported), finish, self.model, self.id)


class RawBlocks:
    """A streamed message's content blocks rebuilt as the API would have sent them whole, so a
    paused turn goes back as it is (server tool blocks, thinking and signatures included)."""

    _APPEND: ClassVar[dict[str, str]] = {"text_delta": "text", "thinking_delta": "thinking"}

    def __init__(self) -> None:
        self.blocks: dict[int, JsonObject] = {}
        self.json: dict[int, list[str]] = {}

    def start(self, index: int, block: JsonObject) -> None:
        self.blocks[index] = dict(block)

    def delta(self, index: int, delta: JsonObject) -> None:
        block = self.blocks.get(index)
        if block is None:
            return
        kind = text(delta, "type") or ""
        if kind in self._APPEND:
            key = self._APPEND[kind]
            block[key] = (text(block, key) or "") + (text(delta, key) or "")
        elif kind == "input_json_delta":
            self.json.setdefault(index, []).append(text(delta, "partial_json") or "")
        elif kind == "signature_delta":
            block["signature"] = text(delta, "signature") or ""

    def content(self) -> list[JsonObject]:
        """The blocks in order, each tool input parsed from its streamed JSON."""
        for index, parts in self.json.items():
            if "".join(parts).strip():
                self.blocks[index]["input"] = orjson.loads("".join(parts))
        return [self.blocks[index] for index in sorted(self.blocks)]


def continued(body: JsonObject, content: list[JsonObject]) -> JsonObject:
    """The body that continues a paused turn: the paused content sent back as it came, as (the
    end of) the last assistant turn."""
    turns = list(body["messages"])
    if turns and turns[-1]["role"] == Role.ASSISTANT.value:
        turns[-1] = {**turns[-1], "content": [*turns[-1]["content"], *content]}
    else:
        turns.append({"role": Role.ASSISTANT.value, "content": content})
    return {**body, "messages": turns}


def joined(parts: list[ModelResponse]) -> ModelResponse:
    """One response of a turn paused and continued: the texts and calls in order, the usage
    summed, the finish of the last part."""
    if len(parts) == 1:
        return parts[0]
    last = parts[-1]
    usage = Usage()
    for part in parts:
        usage = usage + part.usage
    answer = "".join(part.message.text for part in parts)
    calls = tuple(call for part in parts for call in part.message.tool_calls)
    message = AssistantMessage(answer, calls, last.message.refusal)
    return ModelResponse(message, usage, last.finish_reason, last.model, last.id)


@checked_arguments
class AnthropicModel(HttpModel):
    """A Claude model over the Anthropic Messages API.

    The key comes from `api_key` or `ANTHROPIC_API_KEY`; the base URL from `base_url`,
    `ANTHROPIC_BASE_URL`, or Anthropic's. `max_tokens` is the output limit sent when the request's
    settings name none (the protocol requires one). `profile` overrides what the model is taken
    to accept (default: its family's, see `model_profile`). A `pause_turn` is continued (the
    paused content sent back as it came) up to `MAX_CONTINUATIONS` times within one call. Close it
    with `aclose()` or `async with`.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "anthropic",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
        extra_headers: dict[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        check_http_options(
            "AnthropicModel", model=model, api_key=api_key, base_url=base_url, provider=provider,
            idle_timeout=idle_timeout, http_client=http_client, extra_headers=extra_headers,
        )  # fmt: skip
        self.profile = check_profile("AnthropicModel", profile, model)
        self.supports_native_output = self.profile.native_output  # output_config.format
        self.supports_forced_tool_choice = self.profile.forced_tool_choice
        self.model = model
        self.max_tokens = integer("AnthropicModel.max_tokens", max_tokens)
        self.extra_body = check_extra_body("AnthropicModel", extra_body, OWNED)
        secret = resolve_key(api_key, "ANTHROPIC_API_KEY")
        if secret is None:
            raise ConfigurationError(
                f"{provider} model {model!r} needs an API key:"
                " pass api_key= or set ANTHROPIC_API_KEY"
            )
        headers = {
            "content-type": "application/json",
            "anthropic-version": ANTHROPIC_VERSION,
            **(extra_headers or {}),
        }
        url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_BASE_URL
        check_base_url("AnthropicModel", url)
        self._channel = HttpChannel(
            provider, url, headers, secret=secret, auth=AuthScheme.X_API_KEY,
            client=http_client, idle_timeout=idle_timeout,
        )  # fmt: skip

    def strict_output_schema(self, schema: JsonObject) -> JsonObject:
        """A structured output's schema as this provider's strict mode takes it."""
        return strict_schema_anthropic(schema)

    def __repr__(self) -> str:
        return f"AnthropicModel(model={self.model!r}, base_url={redacted(self.base_url)!r})"

    def _body(self, request: ModelRequest, *, stream: bool) -> JsonObject:
        return encode_request(
            request, self.model, stream=stream, max_tokens=self.max_tokens,
            provider=self.provider, profile=self.profile,
        )  # fmt: skip

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One plain call: the whole response at once (a paused turn continued)."""
        body = self._body(request, stream=False)
        parts: list[ModelResponse] = []
        while True:
            answer = await self._channel.post_json(PATH, self.extra_body.apply(body))
            parts.append(decode_message(self.provider, answer))
            if text(answer, "stop_reason") != PAUSE_TURN or len(parts) > MAX_CONTINUATIONS:
                return joined(parts)
            content = [block for block in items(answer, "content") if isinstance(block, dict)]
            body = continued(body, content)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """One streamed call: deltas go to `on_delta`, the assembled response is returned (a
        paused turn continued, its parts streamed in order)."""
        body = self._body(request, stream=True)
        parts: list[ModelResponse] = []
        while True:
            first_call = sum(len(part.message.tool_calls) for part in parts)
            accumulator = MessageStream(self.provider, on_delta, first_call)
            await self._channel.post_stream(PATH, self.extra_body.apply(body), accumulator.handle)
            parts.append(accumulator.response())
            if accumulator.stop_reason != PAUSE_TURN or len(parts) > MAX_CONTINUATIONS:
                return joined(parts)
            body = continued(body, accumulator.raw.content())

"""`AnthropicModel`: the Anthropic Messages protocol (`anthropic-version: 2023-06-01`, still the
current version of the Messages API).

The system prompt travels apart (`instructions`, then any `SystemMessage`, joined), except that a
model that accepts mid-conversation system messages gets a later `SystemMessage` in place, where
Anthropic's placement rules allow it. Tool results are `tool_result` blocks of a user turn;
consecutive turns of one role are merged, so parallel results share one turn. A user message or
tool result made of parts (images, documents) is sent as `_anthropic_content` says. Sampling
settings are sent only when set, and refused before sending for a model that rejects them. A
stream is complete once `message_delta` brought the stop reason: `message_stop` is not waited for
(the last event of a cut stream is lost by SSE rules); the decode side is `_anthropic_stream`. An
assistant turn is sent from its parts in order: its own thinking back byte for byte, first in the
turn.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, assert_never

import httpx

from reactloop._core import (
    AssistantMessage,
    DeltaSink,
    ForcedTool,
    JsonObject,
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ReasoningPart,
    ResponseFormat,
    ResponseFormatKind,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolChoice,
    ToolMessage,
    UserMessage,
    is_blank,
    only_reasoning,
)
from reactloop._errors import ConfigurationError
from reactloop._providers._anthropic_cache import apply_cache
from reactloop._providers._anthropic_content import TOOL_RESULT, USER_MESSAGE, content_blocks
from reactloop._providers._anthropic_stream import (
    MAX_CONTINUATIONS,
    PAUSE_TURN,
    MessageStream,
    Role,
    continued,
    decode_message,
    joined,
)
from reactloop._providers._auth import AuthScheme, resolve_key
from reactloop._providers._base import HttpModel
from reactloop._providers._http import (
    DEFAULT_IDLE_TIMEOUT,
    HttpChannel,
)
from reactloop._providers._options import (
    check_base_url,
    check_extra_body,
    check_http_options,
)
from reactloop._providers._profiles import (
    ANTHROPIC_DEFAULTS,
    ANTHROPIC_UNKNOWN,
    ModelProfile,
    check_profile,
    check_sampling,
    model_profile,
)
from reactloop._providers._reasoning import anthropic_reasoning, thinking_conflict, thinking_on
from reactloop._providers._wire import (
    arguments_object,
    check_history,
    items,
    replays,
    text,
    tool_result_text,
    wire_ids,
)
from reactloop._redact import redacted
from reactloop._schema import strict_schema_anthropic
from reactloop._validate import checked_arguments, integer

__all__ = [
    "MAX_CONTINUATIONS",
    "AnthropicModel",
    "MessageStream",
    "decode_message",
    "encode_request",
]
"""What tests and the registry import from here (the decode side lives in `_anthropic_stream`)."""

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
PATH = "/v1/messages"
DEFAULT_MAX_TOKENS = 4096
JSON_OBJECT_PROMPT = "Answer with a single JSON object and nothing else."
HISTORY_TOOL_DESCRIPTION = "A tool used earlier in this conversation; not available now."
REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def _tool_use(call: ToolCall) -> JsonObject:
    input_ = arguments_object(call.arguments)
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": input_}


def _tool_result(message: ToolMessage, provider: str) -> JsonObject:
    """A `tool_result` block: a plain result's text, or its parts as text, image and document
    blocks (an all-blank result still says it returned nothing)."""
    blocks = [] if message.is_plain else content_blocks(provider, message.parts, TOOL_RESULT)
    block: JsonObject = {
        "type": "tool_result",
        "tool_use_id": message.call_id,
        "content": blocks or tool_result_text(message),
    }
    if message.is_error:
        block["is_error"] = True
    return block


def _text_blocks(content: str) -> list[JsonObject]:
    return [{"type": "text", "text": content}] if content.strip() else []


def _reasoning_blocks(part: ReasoningPart, provider: str, model: str) -> list[JsonObject]:
    """A reasoning part as this model takes it back: its own thinking (or redacted thinking)
    byte for byte; reasoning of another provider or model family, or without the signature
    Anthropic verifies, as `<thinking>` text (one block per text or summary), else nothing."""
    if replays(part, provider, model):
        if part.redacted is not None:
            return [{"type": "redacted_thinking", "data": part.redacted}]
        if part.signature is not None:
            return [{"type": "thinking", "thinking": part.text, "signature": part.signature}]
    readable = [part.text] if not is_blank(part.text) else list(part.summary)
    return [
        block for said in readable for block in _text_blocks(f"<thinking>\n{said}\n</thinking>")
    ]


def _assistant_blocks(message: AssistantMessage, provider: str, model: str) -> list[JsonObject]:
    """The message's parts in their order; a refusal without text is said before the calls."""
    blocks: list[JsonObject] = []
    refusal = message.refusal if is_blank(message.text) else None
    for part in message.parts:
        if isinstance(part, ToolCall) and refusal is not None:
            blocks += _text_blocks(refusal)
            refusal = None
        match part:
            case TextPart():
                blocks += _text_blocks(part.text)
            case ReasoningPart():
                blocks += _reasoning_blocks(part, provider, model)
            case ToolCall():
                blocks.append(_tool_use(part))
            case _:
                assert_never(part)
    return blocks + _text_blocks(refusal or "")


def _turn(
    message: UserMessage | AssistantMessage | ToolMessage, provider: str, model: str
) -> tuple[Role, list[JsonObject]]:
    match message:
        case UserMessage():
            return Role.USER, content_blocks(provider, message.parts, USER_MESSAGE)
        case AssistantMessage():
            return Role.ASSISTANT, _assistant_blocks(message, provider, model)
        case ToolMessage():
            return Role.USER, [_tool_result(message, provider)]
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
    """A turn, merged into the last one when it has the same role. Thinking leads the
    assistant turn that holds it: a merged message's leading thinking goes before the turn's
    earlier blocks when those hold none (Anthropic checks the turn's first block)."""
    if not (turns and turns[-1]["role"] == role.value):
        turns.append({"role": role.value, "content": blocks})
        return
    content = turns[-1]["content"]
    lead = 0
    while lead < len(blocks) and blocks[lead].get("type") in REASONING_BLOCKS:
        lead += 1
    if lead and content and content[0].get("type") not in REASONING_BLOCKS:
        content[:0] = blocks[:lead]
        blocks = blocks[lead:]
    content.extend(blocks)


def encode_messages(
    messages: tuple[Message, ...],
    *,
    system_turns: bool = False,
    provider: str = "anthropic",
    model: str = "",
) -> tuple[list[str], list[JsonObject]]:
    """System texts apart, and the turns with consecutive same-role turns merged.

    With `system_turns`, a `SystemMessage` that Anthropic's placement rules allow where it stands
    stays there as a `system` turn; any other goes to the system texts. No message is dropped but
    an answer holding only reasoning (`only_reasoning`); reasoning goes back as
    `_reasoning_blocks` says (`provider`, `model`: who is asked).
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
        if not only_reasoning(message):
            _append(turns, *_turn(message, provider, model))
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


def _check_thinking(provider: str, model: str, request: ModelRequest) -> None:
    """With thinking on, Anthropic refuses a temperature other than 1, a `top_p` below 0.95 and
    a forced tool choice: refused here, before anything is sent."""
    settings = request.settings
    if not thinking_on(settings):
        return
    choice = request.tool_choice
    forced = bool(request.tools) and (
        isinstance(choice, ForcedTool) or choice is ToolChoice.REQUIRED
    )
    temperature, top_p = settings.temperature, settings.top_p
    for option, value, refused, rule in (
        ("ModelSettings.temperature", temperature, temperature not in (None, 1), "None or 1"),
        ("ModelSettings.top_p", top_p, top_p is not None and top_p < THINKING_MIN_TOP_P,
         f"None or in [{THINKING_MIN_TOP_P}, 1]"),
        ("tool_choice", choice, forced, "'auto' or 'none' (output_strategy NATIVE or PROMPTED)"),
    ):  # fmt: skip
        if refused:
            raise thinking_conflict(provider, model, option, value, rule=rule)


THINKING_MIN_TOP_P = 0.95
"""The lowest `top_p` Anthropic takes with thinking on."""


def _output_config(body: JsonObject, reasoning: JsonObject) -> None:
    """The reasoning fields into the body, `output_config` merged with a structured output's."""
    for key, value in reasoning.items():
        if key == "output_config" and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value


OWNED = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "stream", "max_tokens", "temperature",
     "top_p", "stop_sequences", "service_tier"}
)  # fmt: skip
"""The body fields reactloop always sets: an `extra_body` may not name them. The fields it sets
for some requests only (the reasoning settings' fields, a structured output's) are refused by
`ExtraBody.apply` in a request that sets them, and stay an escape hatch for the others."""


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
    profile = check_profile(provider, profile, model, ANTHROPIC_UNKNOWN)
    check_sampling(provider, model, settings, profile, ANTHROPIC_DEFAULTS)
    limit = settings.max_output_tokens or max_tokens
    reasoning = anthropic_reasoning(provider, model, settings, profile, limit)
    _check_thinking(provider, model, request)
    messages = wire_ids(request.messages)
    system, turns = encode_messages(
        messages, system_turns=profile.system_turns, provider=provider, model=model
    )
    output, extra_system = encode_output(settings.response_format)
    prompt = [request.instructions or "", *system, *extra_system]
    body: JsonObject = {"model": model, "max_tokens": limit, "messages": turns}
    if any(prompt):
        body["system"] = "\n\n".join(part for part in prompt if part)
    body.update(encode_tools(request))
    body.update(output)
    _output_config(body, reasoning)
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    body.update(_escape_hatches(provider, settings))
    apply_cache(body, settings.cache)
    if stream:
        body["stream"] = True
    return body


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
        self._use_profile("AnthropicModel", profile, model, ANTHROPIC_UNKNOWN)  # output_config
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

    def takes_forced_tool_choice(self, settings: ModelSettings) -> bool:
        """Whether a request with these settings may force a tool: the profile's
        `forced_tool_choice`, and thinking off (Anthropic refuses forcing with thinking on)."""
        return self.supports_forced_tool_choice and not thinking_on(settings)

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
            parts.append(decode_message(self.provider, answer, self.model))
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
            accumulator = MessageStream(self.provider, on_delta, first_call, self.model)
            await self._channel.post_stream(PATH, self.extra_body.apply(body), accumulator.handle)
            parts.append(accumulator.response())
            if accumulator.stop_reason != PAUSE_TURN or len(parts) > MAX_CONTINUATIONS:
                return joined(parts)
            body = continued(body, accumulator.raw.content())

"""Provider-neutral values: messages, tool calls, usage, and the model's request and response.

All are frozen attrs classes, so a transcript is plain data that can be compared, hashed,
serialized and replayed, and no phase can change a message another phase already holds.
"""

from __future__ import annotations

import enum
import itertools
import re
from collections.abc import Container, Mapping
from typing import Any, TypeAlias, assert_never

from attrs import evolve, field, frozen

from reactloop._errors import ConfigurationError
from reactloop._unicode import json_text
from reactloop._validate import (
    boolean,
    checked_arguments,
    member,
    optional_boolean,
    optional_instance,
    optional_integer,
    optional_number,
    optional_text,
    text,
)

JsonObject: TypeAlias = dict[str, Any]

_call_ids = itertools.count(1)


def new_call_id() -> str:
    """A process-unique tool-call id, for calls built by hand or by test models."""
    return f"call_{next(_call_ids)}"


@frozen
class Usage:
    """Tokens one model call (or a whole run) consumed, the same way on every provider.

    `input_tokens` is all the input the model read: cache reads and cache writes included, each
    also counted apart in `cache_read_tokens` and `cache_write_tokens` (of which
    `cache_write_1h_tokens` were written with Anthropic's one-hour lifetime). `reasoning_tokens`
    (OpenAI reasoning, Anthropic thinking, when the provider reports them) are counted inside
    `output_tokens`. docs/usage.md maps each vendor's fields.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    @property
    def uncached_input_tokens(self) -> int:
        """The input neither read from nor written to a cache."""
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )


@frozen
class ToolCall:
    """One tool call the model asked for; `arguments` is the raw JSON text the model produced.

    `id` is unique within the run (pending calls, decisions, results and the journal use it);
    `provider_id` is the id the provider sent when it was not (it reused one), else None: the
    same as `id`. Providers get their own ids back unless two collide within one request.
    """

    name: str
    arguments: str = "{}"
    id: str = field(factory=new_call_id)
    provider_id: str | None = None

    @classmethod
    def of(
        cls, name: str, arguments: Mapping[str, Any] | None = None, id: str | None = None
    ) -> ToolCall:
        """Build a call from a mapping of arguments (serialized to JSON)."""
        text = json_text(dict(arguments or {}))
        return cls(name, text) if id is None else cls(name, text, id)

    def with_arguments(self, arguments: Mapping[str, Any]) -> ToolCall:
        """The same call (same id and name) with new arguments: what a hook's `Override` needs,
        since a call with a new id would no longer pair with its result."""
        return evolve(self, arguments=json_text(dict(arguments)))

    @property
    def wire_id(self) -> str:
        """The id the provider gave this call (its own id when the provider's was unique)."""
        return self.id if self.provider_id is None else self.provider_id


_NOT_IN_ID = re.compile(r"[^A-Za-z0-9_-]")


def fresh_call_id(taken: str, used: Container[str], start: int) -> str:
    """An id for a call whose id `taken` is used already: `taken`'s allowed characters
    (`[A-Za-z0-9_-]`, what Anthropic accepts in a tool_use id) and a number, none of `used`."""
    base = _NOT_IN_ID.sub("_", taken)[:48] or "call"
    number = start
    while f"{base}_{number}" in used:
        number += 1
    return f"{base}_{number}"


def unique_calls(message: AssistantMessage, used: dict[str, None]) -> AssistantMessage:
    """`message` with each call's id unique among `used` (which gains them): a call whose id is
    taken (a provider reusing ids) gets a fresh one and keeps the provider's as `provider_id`.
    A message whose ids are all new is returned as it is."""
    calls: list[ToolCall] | None = None
    for position, call in enumerate(message.tool_calls):
        if call.id not in used:
            used[call.id] = None
            continue
        calls = list(message.tool_calls) if calls is None else calls
        fresh = fresh_call_id(call.id, used, len(used) + 1)
        calls[position] = evolve(call, id=fresh, provider_id=call.wire_id)
        used[fresh] = None
    return message if calls is None else evolve(message, tool_calls=tuple(calls))


@frozen
class SystemMessage:
    """A system message in the history (the run's instructions travel apart, in the request)."""

    content: str


@frozen
class UserMessage:
    """What the user said."""

    content: str


@frozen
class AssistantMessage:
    """What the model said: text and/or tool calls, in the model's order."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    refusal: str | None = None


@frozen
class ToolMessage:
    """The result of one tool call, as the model will read it."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage


@frozen
class ToolSpec:
    """A tool as offered to the model: name, description and JSON schema of its parameters."""

    name: str
    description: str
    parameters: JsonObject


class ToolChoice(enum.StrEnum):
    """Whether the model may, must not, or must call a tool."""

    AUTO = "auto"
    NONE = "none"
    REQUIRED = "required"


@frozen
class ForcedTool:
    """Tool choice that forces one named tool."""

    name: str


class ResponseFormatKind(enum.StrEnum):
    """The shape the model's text must take."""

    TEXT = "text"
    JSON_OBJECT = "json_object"
    JSON_SCHEMA = "json_schema"


def _format_kind(value: ResponseFormatKind | str) -> ResponseFormatKind:
    return member("ResponseFormat.kind", value, ResponseFormatKind)


@checked_arguments
@frozen
class ResponseFormat:
    """Requested output format; `schema` and `name` apply to JSON_SCHEMA, which needs a schema."""

    kind: ResponseFormatKind = field(default=ResponseFormatKind.TEXT, converter=_format_kind)
    name: str = "response"
    schema: JsonObject | None = None
    strict: bool = True

    def __attrs_post_init__(self) -> None:
        text("ResponseFormat.name", self.name)
        optional_instance("ResponseFormat.schema", self.schema, dict, "a JSON schema (a dict)")
        boolean("ResponseFormat.strict", self.strict)
        if self.kind is ResponseFormatKind.JSON_SCHEMA and self.schema is None:
            raise ConfigurationError.invalid(
                "ResponseFormat.schema", None, "a JSON schema (a dict) when kind is json_schema"
            )


def _tuple_of_list(value: object) -> object:
    """A list given for a tuple field, as a tuple (anything else unchanged, for the check)."""
    return tuple(value) if isinstance(value, list) else value


@checked_arguments
@frozen
class ModelSettings:
    """Sampling and output settings; None (or no stop sequences) leaves the provider's default.

    `top_p` and `stop_sequences` go to both providers (`stop` on OpenAI, `stop_sequences` on
    Anthropic); `seed` only to OpenAI-compatible servers (Anthropic's API has none: refused there);
    `service_tier` as given (OpenAI: "auto", "default", "flex", "priority"...; Anthropic: "auto",
    "standard_only"). Provider-specific fields beyond these: the provider's `extra_body`.
    """

    temperature: float | None = None
    max_output_tokens: int | None = None
    response_format: ResponseFormat | None = None
    parallel_tool_calls: bool | None = None
    top_p: float | None = None
    stop_sequences: tuple[str, ...] = field(default=(), converter=_tuple_of_list)
    seed: int | None = None
    service_tier: str | None = None

    def __attrs_post_init__(self) -> None:
        optional_number("ModelSettings.temperature", self.temperature, inclusive=True)
        optional_integer("ModelSettings.max_output_tokens", self.max_output_tokens)
        optional_instance(
            "ModelSettings.response_format",
            self.response_format,
            ResponseFormat,
            "a ResponseFormat",
        )
        optional_boolean("ModelSettings.parallel_tool_calls", self.parallel_tool_calls)
        top_p = optional_number("ModelSettings.top_p", self.top_p, inclusive=True)
        if top_p is not None and top_p > 1:
            raise ConfigurationError.invalid("ModelSettings.top_p", top_p, "a number in [0, 1]")
        stops = self.stop_sequences
        if not isinstance(stops, tuple):
            rule = "a tuple (or list) of non-empty strings"
            raise ConfigurationError.invalid("ModelSettings.stop_sequences", stops, rule)
        for index, stop in enumerate(stops):
            text(f"ModelSettings.stop_sequences[{index}]", stop)
        seed = self.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ConfigurationError.invalid("ModelSettings.seed", seed, "an int or None")
        optional_text("ModelSettings.service_tier", self.service_tier)


@frozen
class ModelRequest:
    """Everything one model call needs. `instructions` is the system prompt, kept apart."""

    messages: tuple[Message, ...]
    instructions: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | ForcedTool = ToolChoice.AUTO
    settings: ModelSettings = ModelSettings()


class FinishReason(enum.StrEnum):
    """Why the model stopped producing output."""

    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"
    CONTENT_FILTER = "content_filter"
    REFUSAL = "refusal"
    OTHER = "other"


@frozen
class ModelResponse:
    """One model answer: the assistant message, its usage, and why it finished; `model` and
    `id` are what the provider said (the model that answered, its own id for the response)."""

    message: AssistantMessage
    usage: Usage = Usage()
    finish_reason: FinishReason = FinishReason.STOP
    model: str | None = None
    id: str | None = None


@frozen
class TextDelta:
    """A piece of streamed text."""

    text: str


@frozen
class ToolCallDelta:
    """A piece of a streamed tool call; `index` groups the pieces of one call."""

    index: int
    arguments_delta: str = ""
    id: str | None = None
    name: str | None = None


ModelDelta: TypeAlias = TextDelta | ToolCallDelta


def is_blank(text: str | None) -> bool:
    """True for None, `""` and whitespace: text a model API treats as no content."""
    return text is None or not text.strip()


def blank_reason(message: Message) -> str | None:
    """Why the message carries nothing a model API accepts, or None when it carries something."""
    match message:
        case SystemMessage() | UserMessage():
            return "its content is blank" if is_blank(message.content) else None
        case AssistantMessage():
            said = not (is_blank(message.text) and is_blank(message.refusal))
            return None if said or message.tool_calls else "it has no text, tool call or refusal"
        case ToolMessage():
            return None  # an empty result is still the call's answer: see tool_result_text
        case _:
            assert_never(message)

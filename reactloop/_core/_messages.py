"""Provider-neutral values: messages, tool calls, usage, and the model's request and response.

All are frozen attrs classes, so a transcript is plain data that can be compared, hashed,
serialized and replayed, and no phase can change a message another phase already holds.
"""

from __future__ import annotations

import enum
import itertools
import re
import warnings
from collections.abc import Container, Iterable, Mapping
from decimal import Decimal
from typing import Any, TypeAlias, assert_never

from attrs import evolve, field, frozen

from reactloop._core._cache import CachePoint
from reactloop._core._parts import (
    CONTENT_PART_TYPES,
    ContentPart,
    ReasoningPart,
    TextPart,
    text_of,
)
from reactloop._core._settings import (
    ModelSettings,
)
from reactloop._errors import ConfigurationError
from reactloop._unicode import holds_no_text, json_text

JsonObject: TypeAlias = dict[str, Any]

_call_ids = itertools.count(1)


def new_call_id() -> str:
    """A process-unique tool-call id, for calls built by hand or by test models."""
    return f"call_{next(_call_ids)}"


@holds_no_text
@frozen
class Usage:
    """Tokens one model call (or a whole run) consumed, the same way on every provider.

    `input_tokens` is all the input the model read: cache reads and cache writes included, each
    also counted apart in `cache_read_tokens` and `cache_write_tokens` (of which
    `cache_write_1h_tokens` were written with Anthropic's one-hour lifetime). `reasoning_tokens`
    (OpenAI reasoning, Anthropic thinking, when the provider reports them) are counted inside
    `output_tokens`. docs/usage.md maps each vendor's fields.

    `cost` is what the call cost in dollars when the loop has a price table (docs/cost.md), else
    None: unknown, never zero. Summed, an unknown cost makes the total unknown, except that of a
    usage with no tokens at all (nothing was spent).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_1h_tokens: int = 0
    cost: Decimal | None = None

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
            cost=None if self.cost is None and other.cost is None else _sum_cost(self, other),
        )


def _sum_cost(one: Usage, other: Usage) -> Decimal | None:
    """Known plus known is their sum; an unknown cost makes the sum unknown, unless its usage
    spent no token (the zero a run's total starts from)."""
    if one.cost is not None and other.cost is not None:
        return one.cost + other.cost
    unknown = other if one.cost is not None else one
    if unknown.total_tokens or unknown.cache_read_tokens or unknown.cache_write_tokens:
        return None
    return one.cost if one.cost is not None else other.cost


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
    return message if calls is None else message.with_tool_calls(calls)


def _text_of(owner: str, text: str | None, content: str | None, stacklevel: int = 3) -> str:
    """The message's text, from `text` or the deprecated `content` keyword (not both)."""
    if content is None:
        if text is None:
            raise ConfigurationError.invalid(f"{owner}.text", None, "a string")
        return text
    if text is not None:
        rule = "given once: `content` is the old name of `text`"
        raise ConfigurationError.invalid(f"{owner}.content", content, rule)
    warnings.warn(
        f"{owner}(content=...) is deprecated: use {owner}(text=...) (every message names its"
        " text `text`)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return content


def _content_warning(owner: str) -> None:
    warnings.warn(
        f"{owner}.content is deprecated: read {owner}.text (every message names its text `text`)",
        DeprecationWarning,
        stacklevel=3,
    )


@frozen(init=False)
class SystemMessage:
    """A system message in the history (the run's instructions travel apart, in the request)."""

    text: str

    def __init__(self, text: str | None = None, *, content: str | None = None) -> None:
        self.__attrs_init__(_text_of("SystemMessage", text, content))

    @property
    def content(self) -> str:
        """Deprecated: the old name of `text`."""
        _content_warning("SystemMessage")
        return self.text


def _content_parts(
    owner: str, text: str | None, parts: Iterable[str | ContentPart] | None, content: str | None
) -> tuple[ContentPart, ...]:
    """A user or tool message's parts: its text as one part, or the parts given (strings in them
    become text parts); never both."""
    if parts is None:
        return (TextPart(_text_of(owner, text, content, stacklevel=4)),)
    if text is not None or content is not None:
        rule = "given alone: the text is read from the parts"
        raise ConfigurationError.invalid(f"{owner}.parts", parts, rule)
    if isinstance(parts, str | bytes):
        raise ConfigurationError.invalid(f"{owner}.parts", parts, "a list of parts")
    return tuple(_content_part(owner, part) for part in parts)


def _content_part(owner: str, part: object) -> ContentPart:
    if isinstance(part, str):
        return TextPart(part)
    if isinstance(part, CONTENT_PART_TYPES):
        return part
    rule = "a str, TextPart, ImagePart, DocumentPart, AudioPart or CachePoint"
    raise ConfigurationError.invalid(f"{owner}.parts", part, rule)


@frozen(init=False)
class UserMessage:
    """What the user said: text, or ordered parts (text, images, documents, audio).

    `UserMessage("hi")` holds one text part; `UserMessage(parts=["What is this?", image])` any
    mix. `text` is the text parts joined; two messages are equal when their parts are.
    """

    parts: tuple[ContentPart, ...]
    text: str = field(init=False, eq=False, repr=False)

    def __init__(
        self,
        text: str | None = None,
        *,
        parts: Iterable[str | ContentPart] | None = None,
        content: str | None = None,
    ) -> None:
        if parts is None and content is None and type(text) is str:  # the common case, first
            self.__attrs_init__((TextPart(text),))
            object.__setattr__(self, "text", text)
            return
        self.__attrs_init__(_content_parts("UserMessage", text, parts, content))
        object.__setattr__(self, "text", text_of(self.parts))

    @property
    def content(self) -> str:
        """Deprecated: the old name of `text`."""
        _content_warning("UserMessage")
        return self.text

    @property
    def is_plain(self) -> bool:
        """True when the message is one text part (what 0.1 could say)."""
        return len(self.parts) == 1 and isinstance(self.parts[0], TextPart)


AssistantPart: TypeAlias = TextPart | ReasoningPart | ToolCall
"""One part of what the model said; a message holds them in the model's order."""


@frozen(init=False)
class AssistantMessage:
    """What the model said: its parts (reasoning, text, tool calls) in the model's order.

    Built from `text` and `tool_calls` (the text first), or from `parts` alone. `text` (the
    text parts joined), `tool_calls` and `reasoning` read the parts; two messages are equal when
    their parts and refusal are.
    """

    parts: tuple[AssistantPart, ...]
    refusal: str | None
    text: str = field(init=False, eq=False, repr=False)
    tool_calls: tuple[ToolCall, ...] = field(init=False, eq=False, repr=False)

    def __init__(
        self,
        text: str = "",
        tool_calls: Iterable[ToolCall] = (),
        refusal: str | None = None,
        *,
        parts: Iterable[AssistantPart] | None = None,
    ) -> None:
        if parts is None:
            calls = tuple(tool_calls)
            self.__attrs_init__(((TextPart(text),) if text else ()) + calls, refusal)
        else:
            if text or tool_calls:
                rule = "given alone: the text and tool calls are read from the parts"
                raise ConfigurationError.invalid("AssistantMessage.parts", parts, rule)
            self.__attrs_init__(tuple(parts), refusal)
            text = "".join(part.text for part in self.parts if isinstance(part, TextPart))
            calls = tuple(part for part in self.parts if isinstance(part, ToolCall))
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "tool_calls", calls)

    @property
    def reasoning(self) -> tuple[ReasoningPart, ...]:
        """The reasoning parts, in order."""
        return tuple(part for part in self.parts if isinstance(part, ReasoningPart))

    def with_tool_calls(self, calls: Iterable[ToolCall]) -> AssistantMessage:
        """The same message with its tool calls replaced, one for one, in their places."""
        replacements = iter(tuple(calls))
        parts = tuple(
            next(replacements) if isinstance(part, ToolCall) else part for part in self.parts
        )
        return AssistantMessage(parts=parts, refusal=self.refusal)

    def without_reasoning(self) -> AssistantMessage:
        """The same message without its reasoning parts (itself when it has none)."""
        if not any(isinstance(part, ReasoningPart) for part in self.parts):
            return self
        kept = (part for part in self.parts if not isinstance(part, ReasoningPart))
        return AssistantMessage(parts=kept, refusal=self.refusal)


@frozen(init=False)
class ToolMessage:
    """The result of one tool call, as the model will read it: text, or ordered parts (a tool
    may return images, documents and audio). `text` is the text parts joined."""

    call_id: str
    name: str
    parts: tuple[ContentPart, ...]
    is_error: bool
    text: str = field(init=False, eq=False, repr=False)

    def __init__(
        self,
        call_id: str,
        name: str,
        text: str | None = None,
        is_error: bool = False,
        *,
        parts: Iterable[str | ContentPart] | None = None,
        content: str | None = None,
    ) -> None:
        if parts is None and content is None and type(text) is str:  # the common case, first
            self.__attrs_init__(call_id, name, (TextPart(text),), is_error)
            object.__setattr__(self, "text", text)
            return
        self.__attrs_init__(
            call_id, name, _content_parts("ToolMessage", text, parts, content), is_error
        )
        object.__setattr__(self, "text", text_of(self.parts))

    @property
    def content(self) -> str:
        """Deprecated: the old name of `text`."""
        _content_warning("ToolMessage")
        return self.text

    @property
    def is_plain(self) -> bool:
        """True when the result is one text part (what 0.1 could say)."""
        return len(self.parts) == 1 and isinstance(self.parts[0], TextPart)


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


NO_SETTINGS = ModelSettings()
"""The settings of a request that sets none (shared: settings are frozen)."""


@frozen
class ModelRequest:
    """Everything one model call needs. `instructions` is the system prompt, kept apart."""

    messages: tuple[Message, ...]
    instructions: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | ForcedTool = ToolChoice.AUTO
    settings: ModelSettings = NO_SETTINGS


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
    `id` are what the provider said (the model that answered, its own id for the response);
    `answered_by` names which of a `FallbackModel`'s models answered (None without one)."""

    message: AssistantMessage
    usage: Usage = Usage()
    finish_reason: FinishReason = FinishReason.STOP
    model: str | None = None
    id: str | None = None
    answered_by: str | None = None


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


@frozen
class ReasoningDelta:
    """A piece of streamed reasoning (or of its summary) the model shows while it thinks."""

    text: str


ModelDelta: TypeAlias = TextDelta | ToolCallDelta | ReasoningDelta


def is_blank(text: str | None) -> bool:
    """True for None, `""` and whitespace: text a model API treats as no content."""
    return text is None or not text.strip()


def blank_reason(message: Message) -> str | None:
    """Why the message carries nothing a model API accepts, or None when it carries something."""
    match message:
        case SystemMessage():
            return "its text is blank" if is_blank(message.text) else None
        case UserMessage():
            textual = (TextPart, CachePoint)
            media = not message.is_plain and not all(isinstance(p, textual) for p in message.parts)
            return None if media or not is_blank(message.text) else "its text is blank"
        case AssistantMessage():
            said = not (is_blank(message.text) and is_blank(message.refusal))
            if said or message.tool_calls or message.reasoning:
                return None
            return "it has no text, tool call, refusal or reasoning"
        case ToolMessage():
            return None  # an empty result is still the call's answer: see tool_result_text
        case _:
            assert_never(message)


def only_reasoning(message: Message) -> bool:
    """True for an answer that holds reasoning and nothing else (cut off while thinking).
    Providers leave it out of a request: the vendors want reasoning back only beside what
    followed it, and drop an earlier turn's reasoning themselves (ADR-0026)."""
    if not isinstance(message, AssistantMessage) or message.tool_calls:
        return False
    return is_blank(message.text) and is_blank(message.refusal) and bool(message.reasoning)

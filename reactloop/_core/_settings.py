"""The settings a model call takes: sampling, output format, reasoning, caching.

Frozen and checked when built, like every option: a wrong value is a `ConfigurationError`
naming it, never a provider's 400 mid-run.
"""

from __future__ import annotations

import enum
from typing import Any

from attrs import field, frozen

from reactloop._core._cache import CacheSettings
from reactloop._errors import ConfigurationError
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

JsonObject = dict[str, Any]


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


class ReasoningEffort(enum.StrEnum):
    """How hard a reasoning model thinks; each provider takes the levels its models accept."""

    NONE = "none"
    MINIMAL = "minimal"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    XHIGH = "xhigh"
    MAX = "max"


def _effort(value: ReasoningEffort | str | None) -> ReasoningEffort | None:
    return None if value is None else member("ReasoningSettings.effort", value, ReasoningEffort)


@checked_arguments
@frozen
class ReasoningSettings:
    """How a reasoning model thinks: an effort level, a token budget, or both where the model
    takes both; `summary` asks for reasoning summaries ("auto", "concise", "detailed").

    Each provider maps it to its own form (Anthropic `thinking` and `output_config.effort`,
    OpenAI `reasoning`, compatible servers' `reasoning_effort`) and refuses, before anything is
    sent, what the model's profile says it does not take.
    """

    effort: ReasoningEffort | None = field(default=None, converter=_effort)
    budget_tokens: int | None = None
    summary: str | None = None

    def __attrs_post_init__(self) -> None:
        optional_integer("ReasoningSettings.budget_tokens", self.budget_tokens)
        optional_text("ReasoningSettings.summary", self.summary)


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
    "standard_only"). `reasoning`: how a reasoning model thinks (`ReasoningSettings`).
    `cache`: prompt caching (`CacheSettings`; None: the provider's default, nothing sent).
    Provider-specific fields beyond these: the provider's `extra_body`.
    """

    temperature: float | None = None
    max_output_tokens: int | None = None
    response_format: ResponseFormat | None = None
    parallel_tool_calls: bool | None = None
    top_p: float | None = None
    stop_sequences: tuple[str, ...] = field(default=(), converter=_tuple_of_list)
    seed: int | None = None
    service_tier: str | None = None
    reasoning: ReasoningSettings | None = None
    cache: CacheSettings | None = None

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
        optional_instance(
            "ModelSettings.reasoning", self.reasoning, ReasoningSettings, "a ReasoningSettings"
        )
        optional_instance("ModelSettings.cache", self.cache, CacheSettings, "a CacheSettings")

"""`ModelProfile`: what one model accepts, by family, with the user's override (ADR-0025).

A model id is matched against `FAMILIES` in order (first prefix that fits wins), so a model
reactloop has never heard of (`claude-opus-5-1`, `gpt-5.4-mini`) gets its family's rules; an id
of no known family gets `PERMISSIVE`: everything the user set is sent and the API judges.
"""

from __future__ import annotations

import attrs
from attrs import field, frozen

from reactloop._core import ModelSettings, ReasoningEffort
from reactloop._errors import ProviderConfigurationError
from reactloop._validate import boolean, checked_arguments, fail


def frozen_set(value: object) -> object:
    """A set, list or tuple given for a frozenset field, as a frozenset (None unchanged)."""
    return frozenset(value) if isinstance(value, set | list | tuple) else value


def check_efforts(option: str, value: object) -> None:
    """A `reasoning_efforts` field (named `option`): None, or a frozenset of `ReasoningEffort`
    values."""
    if value is None:
        return
    levels = {effort.value for effort in ReasoningEffort}
    if not isinstance(value, frozenset) or not all(
        isinstance(level, str) and level in levels for level in value
    ):
        fail(option, value, f"None or a set of {sorted(levels)}")


@checked_arguments
@frozen
class ModelProfile:
    """What a model accepts; every field is checked at construction.

    - `sampling`: takes `temperature` (and `top_p`, `top_k`); False refuses a set temperature
      before the request is sent.
    - `forced_tool_choice`: takes a forced tool choice (a named tool, or "required"/"any");
      False keeps structured output off the forced final-answer tool (AUTO picks NATIVE, or
      PROMPTED where no native format fits) and ends a capped run without forcing.
    - `native_output`: takes a strict JSON-schema response format (AUTO picks NATIVE).
    - `thinking`: thinks before it answers (reasoning models); on Anthropic, a `ReasoningEffort`
      of "none" sends `thinking: {type: disabled}` to such a model.
    - `system_turns`: takes system turns inside the conversation (Anthropic placement rules).
    - `reasoning_efforts`: the `ReasoningSettings.effort` levels it takes ("none", "low", ...);
      None when unknown (the level set is sent and the API judges), an empty set for none.
    - `thinking_budget`: takes a thinking token budget (`ReasoningSettings.budget_tokens`).
    - `adaptive_thinking`: Anthropic's adaptive thinking, which an effort turns on
      (`thinking: {type: adaptive}` beside `output_config.effort`).
    - `cache_retention`: takes OpenAI's extended prompt cache retention
      (`prompt_cache_retention: "24h"`, what `CacheSettings(ttl="1h")` asks for).
    - `cache_breakpoints`: takes OpenAI's explicit cache breakpoints (`prompt_cache_breakpoint`
      on a content part, where a `CachePoint` stands).

    Override one: `AnthropicModel("claude-opus-5", profile=attrs.evolve(
    model_profile("claude-opus-5"), sampling=True))`.
    """

    sampling: bool = True
    forced_tool_choice: bool = True
    native_output: bool = True
    thinking: bool = False
    system_turns: bool = False
    reasoning_efforts: frozenset[str] | None = field(default=None, converter=frozen_set)
    thinking_budget: bool = True
    adaptive_thinking: bool = False
    cache_retention: bool = False
    cache_breakpoints: bool = False

    def __attrs_post_init__(self) -> None:
        for name in _FLAGS:
            boolean(f"ModelProfile.{name}", getattr(self, name))
        check_efforts("ModelProfile.reasoning_efforts", self.reasoning_efforts)


_FLAGS = (
    "sampling", "forced_tool_choice", "native_output", "thinking", "system_turns",
    "thinking_budget", "adaptive_thinking", "cache_retention",
    "cache_breakpoints",
)  # fmt: skip


PERMISSIVE = ModelProfile()
"""A model of no known family: send only what the user set and let the API judge."""

_CLAUDE_EFFORTS = frozenset({"none", "low", "medium", "high"})
"""The `output_config.effort` levels of Claude Opus 4.5 ("none": thinking off)."""

_CLAUDE = ModelProfile(sampling=False, reasoning_efforts=frozenset({"none"}))
"""Claude models before Opus 4.5: forced tool choice, native output; extended thinking by a token
budget (no effort levels). No Claude profile takes sampling parameters: the Messages API's own
definitions (the anthropic SDK's request types, 2.x) have no `temperature`, `top_p` or `top_k`,
and Anthropic answers 400 "deprecated for this model" where they were removed; `profile=` can
still send them to a model that takes them."""

_CLAUDE_OPUS_4_5 = ModelProfile(sampling=False, reasoning_efforts=_CLAUDE_EFFORTS, thinking=True)
"""Claude Opus 4.5: a thinking budget, and `output_config.effort` beside it."""

_CLAUDE_OPUS_4_6 = ModelProfile(
    sampling=False,
    reasoning_efforts=_CLAUDE_EFFORTS | {"max"},
    thinking=True,
    adaptive_thinking=True,
)
"""Claude Opus 4.6: adaptive thinking by effort, the thinking budget still taken."""

_CLAUDE_ADAPTIVE = ModelProfile(
    sampling=False, forced_tool_choice=False, thinking=True, thinking_budget=False,
    adaptive_thinking=True, reasoning_efforts=_CLAUDE_EFFORTS | {"xhigh", "max"},
)  # fmt: skip
"""Claude Opus 4.7 and later, and newer families: no sampling parameters (Anthropic removed
them), adaptive thinking by effort (no thinking budget), under which a forced tool choice is
refused."""

_OPENAI_REASONING = ModelProfile(
    sampling=False, thinking=True, thinking_budget=False,
    reasoning_efforts=frozenset({"none", "minimal", "low", "medium", "high", "xhigh"}),
)  # fmt: skip
"""OpenAI reasoning models (o-series, GPT-5): only the default temperature; `reasoning_effort`
(the levels OpenAI documents for them), no token budget."""

_OPENAI_CHAT = ModelProfile(reasoning_efforts=frozenset(), thinking_budget=False)
"""OpenAI's GPT-4 families: no reasoning settings."""

_GEMINI_3 = ModelProfile(thinking=True, thinking_budget=False)
"""Gemini 3 and later: thinking by `thinkingLevel` (an effort; Google recommends it over a
budget, and refuses both in one request), the levels of a family not listed here left to the
API (ai.google.dev/gemini-api/docs/thinking: thinking levels)."""

_GEMINI_2_5 = ModelProfile(thinking=True, reasoning_efforts=frozenset(), native_output=False)
"""Gemini 2.5: thinking by `thinkingBudget` (no levels); Pro cannot turn thinking off. No
native output: Gemini before 3 refuses a JSON response format beside function declarations
(400 "Function calling with a response mime type: 'application/json' is unsupported";
googleapis/python-genai#867), so a tool loop's AUTO takes the output tool."""

_GEMINI_EARLY = ModelProfile(
    reasoning_efforts=frozenset(), thinking_budget=False, native_output=False
)
"""Gemini 2.0 and 1.5: no thinking settings, no JSON-schema response format (`responseJsonSchema`
came with Gemini 2.5)."""

_GPT_OSS = ModelProfile(
    thinking=True, thinking_budget=False, reasoning_efforts=frozenset({"low", "medium", "high"})
)
"""OpenAI's open-weight gpt-oss models, wherever they are served (Groq, OpenRouter, Ollama,
vLLM): reasoning by effort, "low", "medium" or "high" (Groq's API reference: "openai/gpt-oss-20b
and openai/gpt-oss-120b support 'low', 'medium', or 'high'"), no token budget."""

FAMILIES: tuple[tuple[str, ModelProfile], ...] = (
    ("claude-opus-4-8", attrs.evolve(_CLAUDE_ADAPTIVE, system_turns=True)),
    ("claude-opus-4-7", _CLAUDE_ADAPTIVE),
    ("claude-opus-4-6", _CLAUDE_OPUS_4_6),
    ("claude-opus-4-5", _CLAUDE_OPUS_4_5),
    ("claude-opus-4", _CLAUDE),
    ("claude-sonnet-4", _CLAUDE),
    ("claude-haiku-4", _CLAUDE),
    ("claude-3", _CLAUDE),
    ("claude-opus-", _CLAUDE_ADAPTIVE),
    ("claude-sonnet-", _CLAUDE_ADAPTIVE),
    ("claude-haiku-", _CLAUDE_ADAPTIVE),
    ("gpt-5.6", attrs.evolve(_OPENAI_REASONING, cache_retention=True, cache_breakpoints=True)),
    ("gpt-5", attrs.evolve(_OPENAI_REASONING, cache_retention=True)),
    ("o1", _OPENAI_REASONING),
    ("o3", _OPENAI_REASONING),
    ("o4", _OPENAI_REASONING),
    ("gpt-4.1", attrs.evolve(_OPENAI_CHAT, cache_retention=True)),
    ("gpt-4o", _OPENAI_CHAT),
    ("gpt-oss", _GPT_OSS),
    ("gemini-3-pro", attrs.evolve(_GEMINI_3, reasoning_efforts=frozenset({"low", "high"}))),
    ("gemini-3-flash", attrs.evolve(
        _GEMINI_3, reasoning_efforts=frozenset({"minimal", "low", "medium", "high"}))),
    ("gemini-3.1-pro", attrs.evolve(
        _GEMINI_3, reasoning_efforts=frozenset({"low", "medium", "high"}))),
    ("gemini-3", _GEMINI_3),
    ("gemini-2.5-pro", _GEMINI_2_5),
    ("gemini-2.5-flash", attrs.evolve(_GEMINI_2_5, reasoning_efforts=frozenset({"none"}))),
    ("gemini-2", _GEMINI_EARLY),
    ("gemini-1", _GEMINI_EARLY),
)  # fmt: skip
"""Family prefixes, most specific first, and their profiles."""


def model_profile(model: str) -> ModelProfile:
    """The profile of a model id: its family's (first matching prefix), else `PERMISSIVE`.

    A vendor path such as `anthropic/claude-opus-5` or `models/gpt-5` is matched on its last
    segment."""
    name = model.rsplit("/", 1)[-1].lower()
    return next((profile for prefix, profile in FAMILIES if name.startswith(prefix)), PERMISSIVE)


def model_family(model: str) -> str:
    """The family a model id belongs to: its `FAMILIES` prefix, else the id itself (lowercase,
    last path segment)."""
    name = model.rsplit("/", 1)[-1].lower()
    return next((prefix for prefix, _ in FAMILIES if name.startswith(prefix)), name)


ANTHROPIC_UNKNOWN = attrs.evolve(PERMISSIVE, sampling=False)
"""An Anthropic model of no known family: permissive, except for the sampling parameters the
Messages API no longer defines."""


def check_profile(
    owner: str, profile: object, model: str, unknown: ModelProfile = PERMISSIVE
) -> ModelProfile:
    """A provider's `profile=`: a `ModelProfile`, or None for the model's family profile
    (`unknown` for a model of no known family)."""
    if profile is None:
        found = model_profile(model)
        return unknown if found is PERMISSIVE else found
    if not isinstance(profile, ModelProfile):
        fail(f"{owner}.profile", profile, "a ModelProfile or None")
    return profile


OPENAI_DEFAULTS = "takes only its default temperature and top_p"
ANTHROPIC_DEFAULTS = (
    "takes no sampling parameters (temperature, top_p, top_k): the Messages API defines none"
)


def check_sampling(
    provider: str,
    model: str,
    settings: ModelSettings,
    profile: ModelProfile | None,
    takes: str,
) -> None:
    """Refuse a temperature or top_p the model's profile says it rejects, before the request is
    sent; `takes` says what the model takes instead (each vendor words it its own way)."""
    profile = model_profile(model) if profile is None else profile
    for name, value in (("temperature", settings.temperature), ("top_p", settings.top_p)):
        if value is None or profile.sampling:
            continue
        rule = f"unset (None) for {provider} model {model!r}"
        raise ProviderConfigurationError(
            f"ModelSettings.{name} must be {rule}, got {value!r}: the model {takes}; its"
            " profile says so (override it with profile=)",
            provider=provider,
            option=f"ModelSettings.{name}",
            value=value,
            rule=rule,
        )

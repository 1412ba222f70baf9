"""`ModelSettings.reasoning` in each protocol's form, refused before sending where the model's
profile says it is not taken (ADR-0027).

- Anthropic: a budget is `thinking: {type: enabled, budget_tokens}` (at least 1,024 and below
  `max_tokens`); an effort is `output_config.effort`, with `thinking: {type: adaptive}` on a
  model of adaptive thinking; the effort "none" is `thinking: {type: disabled}` (nothing on a
  model that does not think); a summary asks for `thinking.display: "summarized"`.
- OpenAI Chat Completions (and compatible servers): an effort is `reasoning_effort`; a budget and
  a summary have no field there and are refused.
"""

from __future__ import annotations

from reactloop._core import JsonObject, ModelSettings, ReasoningEffort, ReasoningSettings
from reactloop._errors import ProviderConfigurationError
from reactloop._providers._profiles import ModelProfile

MIN_THINKING_BUDGET = 1024
"""Anthropic's smallest `thinking.budget_tokens`."""


def refuse(
    provider: str, model: str, field: str, value: object, rule: str
) -> ProviderConfigurationError:
    """The error for a reasoning setting (`field` of `ReasoningSettings`) the model refuses."""
    option = f"ModelSettings.reasoning.{field}"
    return ProviderConfigurationError(
        f"{option} must be {rule} for {provider} model {model!r}, got {value!r}",
        provider=provider,
        option=option,
        value=value,
        rule=rule,
    )


def thinking_conflict(
    provider: str, model: str, option: str, value: object, *, rule: str
) -> ProviderConfigurationError:
    """The error for a setting Anthropic refuses once thinking is on (`option` at fault)."""
    full = f"{rule} for {provider} model {model!r} while thinking is on"
    return ProviderConfigurationError(
        f"{option} must be {full}, got {value!r}: Anthropic refuses it with thinking, which"
        " ModelSettings.reasoning turns on",
        provider=provider,
        option=option,
        value=value,
        rule=full,
    )


def check_effort(provider: str, model: str, effort: ReasoningEffort, profile: ModelProfile) -> None:
    """Refuse an effort level outside the profile's levels (any level when they are unknown)."""
    levels = profile.reasoning_efforts
    if levels is None or effort.value in levels:
        return
    if not levels:  # "none" would read as the level 'none'
        rule = "None: there are no levels the model takes, not even 'none' (its profile says so)"
        raise refuse(provider, model, "effort", effort.value, rule)
    taken = ", ".join(repr(level) for level in _ordered(levels))
    rule = f"one of the levels the model takes ({taken}; its profile says so)"
    raise refuse(provider, model, "effort", effort.value, rule)


def _ordered(levels: frozenset[str]) -> list[str]:
    order = [effort.value for effort in ReasoningEffort]
    return sorted(levels, key=order.index)


def thinking_on(settings: ModelSettings) -> bool:
    """True when the settings turn Anthropic thinking on (a budget, or an effort but "none")."""
    reasoning = settings.reasoning
    if reasoning is None:
        return False
    effort = reasoning.effort
    return reasoning.budget_tokens is not None or (
        effort is not None and effort is not ReasoningEffort.NONE
    )


def _budget(
    provider: str, model: str, budget: int, max_tokens: int, profile: ModelProfile
) -> JsonObject:
    if not profile.thinking_budget:
        rule = "None (the model thinks by effort level: set ReasoningSettings.effort)"
        raise refuse(provider, model, "budget_tokens", budget, rule)
    if not MIN_THINKING_BUDGET <= budget < max_tokens:
        rule = (
            f"at least {MIN_THINKING_BUDGET} and below max_tokens ({max_tokens}; raise it with"
            " ModelSettings.max_output_tokens or AnthropicModel(max_tokens=))"
        )
        raise refuse(provider, model, "budget_tokens", budget, rule)
    return {"type": "enabled", "budget_tokens": budget}


def anthropic_reasoning(
    provider: str, model: str, settings: ModelSettings, profile: ModelProfile, max_tokens: int
) -> JsonObject:
    """`thinking` and `output_config.effort` for the settings' reasoning (empty without one)."""
    reasoning = settings.reasoning
    if reasoning is None:
        return {}
    if reasoning.effort is ReasoningEffort.NONE:
        return _anthropic_off(provider, model, reasoning, profile)
    body: JsonObject = {}
    thinking: JsonObject | None = None
    if reasoning.budget_tokens is not None:
        thinking = _budget(provider, model, reasoning.budget_tokens, max_tokens, profile)
    if reasoning.effort is not None:
        check_effort(provider, model, reasoning.effort, profile)
        body["output_config"] = {"effort": reasoning.effort.value}
        if thinking is None and profile.adaptive_thinking:
            thinking = {"type": "adaptive"}
    if reasoning.summary is not None:
        if thinking is None:
            rule = "None unless thinking is on (set budget_tokens, or an effort on a model of"
            raise refuse(
                provider, model, "summary", reasoning.summary, f"{rule} adaptive thinking)"
            )
        thinking["display"] = "summarized"
    if thinking is not None:
        body["thinking"] = thinking
    return body


def _anthropic_off(
    provider: str, model: str, reasoning: ReasoningSettings, profile: ModelProfile
) -> JsonObject:
    """The effort "none": thinking off; a budget or a summary beside it contradicts it."""
    for field, value in (
        ("budget_tokens", reasoning.budget_tokens),
        ("summary", reasoning.summary),
    ):
        if value is not None:
            raise refuse(provider, model, field, value, 'None when the effort is "none"')
    check_effort(provider, model, ReasoningEffort.NONE, profile)
    return {"thinking": {"type": "disabled"}} if profile.thinking else {}


def openai_reasoning(
    provider: str, model: str, settings: ModelSettings, profile: ModelProfile
) -> JsonObject:
    """`reasoning_effort` for the settings' reasoning; a budget or a summary is refused (Chat
    Completions has no field for them: the Responses API takes a summary)."""
    reasoning = settings.reasoning
    if reasoning is None:
        return {}
    if reasoning.budget_tokens is not None:
        rule = "None (Chat Completions takes no thinking budget: set ReasoningSettings.effort)"
        raise refuse(provider, model, "budget_tokens", reasoning.budget_tokens, rule)
    if reasoning.summary is not None:
        rule = "None (Chat Completions returns no reasoning summary: use the Responses API)"
        raise refuse(provider, model, "summary", reasoning.summary, rule)
    if reasoning.effort is None:
        return {}
    check_effort(provider, model, reasoning.effort, profile)
    return {"reasoning_effort": reasoning.effort.value}

"""`ModelSettings.reasoning` in each protocol's form, and refused before anything is sent where
the model's profile says it is not taken (ADR-0027): one test per mapping and per refusal. Each
refusal is a `ProviderConfigurationError` naming the setting, the value and the model."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from reactloop._core._messages import ModelRequest, UserMessage
from reactloop._core._settings import (
    ModelSettings,
    ReasoningEffort,
    ReasoningSettings,
    ResponseFormat,
    ResponseFormatKind,
)
from reactloop._errors import ConfigurationError, ProviderConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel, OpenAIModel
from reactloop._providers._anthropic import encode_request as anthropic_body
from reactloop._providers._openai import encode_request as openai_body
from reactloop._providers._profiles import ModelProfile, model_profile
from tests.providers.conftest import API_KEY
from tests.providers.render import anthropic_json
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


def ask(
    effort: str | None = None,
    budget: int | None = None,
    summary: str | None = None,
    **settings: Any,
) -> ModelRequest:
    reasoning = ReasoningSettings(effort=effort, budget_tokens=budget, summary=summary)
    return ModelRequest(
        (UserMessage("Hi"),), settings=ModelSettings(reasoning=reasoning, **settings)
    )


def claude(model: str, request: ModelRequest, **options: Any) -> dict[str, Any]:
    return anthropic_body(request, model, stream=False, **options)


def refused(error: pytest.ExceptionInfo[ProviderConfigurationError], field: str, value: object,
            model: str) -> None:  # fmt: skip
    assert error.value.option == f"ModelSettings.reasoning.{field}"
    assert error.value.value == value
    assert f"ModelSettings.reasoning.{field}" in str(error.value)
    assert repr(model) in str(error.value)


# -- Anthropic -------------------------------------------------------------------------------------


def test_a_budget_is_extended_thinking() -> None:
    body = claude("claude-sonnet-4-5", ask(budget=2048))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "output_config" not in body


@pytest.mark.parametrize("budget", [1023, 4096, 5000])
def test_a_budget_below_1024_or_not_below_max_tokens_is_refused(budget: int) -> None:
    with pytest.raises(
        ProviderConfigurationError, match=r"below max_tokens \(4096; raise it"
    ) as caught:
        claude("claude-sonnet-4-5", ask(budget=budget))
    refused(caught, "budget_tokens", budget, "claude-sonnet-4-5")


def test_a_budget_is_checked_against_the_output_limit_of_the_request() -> None:
    body = claude("claude-sonnet-4-5", ask(budget=6000, max_output_tokens=8000))
    assert (body["max_tokens"], body["thinking"]["budget_tokens"]) == (8000, 6000)


def test_a_budget_is_refused_for_a_model_of_adaptive_thinking_only() -> None:
    with pytest.raises(ProviderConfigurationError, match="thinks by effort level") as caught:
        claude("claude-opus-5", ask(budget=2048))
    refused(caught, "budget_tokens", 2048, "claude-opus-5")


def test_an_effort_is_adaptive_thinking_on_an_adaptive_model() -> None:
    body = claude("claude-opus-5", ask(effort="high"))
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "high"}


def test_a_summary_asks_for_summarized_thinking() -> None:
    body = claude("claude-opus-5", ask(effort="xhigh", summary="auto"))
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}


def test_a_summary_without_thinking_is_refused() -> None:
    with pytest.raises(ProviderConfigurationError) as caught:
        claude("claude-sonnet-4-5", ask(summary="auto"))
    refused(caught, "summary", "auto", "claude-sonnet-4-5")


def test_an_effort_joins_the_structured_output_format() -> None:
    fmt = ResponseFormat(ResponseFormatKind.JSON_SCHEMA, "x", SCHEMA, True)
    body = claude("claude-opus-5", ask(effort="low", response_format=fmt))
    assert body["output_config"] == {
        "format": {"type": "json_schema", "schema": SCHEMA},
        "effort": "low",
    }


def test_an_effort_beside_a_budget_on_opus_4_5() -> None:
    body = claude("claude-opus-4-5", ask(effort="medium", budget=2048))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["output_config"] == {"effort": "medium"}


def test_effort_none_turns_thinking_off_on_a_thinking_model() -> None:
    assert claude("claude-opus-5", ask(effort="none"))["thinking"] == {"type": "disabled"}


def test_effort_none_sends_nothing_to_a_model_that_does_not_think_by_default() -> None:
    body = claude("claude-sonnet-4-5", ask(effort="none"))
    assert "thinking" not in body
    assert "output_config" not in body


def test_a_budget_beside_effort_none_is_refused() -> None:
    with pytest.raises(ProviderConfigurationError, match='effort is "none"') as caught:
        claude("claude-opus-4-5", ask(effort="none", budget=2048))
    refused(caught, "budget_tokens", 2048, "claude-opus-4-5")


@pytest.mark.parametrize(("model", "effort"), [("claude-sonnet-4-5", "high"),
                                               ("claude-opus-5", "minimal")])  # fmt: skip
def test_an_effort_the_model_does_not_take_is_refused(model: str, effort: str) -> None:
    with pytest.raises(ProviderConfigurationError, match="levels the model takes") as caught:
        claude(model, ask(effort=effort))
    refused(caught, "effort", effort, model)


def test_a_model_of_no_known_family_gets_the_effort_as_set() -> None:
    body = claude("acme-llm", ask(effort="max"))
    assert body["output_config"] == {"effort": "max"}
    assert "thinking" not in body


def test_a_profile_override_takes_an_effort_the_family_refuses() -> None:
    profile = attrs.evolve(model_profile("claude-sonnet-4-5"), reasoning_efforts={"high"},
                           adaptive_thinking=True)  # fmt: skip
    body = claude("claude-sonnet-4-5", ask(effort="high"), profile=profile)
    assert body["thinking"] == {"type": "adaptive"}


SAMPLING_ON = attrs.evolve(model_profile("claude-sonnet-4-5"), sampling=True)
"""A user's override for a Claude model that still takes sampling parameters (none by default:
the Messages API defines none); thinking still refuses them."""


@pytest.mark.parametrize(
    ("settings", "option"),
    [({"temperature": 0.2}, "ModelSettings.temperature"), ({"top_p": 0.5}, "ModelSettings.top_p")],
)
def test_sampling_is_refused_with_thinking(settings: dict[str, Any], option: str) -> None:
    with pytest.raises(ProviderConfigurationError, match="while thinking is on") as caught:
        claude("claude-sonnet-4-5", ask(budget=2048, **settings), profile=SAMPLING_ON)
    assert caught.value.option == option
    assert "claude-sonnet-4-5" in str(caught.value)


def test_temperature_1_and_top_p_from_0_95_are_taken_with_thinking() -> None:
    body = claude(
        "claude-sonnet-4-5", ask(budget=2048, temperature=1.0, top_p=0.95), profile=SAMPLING_ON
    )
    assert (body["temperature"], body["top_p"]) == (1.0, 0.95)


@pytest.mark.parametrize(
    ("model", "settings", "forced"),
    [("claude-sonnet-4-5", ModelSettings(), True),
     ("claude-sonnet-4-5", ask(budget=2048).settings, False),
     ("claude-sonnet-4-5", ask(effort="none").settings, True),
     ("claude-opus-5", ModelSettings(), False)],
)  # fmt: skip
def test_a_forced_tool_choice_is_taken_only_without_thinking(
    model: str, settings: ModelSettings, forced: bool
) -> None:
    claude = AnthropicModel(model, api_key=API_KEY, base_url="http://127.0.0.1:9")
    assert claude.takes_forced_tool_choice(settings) is forced


async def test_anthropic_sends_nothing_when_the_reasoning_is_refused(server: WireServer) -> None:
    server.reply_with(json_reply(anthropic_json("Hi")))
    async with AnthropicModel("claude-opus-5", api_key=API_KEY, base_url=server.url) as model:
        with pytest.raises(ProviderConfigurationError):
            await model.request(ask(budget=2048))
        await model.request(ask(effort="high"))
    assert len(server.requests) == 1
    assert server.requests[0].json()["output_config"] == {"effort": "high"}


# -- OpenAI Chat Completions -----------------------------------------------------------------------


def chat(model: str, request: ModelRequest, **options: Any) -> dict[str, Any]:
    return openai_body(request, model, stream=False, **options)


def test_an_effort_is_reasoning_effort() -> None:
    assert chat("gpt-5", ask(effort="minimal"))["reasoning_effort"] == "minimal"


def test_max_is_refused_for_openai_reasoning_models() -> None:
    with pytest.raises(ProviderConfigurationError, match="levels the model takes") as caught:
        chat("gpt-5", ask(effort="max"))
    refused(caught, "effort", "max", "gpt-5")


def test_an_effort_is_refused_for_a_model_that_does_not_reason() -> None:
    with pytest.raises(
        ProviderConfigurationError, match="must be None: there are no levels"
    ) as caught:
        chat("gpt-4o", ask(effort="low"))
    refused(caught, "effort", "low", "gpt-4o")


def test_a_compatible_server_gets_the_effort_as_set() -> None:
    body = chat("deepseek-reasoner", ask(effort="max"), provider="openai-compatible")
    assert body["reasoning_effort"] == "max"


def test_a_budget_is_refused_on_chat_completions() -> None:
    with pytest.raises(ProviderConfigurationError, match="no thinking budget") as caught:
        chat("gpt-5", ask(budget=2048))
    refused(caught, "budget_tokens", 2048, "gpt-5")


def test_a_summary_is_refused_on_chat_completions() -> None:
    with pytest.raises(ProviderConfigurationError, match="Responses API") as caught:
        chat("gpt-5", ask(effort="low", summary="auto"))
    refused(caught, "summary", "auto", "gpt-5")


async def test_openai_sends_nothing_when_the_reasoning_is_refused(
    server: WireServer, openai: OpenAIModel
) -> None:
    with pytest.raises(ProviderConfigurationError):
        await openai.request(ask(effort="high"))  # gpt-4o takes no effort
    assert server.requests == []


# -- profiles --------------------------------------------------------------------------------------


def test_a_profile_refuses_an_unknown_effort_level() -> None:
    with pytest.raises(ConfigurationError, match=r"ModelProfile\.reasoning_efforts"):
        ModelProfile(reasoning_efforts={"turbo"})


def test_a_profile_takes_the_levels_as_a_set() -> None:
    profile = ModelProfile(reasoning_efforts=["low", "high"])
    assert profile.reasoning_efforts == frozenset({"low", "high"})
    assert ModelProfile().reasoning_efforts is None


def test_every_effort_level_is_known_to_the_profiles() -> None:
    levels = {effort.value for effort in ReasoningEffort}
    assert model_profile("claude-opus-5").reasoning_efforts == frozenset(levels - {"minimal"})


@pytest.mark.parametrize(
    ("model", "reasoning", "field"),
    [("claude-opus-5", ReasoningSettings(budget_tokens=2048), "budget_tokens"),
     ("claude-sonnet-4-5", ReasoningSettings(effort="xhigh"), "effort")],
)  # fmt: skip
def test_a_loop_refuses_a_reasoning_setting_its_model_does_not_take_when_built(
    model: str, reasoning: ReasoningSettings, field: str
) -> None:
    claude = AnthropicModel(model, api_key=API_KEY, base_url="http://127.0.0.1:9")
    with pytest.raises(ProviderConfigurationError) as caught:
        ReActLoop(claude, settings=ModelSettings(max_output_tokens=8000, reasoning=reasoning))
    assert caught.value.option == f"ModelSettings.reasoning.{field}" and model in str(caught.value)

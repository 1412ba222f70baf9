"""A fallback model's calls are priced as the model that answered each; a cost budget checks the
price of every model of the list when the loop is built."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reactloop import ReActLoop, RetryPolicy, Usage
from reactloop.costs import CostOptions, ModelPrice, Prices
from reactloop.errors import ConfigurationError, ProviderUnavailableError
from reactloop.providers import FallbackModel
from reactloop.stopping import CostBudget
from reactloop.testing import ScriptedModel, reply
from tests.costs.models import NamedModel

PRICES = Prices({"claude-sonnet-4-5": ModelPrice(3, 15), "gpt-4o": ModelPrice(Decimal("2.5"), 10)})
COST = CostOptions(prices=PRICES)
DOWN = ProviderUnavailableError("anthropic is overloaded", provider="anthropic", status=529)


def pair(first: list[object], second: list[object]) -> FallbackModel:
    return FallbackModel([
        NamedModel(first, "anthropic", "claude-sonnet-4-5"),  # type: ignore[arg-type]
        NamedModel(second, "openai", "gpt-4o"),  # type: ignore[arg-type]
    ])  # fmt: skip


@pytest.mark.anyio
async def test_a_call_is_priced_as_the_fallback_that_answered_it() -> None:
    model = pair([DOWN], [reply("hi", usage=Usage(1_000_000, 0))])
    loop = ReActLoop(model, cost=COST, retry=RetryPolicy.never())
    result = await loop.run("go")
    assert result.usage.cost == Decimal("2.5")  # gpt-4o's input price, not Sonnet's


@pytest.mark.anyio
async def test_the_first_models_answer_is_priced_as_the_first() -> None:
    model = pair([reply("hi", usage=Usage(1_000_000, 0))], [])
    result = await ReActLoop(model, cost=COST).run("go")
    assert result.usage.cost == Decimal(3)


def test_a_budget_with_a_fallback_of_unknown_price_is_refused_when_built() -> None:
    model = FallbackModel([
        NamedModel([], "anthropic", "claude-sonnet-4-5"),
        NamedModel([], "openai", "o3"),
    ])  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"openai model 'o3' has no price"):
        ReActLoop(model, stop_when=CostBudget(1), cost=COST)


def test_a_budget_with_a_fallback_naming_no_provider_is_refused_when_built() -> None:
    model = FallbackModel([NamedModel([], "openai", "gpt-4o"), ScriptedModel([])])
    with pytest.raises(ConfigurationError, match="names no provider and model"):
        ReActLoop(model, stop_when=CostBudget(1), cost=COST)


def test_a_budget_with_every_fallback_priced_builds() -> None:
    loop = ReActLoop(pair([], []), stop_when=CostBudget(1), cost=COST)
    assert loop.config.pricing is not None and loop.config.pricing.required

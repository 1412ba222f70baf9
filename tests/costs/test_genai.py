"""The adapter over genai-prices, the real package (the `prices` extra)."""

from __future__ import annotations

import sys
from decimal import Decimal

import pytest

from reactloop import Usage
from reactloop.costs import GenAIPrices, ModelPrice, PriceTable, cost_of
from reactloop.errors import ConfigurationError


def test_claude_sonnet_4_5_has_its_input_output_and_cache_prices() -> None:
    price = GenAIPrices().price("anthropic", "claude-sonnet-4-5")
    assert price is not None
    flat = (price.input, price.output, price.cache_read, price.cache_write, price.cache_write_1h)
    assert flat == (Decimal(3), Decimal(15), Decimal("0.3"), Decimal("3.75"), Decimal(6))


def test_claude_sonnet_4_5_costs_double_input_past_200k_tokens() -> None:
    price = GenAIPrices().price("anthropic", "claude-sonnet-4-5-20250929")
    assert price is not None and price.long_context is not None
    threshold, tier = price.long_context
    assert (threshold, tier.input, tier.output) == (200_000, Decimal(6), Decimal("22.5"))


def test_gpt_4o_has_its_prices_and_reads_cache_at_half() -> None:
    price = GenAIPrices().price("openai", "gpt-4o")
    assert price == ModelPrice(Decimal("2.5"), Decimal(10), cache_read=Decimal("1.25"))
    assert cost_of(Usage(2_000, 100, cache_read_tokens=1_000), price) == Decimal("0.00475")


def test_the_responses_provider_name_is_read_as_openai() -> None:
    assert GenAIPrices().price("openai-responses", "gpt-4o") == GenAIPrices().price(
        "openai", "gpt-4o"
    )


@pytest.mark.parametrize(("provider", "model"), [("openai", "no-such-model"), ("nobody", "x")])
def test_an_unknown_model_or_provider_has_no_price(provider: str, model: str) -> None:
    assert GenAIPrices().price(provider, model) is None


def test_the_adapter_is_a_price_table() -> None:
    assert isinstance(GenAIPrices(), PriceTable)


def test_without_the_package_the_error_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "genai_prices.data_snapshot", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'reactloop\[prices\]'"):
        GenAIPrices()

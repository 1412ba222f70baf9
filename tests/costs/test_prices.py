"""Prices and the arithmetic from usage to cost: each kind of token at its own price, unknown
costs kept unknown through sums."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reactloop import Usage
from reactloop.costs import ModelPrice, Prices, PriceTable, cost_of
from reactloop.errors import ConfigurationError

SONNET = ModelPrice(
    input=3, output=15, cache_read=Decimal("0.3"), cache_write=Decimal("3.75"), cache_write_1h=6
)


def test_plain_input_and_output_are_priced_per_million_tokens() -> None:
    assert cost_of(Usage(1_000_000, 100_000), SONNET) == Decimal("4.5")


def test_cache_reads_and_writes_are_priced_at_their_own_prices() -> None:
    usage = Usage(
        input_tokens=10_000, output_tokens=1_000, cache_read_tokens=6_000,
        cache_write_tokens=3_000, cache_write_1h_tokens=1_000,
    )  # fmt: skip
    # 1,000 uncached at 3, 6,000 read at 0.3, 2,000 5-minute writes at 3.75, 1,000 1-hour writes
    # at 6, 1,000 output at 15 (dollars per million)
    expected = 1_000 * 3 + 6_000 * Decimal("0.3") + 2_000 * Decimal("3.75") + 6_000 + 15_000
    assert cost_of(usage, SONNET) == expected / 1_000_000


def test_cache_prices_not_given_fall_back_to_the_input_and_write_prices() -> None:
    price = ModelPrice(input=2, output=8, cache_write=4)
    usage = Usage(3_000_000, 0, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000,
                  cache_write_1h_tokens=1_000_000)  # fmt: skip
    assert cost_of(usage, price) == Decimal(2 + 2 + 4)


def test_a_call_past_the_long_context_threshold_is_priced_whole_at_the_tier() -> None:
    price = ModelPrice(3, 15, long_context=(200_000, ModelPrice(6, Decimal("22.5"))))
    assert cost_of(Usage(200_000, 0), price) == Decimal("0.6")
    assert cost_of(Usage(200_001, 1_000), price) == Decimal("1.222506")


def test_prices_are_decimals_read_from_a_float_s_shortest_text() -> None:
    assert ModelPrice(0.1, 0.3).input == Decimal("0.1")


@pytest.mark.parametrize("value", [-1, float("nan"), "3", True])
def test_a_price_that_is_not_a_number_at_least_zero_is_refused(value: object) -> None:
    with pytest.raises(ConfigurationError, match=r"ModelPrice\.input"):
        ModelPrice(value, 1)  # type: ignore[arg-type]


def test_own_prices_match_the_exact_id_then_the_longest_prefix() -> None:
    mini, full = ModelPrice(Decimal("0.15"), Decimal("0.6")), ModelPrice(Decimal("2.5"), 10)
    table = Prices({"gpt-4o": full, "gpt-4o-mini": mini})
    assert isinstance(table, PriceTable)
    assert table.price("openai", "gpt-4o") is full
    assert table.price("openai", "gpt-4o-mini-2024-07-18") is mini
    assert table.price("openai", "gpt-4o-2024-08-06") is full
    assert table.price("openai", "o3") is None


def test_an_own_table_entry_that_is_not_a_model_price_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"Prices\.table\['gpt-4o'\]"):
        Prices({"gpt-4o": 2.5})  # type: ignore[dict-item]


def test_known_costs_add_up() -> None:
    total = Usage(10, 1, cost=Decimal("0.01")) + Usage(20, 2, cost=Decimal("0.02"))
    assert total.cost == Decimal("0.03")


def test_an_unknown_cost_makes_the_sum_unknown_not_smaller() -> None:
    known, unknown = Usage(10, 1, cost=Decimal("0.01")), Usage(20, 2)
    assert (known + unknown).cost is None
    assert (unknown + known).cost is None
    assert (known + unknown + known).cost is None


def test_a_usage_without_tokens_adds_nothing_to_a_known_cost() -> None:
    assert (Usage() + Usage(10, 1, cost=Decimal("0.01"))).cost == Decimal("0.01")
    assert (Usage(10, 1, cost=Decimal("0.01")) + Usage()).cost == Decimal("0.01")


def test_without_prices_usage_has_no_cost() -> None:
    assert (Usage(10, 1) + Usage(3, 4)).cost is None

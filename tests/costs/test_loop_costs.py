"""A loop with a price table puts the cost on each step and the run; a cost budget ends a run
with a final answer, and is refused when the loop is built if a model's price is unknown."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from reactloop import ReActLoop, StopReason, Usage
from reactloop._durable._codec import encode
from reactloop.costs import CostOptions, GenAIPrices, ModelPrice, Prices
from reactloop.errors import ConfigurationError
from reactloop.stopping import CostBudget
from reactloop.stores import SqliteStore
from reactloop.testing import FakeTool, ScriptedModel, call, reply
from tests.costs.models import ChoosingModel, NamedModel

PRICES = Prices({"claude-sonnet-4-5": ModelPrice(3, 15, cache_read=Decimal("0.3"))})
COST = CostOptions(prices=PRICES)


def sonnet(*script: object) -> NamedModel:
    return NamedModel(script, "anthropic", "claude-sonnet-4-5")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_each_step_and_the_run_carry_what_they_cost() -> None:
    model = sonnet(
        reply("", call("t"), usage=Usage(100_000, 1_000, cache_read_tokens=50_000)),
        reply("done", usage=Usage(200_000, 2_000)),
    )
    result = await ReActLoop(model, tools=[FakeTool("t")], cost=COST).run("go")
    first, second = (step.usage.cost for step in result.steps)
    assert (first, second) == (Decimal("0.18"), Decimal("0.63"))  # 50k*3 + 50k*0.3 + 1k*15
    assert result.usage.cost == Decimal("0.81")


@pytest.mark.anyio
async def test_the_real_price_database_prices_a_run() -> None:
    model = NamedModel([reply("hi", usage=Usage(1_000_000, 0))], "openai", "gpt-4o")
    result = await ReActLoop(model, cost=CostOptions(prices=GenAIPrices())).run("go")
    assert result.usage.cost == Decimal("2.5")


@pytest.mark.anyio
async def test_without_a_price_table_the_cost_is_unknown() -> None:
    result = await ReActLoop(sonnet(reply("hi", usage=Usage(10, 10)))).run("go")
    assert result.usage.cost is None and result.steps[0].usage.cost is None


@pytest.mark.anyio
async def test_a_model_the_table_does_not_know_costs_unknown_never_zero() -> None:
    model = NamedModel([reply("hi", usage=Usage(10, 10))], "openai", "o3")
    result = await ReActLoop(model, cost=COST).run("go")
    assert result.usage.cost is None


@pytest.mark.anyio
async def test_a_spent_cost_budget_makes_one_final_call_without_tools() -> None:
    model = sonnet(reply("", call("t"), usage=Usage(100_000, 0)), reply("summary"))
    loop = ReActLoop(model, tools=[FakeTool("t")], stop_when=CostBudget(0.25), cost=COST)
    result = await loop.run("go")
    assert (result.stop_reason, result.output) == (StopReason.COST_BUDGET, "summary")
    assert result.stop_detail == "cost_budget=0.25 (spent 0.300000)"
    assert model.requests[-1].tools == ()


@pytest.mark.anyio
async def test_a_run_under_its_cost_budget_is_not_ended_by_it() -> None:
    model = sonnet(reply("", call("t"), usage=Usage(1_000, 0)), reply("done"))
    loop = ReActLoop(model, tools=[FakeTool("t")], stop_when=CostBudget(1), cost=COST)
    result = await loop.run("go")
    assert (result.stop_reason, result.output) == (StopReason.COMPLETED, "done")


def test_a_cost_budget_without_a_price_table_is_refused_when_the_loop_is_built() -> None:
    with pytest.raises(ConfigurationError, match=r"cost=CostOptions\(prices=\.\.\.\)"):
        ReActLoop(sonnet("hi"), stop_when=CostBudget(1))


def test_a_cost_budget_with_a_model_of_unknown_price_is_refused_when_built() -> None:
    model = NamedModel(["hi"], "openai", "o3")
    with pytest.raises(ConfigurationError, match=r"openai model 'o3' has no price"):
        ReActLoop(model, stop_when=CostBudget(1), cost=COST)


def test_a_cost_budget_with_a_model_naming_no_provider_is_refused_when_built() -> None:
    with pytest.raises(ConfigurationError, match="names no provider and model"):
        ReActLoop(ScriptedModel(["hi"]), stop_when=CostBudget(1), cost=COST)


def test_a_model_listing_its_choices_is_checked_for_every_one_when_built() -> None:
    model = ChoosingModel(["hi"], [("anthropic", "claude-sonnet-4-5"), ("openai", "o3")])
    with pytest.raises(ConfigurationError, match=r"openai model 'o3' has no price"):
        ReActLoop(model, stop_when=CostBudget(1), cost=COST)


@pytest.mark.anyio
async def test_the_call_is_priced_as_the_model_that_answered_it() -> None:
    table = Prices({"a": ModelPrice(1, 0), "b": ModelPrice(2, 0)})
    model = ChoosingModel(
        [reply("", call("t"), usage=Usage(1_000_000, 0), model="a"),
         reply("done", usage=Usage(1_000_000, 0), model="b")],
        [("x", "a"), ("y", "b")],
    )  # fmt: skip
    loop = ReActLoop(model, tools=[FakeTool("t")], cost=CostOptions(prices=table))
    result = await loop.run("go")
    assert [step.usage.cost for step in result.steps] == [Decimal(1), Decimal(2)]


@pytest.mark.anyio
async def test_an_answer_from_a_model_without_price_under_a_budget_is_an_error() -> None:
    table = Prices({"a": ModelPrice(1, 0)})
    model = ChoosingModel([reply("hi", usage=Usage(10, 0), model="c")], [("x", "a")])
    loop = ReActLoop(model, stop_when=CostBudget(1), cost=CostOptions(prices=table), strict=True)
    with pytest.raises(ConfigurationError, match="CostBudget needs the price"):
        await loop.run("go")


@pytest.mark.parametrize("limit", [0, -1, float("inf"), "1"])
def test_a_cost_budget_limit_must_be_a_positive_number(limit: object) -> None:
    with pytest.raises(ConfigurationError, match=r"CostBudget\.limit"):
        CostBudget(limit)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_the_journal_keeps_the_cost_and_reads_it_back(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    model = sonnet(reply("hi", usage=Usage(1_000, 100)))
    result = await ReActLoop(model, cost=COST, store=store).run("go")
    stored = await store.load(result.run_id)
    assert stored.usage.cost == result.usage.cost == Decimal("0.0045")
    assert stored.steps[0].usage.cost == Decimal("0.0045")


@pytest.mark.anyio
async def test_a_run_without_prices_stores_its_records_without_a_cost(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    model = sonnet(reply("", call("t"), usage=Usage(1_000, 100)), reply("hi", usage=Usage(5, 1)))
    result = await ReActLoop(model, tools=[FakeTool("t")], store=store).run("go")
    stored = await store.load(result.run_id)
    encoded = [encode(record) for record in stored.records]
    assert any(b'"input_tokens":1000' in data for data in encoded)  # usage is stored ...
    assert not any(b'"cost"' in data for data in encoded)  # ... in the layout it had before


@pytest.mark.anyio
async def test_a_stored_cost_is_exact_decimal_text(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    model = sonnet(reply("hi", usage=Usage(1_000, 100)))
    result = await ReActLoop(model, cost=COST, store=store).run("go")
    encoded = [encode(record) for record in (await store.load(result.run_id)).records]
    assert any(b'"cost":"0.0045"' in data for data in encoded)

"""Cost on the command line and the trace page: a figure in the run's last line when known,
`cost unknown` otherwise; each step's cost and the total on the page."""

from __future__ import annotations

import importlib
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest

from reactloop import ReActLoop, RunResult, Usage
from reactloop._cli._lines import cost_text, result_lines
from reactloop._cli._trace import stored_trace, usage_of, write_trace
from reactloop._durable._stores import SqliteStore
from reactloop.costs import CostOptions, ModelPrice, Prices
from reactloop.testing import FakeTool, call, reply
from tests.cli.test_cli_trace import CHROMIUM, ENABLE, _browser_missing
from tests.costs.models import NamedModel

COST = CostOptions(prices=Prices({"claude-sonnet-4-5": ModelPrice(3, 15)}))


def two_steps() -> NamedModel:
    return NamedModel(
        [reply("", call("t"), usage=Usage(1_000, 100)), reply("done", usage=Usage(2_000, 0))],
        "anthropic",
        "claude-sonnet-4-5",
    )


def run(store: SqliteStore | None = None, *, priced: bool = True) -> RunResult[Any]:
    options: dict[str, Any] = {"cost": COST} if priced else {}
    loop = ReActLoop(two_steps(), tools=[FakeTool("t")], store=store, **options)
    return anyio.run(loop.run, "go")


@pytest.mark.parametrize(
    ("cost", "shown"),
    [
        (None, "cost unknown"),
        (Decimal("0.0045"), "$0.0045"),
        (Decimal("4.5"), "$4.50"),
        (Decimal("1234.5"), "$1,234.50"),
        (Decimal("0.123456789"), "$0.123457"),
    ],
)
def test_a_cost_is_shown_in_dollars_or_as_unknown(cost: Decimal | None, shown: str) -> None:
    assert cost_text(cost) == shown


def test_a_priced_runs_last_line_shows_its_cost() -> None:
    last = result_lines(run(), 1.0)[-1].text
    assert last == "2 steps, 3000 in + 100 out = 3100 tokens, $0.0105, 1.00 s"


def test_a_run_without_prices_says_its_cost_is_unknown() -> None:
    last = result_lines(run(priced=False), 1.0)[-1].text
    assert last == "2 steps, 3000 in + 100 out = 3100 tokens, cost unknown, 1.00 s"


def test_the_page_data_has_each_steps_cost_and_the_total(tmp_path: Path) -> None:
    async def stored() -> dict[str, Any]:
        store = SqliteStore(tmp_path / "runs.db")
        try:
            loop = ReActLoop(two_steps(), tools=[FakeTool("t")], store=store, cost=COST)
            result = await loop.run("go")
            return stored_trace(await store.load(result.run_id))
        finally:
            await store.aclose()

    trace = anyio.run(stored)
    assert [step["usage"]["cost"] for step in trace["steps"]] == ["0.0045", "0.006"]
    assert trace["run"]["usage"]["cost"] == "0.0105"


def test_an_unknown_cost_is_left_out_of_the_page_data() -> None:
    assert "cost" not in usage_of(Usage(11, 7))


def test_the_page_shows_the_total_and_each_steps_cost(tmp_path: Path) -> None:
    missing = _browser_missing()
    if missing is not None:
        if os.environ.get("REACTLOOP_CI") == "1":
            pytest.fail(f"the trace page test must run in CI: {missing}")
        pytest.skip(f"{missing}: {ENABLE} to run the trace page test")
    html = tmp_path / "priced.html"

    async def page_of() -> None:
        store = SqliteStore(tmp_path / "runs.db")
        try:
            loop = ReActLoop(two_steps(), tools=[FakeTool("t")], store=store, cost=COST)
            result = await loop.run("go")
            html.write_text(write_trace(stored_trace(await store.load(result.run_id))), "utf-8")
        finally:
            await store.aclose()

    anyio.run(page_of)
    sync_playwright = importlib.import_module("playwright.sync_api").sync_playwright
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page()
            page.goto(html.as_uri())
            page.wait_for_selector(".step")
            facts = page.locator("#facts").inner_text()
            assert "cost: $0.0105" in facts and "3100 tokens, $0.0105" in facts
            page.locator('.step[data-index="2"] .bar.model').click()
            assert "2000 tokens, $0.006" in page.locator("#details").inner_text()
        finally:
            browser.close()

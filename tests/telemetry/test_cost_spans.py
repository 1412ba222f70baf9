"""Cost on spans: the run's total on the agent span, each step's on its reasoning phase's span,
when the loop has prices; no cost attribute when it is unknown."""

from __future__ import annotations

import pytest

from reactloop import ReActLoop, Usage
from reactloop.costs import CostOptions, ModelPrice, Prices
from reactloop.testing import FakeTool, call, reply
from tests.costs.models import NamedModel
from tests.telemetry.test_otel import Traces

pytestmark = pytest.mark.anyio


@pytest.fixture
def traces() -> Traces:
    return Traces()


COST = CostOptions(prices=Prices({"claude-sonnet-4-5": ModelPrice(3, 15)}))


def two_steps() -> NamedModel:
    return NamedModel(
        [reply("", call("t"), usage=Usage(1_000_000, 0)), reply("done", usage=Usage(0, 100_000))],
        "anthropic",
        "claude-sonnet-4-5",
    )


async def test_the_agent_span_carries_the_runs_cost(traces: Traces) -> None:
    telemetry = traces.telemetry()
    await ReActLoop(two_steps(), tools=[FakeTool("t")], cost=COST, telemetry=telemetry).run("go")
    assert (traces.one("invoke_agent").attributes or {})["reactloop.usage.cost"] == 4.5


async def test_each_reasoning_phase_span_carries_its_steps_cost(traces: Traces) -> None:
    telemetry = traces.telemetry(phase_spans=True)
    await ReActLoop(two_steps(), tools=[FakeTool("t")], cost=COST, telemetry=telemetry).run("go")
    reasoning = [s for s in traces.named("phase ") if s.name == "phase ReasoningPhase"]
    assert [(s.attributes or {}).get("reactloop.usage.cost") for s in reasoning] == [3.0, 1.5]
    tools = [s for s in traces.named("phase ") if s.name == "phase ToolPhase"]
    assert all("reactloop.usage.cost" not in (s.attributes or {}) for s in tools)


async def test_an_unknown_cost_puts_no_cost_on_any_span(traces: Traces) -> None:
    telemetry = traces.telemetry(phase_spans=True)
    await ReActLoop(two_steps(), tools=[FakeTool("t")], telemetry=telemetry).run("go")
    assert all("reactloop.usage.cost" not in (s.attributes or {}) for s in traces.spans)

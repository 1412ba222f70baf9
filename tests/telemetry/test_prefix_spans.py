"""Cache breaks in traces: the run's span counts them, the reasoning phase's span says why."""

from __future__ import annotations

import attrs
import pytest

from reactloop import ReActLoop
from reactloop.phases import Run, StepPlan
from reactloop.testing import FakeTool, ScriptedModel, call, reply
from tests.telemetry.test_otel import Traces

pytestmark = pytest.mark.anyio


def evening_from_step_3(run: Run, plan: StepPlan) -> StepPlan:
    return attrs.evolve(plan, instructions="Evening." if run.state.iteration >= 3 else "Morning.")


async def test_the_run_span_counts_the_breaks_and_the_phase_span_names_them() -> None:
    traces = Traces()
    script = [reply("", call("t", n=n)) for n in range(4)] + [reply("done")]
    loop = ReActLoop(
        ScriptedModel(script),
        tools=[FakeTool("t")],
        prepare_step=evening_from_step_3,
        telemetry=traces.telemetry(phase_spans=True),
    )
    result = await loop.run("go")
    assert result.cache_breaks == 1
    assert (traces.one("invoke_agent").attributes or {})["reactloop.cache_breaks"] == 1
    marked = [
        ((s.attributes or {})["reactloop.step"], (s.attributes or {})[key])
        for s in traces.named("phase ")
        for key in ["reactloop.step.prefix_breaks"]
        if key in (s.attributes or {})
    ]
    assert marked == [(3, ("instructions",))]


async def test_a_run_without_breaks_carries_no_count() -> None:
    traces = Traces()
    loop = ReActLoop(ScriptedModel(["hi"]), telemetry=traces.telemetry())
    await loop.run("go")
    assert "reactloop.cache_breaks" not in (traces.one("invoke_agent").attributes or {})

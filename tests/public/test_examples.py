"""The shipped examples run: planning before the first step, reflection after tools, the demo."""

from __future__ import annotations

import pytest

from reactloop import ConfigurationError, ReActLoop, RunResult, StopReason, ToolMessage, Usage
from reactloop.events import TextStreamed
from reactloop.examples.approval import run_example as run_approval_example
from reactloop.examples.demo import PacedModel, build_loop, run_demo, scripted_model
from reactloop.examples.planning import PlanningPhase
from reactloop.examples.reflection import ReflectionPhase
from reactloop.phases import default_phases, default_start_phases
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio


async def test_planning_phase_puts_the_plan_in_the_instructions() -> None:
    model = ScriptedModel(["1. look 2. answer", "answer"])
    loop = ReActLoop(
        model, instructions="Base.", start_phases=[*default_start_phases(), PlanningPhase()]
    )
    result = await loop.run("q")
    assert result.output == "answer"
    assert model.requests[1].instructions == "Base.\n\nPlan:\n1. look 2. answer"
    assert model.requests[0].tools == ()


def assert_usage_adds_up(result: RunResult) -> None:
    in_steps = sum((step.usage for step in result.steps), Usage())
    assert in_steps + result.setup_usage == result.usage


async def test_planning_usage_is_counted_before_the_first_step() -> None:
    model = ScriptedModel([reply("1. look", usage=Usage(50, 10)), reply("a", usage=Usage(7, 3))])
    loop = ReActLoop(model, start_phases=[*default_start_phases(), PlanningPhase()])
    result = await loop.run("q")
    assert result.setup_usage == Usage(50, 10) and result.steps[0].usage == Usage(7, 3)
    assert_usage_adds_up(result)


async def test_reflection_asks_for_another_pass_after_failures() -> None:
    model = ScriptedModel([reply("", call("broken")), reply("", call("good")), "done"])
    tools = [FakeTool("broken", raises=RuntimeError("down")), FakeTool("good")]
    result = await ReActLoop(model, tools=tools, phases=[*default_phases(), ReflectionPhase()]).run(
        "q"
    )
    assert result.output == "done"
    assert "Reflection: every tool call failed (broken)" in str(model.requests[1].messages[-1])


async def test_reflection_stops_after_repeated_failures() -> None:
    model = ScriptedModel([reply("", call("broken")), reply("", call("broken"))])
    loop = ReActLoop(
        model,
        tools=[FakeTool("broken", raises=RuntimeError("down"))],
        phases=[*default_phases(), ReflectionPhase()],
    )
    result = await loop.run("q")
    assert result.stop_reason is StopReason.CONDITION
    assert "2 steps in a row" in result.stop_detail


async def test_demo_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    model = scripted_model()
    result = await run_demo(model, "Paris or Tokyo?")
    model.assert_complete()
    assert result.stop_reason is StopReason.COMPLETED
    printed = capsys.readouterr().out
    assert "phase ReflectionPhase" in printed and "ERR   get_exchange_rate" in printed
    assert_usage_adds_up(result)
    assert "total tokens: 750 (setup 150 + steps 600)" in printed


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("y", "booked a business seat to Lima"),
        ("premium", "booked a premium seat to Lima"),
        ("n", "the traveller said no"),
        ("", "the traveller said no"),
    ],
)
async def test_the_approval_example_applies_the_persons_answer(answer: str, expected: str) -> None:
    result = await run_approval_example(lambda prompt: answer)
    results = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert len(results) == 1 and expected in results[0].text
    assert result.output == "Here is what I could do."


async def test_the_paced_demo_waits_before_each_turn_and_word_on_the_clock_given() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # an injected clock: nothing waits for real
        waits.append(seconds)

    paced, plain = PacedModel(scripted_model(), 2.0, sleep), scripted_model()
    async with build_loop(paced) as loop, loop.stream("Paris or Tokyo?") as events:
        words = sum([isinstance(event, TextStreamed) async for event in events])
        result = await events.result()
    expected = await build_loop(plain).run("Paris or Tokyo?")
    assert result.output == expected.output and words > 5
    assert waits.count(2.0) == len(plain.requests) == 5  # one pause per model turn
    assert waits.count(0.2) == words  # and a tenth of it per streamed word


@pytest.mark.parametrize("pace", [-1, float("nan"), float("inf"), "1", True])
def test_a_pace_is_a_number_of_seconds(pace: object) -> None:
    with pytest.raises(ConfigurationError, match="pace must be"):
        PacedModel(scripted_model(), pace)  # type: ignore[arg-type]

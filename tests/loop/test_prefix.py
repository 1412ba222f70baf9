"""A 50-step run with trimming active: each request extends the previous one except at the steps
whose `prefix_breaks` say why, and those are the context window's chunk drops."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import attrs
import pytest

from reactloop import ContextWindow, ReActLoop
from reactloop.messages import Message
from reactloop.models import ModelResponse
from reactloop.phases import Run, StepPlan
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio

STEPS = 50


def script(steps: int = STEPS) -> list[ModelResponse]:
    """A tool call each step (distinct arguments, so no repetition cap), then an answer."""
    return [reply(f"looking {n}", call("lookup", n=n)) for n in range(steps - 1)] + [reply("done")]


def extends(later: Sequence[Message], earlier: Sequence[Message]) -> bool:
    return len(later) >= len(earlier) and all(a is b for a, b in zip(later, earlier, strict=False))


def lookup() -> FakeTool:
    return FakeTool("lookup", result="figure " * 60)


async def test_each_request_extends_the_last_except_at_the_counted_chunk_drops() -> None:
    model = ScriptedModel(script())
    window = ContextWindow(max_tokens=3_000, reserved_output=500, drop_to=0.6)
    result = await ReActLoop(
        model, tools=[lookup()], max_iterations=STEPS, context_window=window
    ).run("go")
    sent = [request.messages for request in model.requests]
    assert len(result.steps) == len(sent) == STEPS
    for before, after, step in zip(sent, sent[1:], result.steps[1:], strict=False):
        assert step.prefix_breaks == (() if extends(after, before) else ("trimmed",))
    shrank = sum(1 for before, after in itertools.pairwise(sent) if len(after) < len(before))
    assert result.cache_breaks == shrank >= 3
    assert result.steps[0].prefix_breaks == ()


async def test_trimming_afresh_breaks_the_prefix_at_nearly_every_step_once_over() -> None:
    model = ScriptedModel(script())
    window = ContextWindow(max_tokens=3_000, reserved_output=500, drop_to=1.0)
    chunked = ScriptedModel(script())
    loop = ReActLoop(
        chunked,
        tools=[lookup()],
        max_iterations=STEPS,
        context_window=attrs.evolve(window, drop_to=0.6),
    )
    afresh = await ReActLoop(
        model, tools=[lookup()], max_iterations=STEPS, context_window=window
    ).run("go")
    assert afresh.cache_breaks > 3 * (await loop.run("go")).cache_breaks


async def test_without_anything_that_changes_the_prefix_no_step_breaks_it() -> None:
    result = await ReActLoop(ScriptedModel(script()), tools=[lookup()], max_iterations=STEPS).run(
        "go"
    )
    assert len(result.steps) == STEPS and result.cache_breaks == 0


async def test_instructions_changed_by_prepare_step_on_one_step_count_one_break() -> None:
    def prepare(run: Run, plan: StepPlan) -> StepPlan:
        if run.state.iteration == 7:
            return attrs.evolve(plan, instructions="Be terse. It is now afternoon.")
        return plan

    model = ScriptedModel(script())
    loop = ReActLoop(
        model,
        tools=[lookup()],
        max_iterations=STEPS,
        instructions="Be terse.",
        prepare_step=prepare,
    )
    result = await loop.run("go")
    breaks = {step.index: step.prefix_breaks for step in result.steps if step.prefix_breaks}
    assert breaks == {7: ("instructions",), 8: ("instructions",)}
    assert result.cache_breaks == 2


async def test_instructions_that_change_once_and_stay_count_one_break() -> None:
    def prepare(run: Run, plan: StepPlan) -> StepPlan:
        late = run.state.iteration >= 7
        return attrs.evolve(plan, instructions="Evening." if late else "Morning.")

    result = await ReActLoop(
        ScriptedModel(script()), tools=[lookup()], max_iterations=STEPS, prepare_step=prepare
    ).run("go")
    assert [step.index for step in result.steps if step.prefix_breaks] == [7]
    assert result.cache_breaks == 1


async def test_messages_rewritten_by_prepare_step_are_a_messages_break() -> None:
    def prepare(run: Run, plan: StepPlan) -> StepPlan:
        if run.state.iteration == 5:  # drop the oldest step, keeping pairs: answer + result
            return attrs.evolve(plan, messages=plan.messages[:1] + plan.messages[3:])
        return plan

    result = await ReActLoop(
        ScriptedModel(script(8)), tools=[lookup()], max_iterations=STEPS, prepare_step=prepare
    ).run("go")
    breaks = {step.index: step.prefix_breaks for step in result.steps if step.prefix_breaks}
    assert breaks == {5: ("messages",), 6: ("messages",)}

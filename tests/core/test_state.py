"""RunState is plain data: attrs values, containers, enums and primitives; nothing live inside."""

from __future__ import annotations

import enum
from typing import Any

import attrs
import pytest

from reactloop import ReActLoop, Usage, UserMessage
from reactloop._loop._lifecycle import start_run
from reactloop.phases import Proceed, Run, RunState
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio

PRIMITIVES = (str, int, float, bool, type(None), enum.Enum)


def assert_plain(value: Any, path: str = "state") -> None:
    if isinstance(value, PRIMITIVES):
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            assert_plain(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            assert_plain(key, f"{path} key")
            assert_plain(item, f"{path}[{key!r}]")
    elif attrs.has(type(value)):
        for field in attrs.fields(type(value)):
            assert_plain(getattr(value, field.name), f"{path}.{field.name}")
    else:
        raise AssertionError(f"{path} holds a {type(value).__name__}, which is not plain data")


async def test_state_after_a_run_is_plain_data() -> None:
    model = ScriptedModel([reply("", call("t", q=1), call("t", q=2)), "done"])
    loop = ReActLoop(model, tools=[FakeTool("t")], instructions="x")
    run = await start_run(loop.config, "go", history=[UserMessage("before")])
    await loop.drive(run)
    assert_plain(run.state)
    assert len(run.state.steps) == 2


def test_the_checker_rejects_live_objects() -> None:
    state = RunState("r", [UserMessage("x")])
    state.messages.append(lambda: None)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="function"):
        assert_plain(state)


def test_usage_recorded_before_the_first_step_is_setup_usage() -> None:
    state = RunState("r", [UserMessage("q")])
    state.record_usage(Usage(100, 20))
    state.open_step(0.0)
    state.record_usage(Usage(5, 1))
    state.record_response(reply("a", usage=Usage(10, 2)))
    step = state.close_step(1.0)
    assert state.setup_usage == Usage(100, 20)
    assert step is not None and step.usage == Usage(15, 3)
    assert state.usage == state.setup_usage + step.usage


def test_a_step_that_only_spent_tokens_is_kept() -> None:
    state = RunState("r", [UserMessage("q")])
    state.open_step(0.0)
    state.record_usage(Usage(7, 0))
    step = state.close_step(1.0)
    assert step is not None and step.usage == Usage(7, 0) and state.steps == [step]


def test_a_step_where_nothing_happened_is_dropped() -> None:
    state = RunState("r", [UserMessage("q")])
    state.open_step(0.0)
    assert state.close_step(1.0) is None and state.steps == []


async def test_setup_usage_reaches_the_result() -> None:
    class Spend:
        async def __call__(self, run: Run) -> Proceed:
            run.state.record_usage(Usage(30, 3))
            return Proceed()

    loop = ReActLoop(ScriptedModel([reply("a", usage=Usage(1, 1))]), start_phases=[Spend()])
    result = await loop.run("q")
    assert (result.setup_usage, result.usage) == (Usage(30, 3), Usage(31, 4))
    assert sum((s.usage for s in result.steps), Usage()) + result.setup_usage == result.usage

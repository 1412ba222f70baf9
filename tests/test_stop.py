"""Stop conditions whose options state the intent plainly are taken as meant."""

from __future__ import annotations

import pytest

from reactloop._decisions import StopReason
from reactloop._loop import ReActLoop
from reactloop._state import Step
from reactloop._stop import ToolCalled
from reactloop.testing import FakeTool, ScriptedModel, call

pytestmark = pytest.mark.anyio


def test_one_tool_name_is_one_name_not_its_letters() -> None:
    assert ToolCalled("submit").names == frozenset({"submit"})


def test_several_tool_names_are_kept() -> None:
    assert ToolCalled(["a", "b"]).names == frozenset({"a", "b"})


async def test_tool_called_with_one_name_stops_on_that_tool_only() -> None:
    model = ScriptedModel([call("s"), call("submit"), "unused"])
    tools = [FakeTool("s", result="s-result"), FakeTool("submit", result="done")]
    loop = ReActLoop(model, tools=tools, stop_when=ToolCalled("submit"))
    result = await loop.run("go")
    assert (result.stop_reason, result.output) == (StopReason.TOOL_CALLED, "done")
    assert model.remaining == 1


async def test_a_plain_predicate_stops_the_run() -> None:
    def two_steps(steps: list[Step]) -> bool:
        return len(steps) >= 2

    model = ScriptedModel([call("t"), call("t"), call("t"), "final"])
    loop = ReActLoop(model, tools=[FakeTool("t")], stop_when=two_steps)  # type: ignore[arg-type]
    result = await loop.run("go")
    assert result.stop_reason is StopReason.CONDITION
    assert result.stop_detail == "two_steps"
    assert len(result.steps) == 3  # two tool steps, then the final call without tools

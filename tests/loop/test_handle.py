"""Interrupting a running run from another task, via `start()` or the stream."""

from __future__ import annotations

import anyio
import pytest

from reactloop import Hook, ReActLoop, StopReason, ToolCall
from reactloop._errors import NoResultError
from reactloop.events import RunFinished, ToolCallStarted
from reactloop.phases import Run, ToolResult
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio


def endless() -> FunctionModel:
    return FunctionModel(lambda request: reply("working", call("step")))


async def test_interrupt_stops_at_the_next_safe_point_keeping_work() -> None:
    gate = anyio.Event()
    step = FakeTool("step", gate=gate)
    loop = ReActLoop(endless(), tools=[step], max_iterations=50)
    async with loop.start("go") as handle:
        while not step.calls:
            await anyio.lowlevel.checkpoint()
        handle.interrupt("Stopped by the user.")
        gate.set()
        result = await handle.result()
    assert (result.stop_reason, result.output) == (StopReason.INTERRUPTED, "Stopped by the user.")
    assert len(result.steps) == 1 and result.steps[0].tool_results[0].content == "ok"


async def test_interrupt_from_the_stream() -> None:
    loop = ReActLoop(endless(), tools=[FakeTool("step")], max_iterations=50)
    async with loop.stream("go") as events:
        async for event in events:
            if isinstance(event, ToolCallStarted):
                events.interrupt()
            last = event
    assert isinstance(last, RunFinished)
    assert last.result.stop_reason is StopReason.INTERRUPTED


async def test_interrupt_after_tools_skips_the_next_model_call() -> None:
    class InterruptDuringTools(Hook):
        async def after_tool_call(self, run: Run, c: ToolCall, r: ToolResult) -> None:
            run.request_interrupt()

    model = ScriptedModel([reply("", call("step")), "never used"])
    result = await ReActLoop(model, tools=[FakeTool("step")], hooks=[InterruptDuringTools()]).run(
        "go"
    )
    assert result.stop_reason is StopReason.INTERRUPTED
    assert model.remaining == 1 and result.output is None


async def test_handle_exposes_the_run_id() -> None:
    async with ReActLoop(ScriptedModel(["hi"])).start("go") as handle:
        result = await handle.result()
    assert handle.run_id == result.run_id


async def test_a_cancelled_run_has_no_result_instead_of_hanging() -> None:
    loop = ReActLoop(endless(), tools=[FakeTool("step", gate=anyio.Event())], max_iterations=50)
    with anyio.CancelScope() as scope:
        async with loop.start("go") as handle:
            scope.cancel()
            await handle.result()
    assert scope.cancelled_caught
    with anyio.fail_after(5), pytest.raises(NoResultError, match=handle.run_id):
        await handle.result()


class MyError(Exception):
    """A caller's own error."""


async def leave_start_block_with(error: Exception) -> None:
    loop = ReActLoop(endless(), tools=[FakeTool("step", gate=anyio.Event())], max_iterations=50)
    async with loop.start("go"):
        raise error


@pytest.mark.parametrize(
    "error", [MyError("caller failed"), ExceptionGroup("the caller's group", [MyError()])]
)
async def test_an_error_inside_the_start_block_cancels_the_run_and_comes_out_as_itself(
    error: Exception,
) -> None:
    error.__cause__ = cause = ValueError("the caller's cause")
    with anyio.fail_after(5), pytest.raises(type(error)) as raised:
        await leave_start_block_with(error)
    assert raised.value is error and raised.value.__cause__ is cause

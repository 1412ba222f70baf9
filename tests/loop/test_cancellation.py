"""Cancelling a run at every await point in turn: it stops at once, its state stays consistent."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from reactloop import (
    AssistantMessage,
    Event,
    Hook,
    ReActLoop,
    ReactLoopError,
    RunResult,
    StopRun,
    ToolCall,
    ToolMessage,
    Usage,
)
from reactloop._loop._lifecycle import start_run
from reactloop.models import ModelRequest, ModelResponse
from reactloop.phases import Run, RunState, ToolResult
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio


class Ticker:
    """Counts await points and cancels `scope` at the k-th one."""

    def __init__(self, k: int) -> None:
        self.k, self.count = k, 0
        self.scope = anyio.CancelScope()

    async def tick(self, *_: Any) -> None:
        self.count += 1
        if self.count == self.k:
            self.scope.cancel()
        await anyio.lowlevel.checkpoint()


class TickingHook(Hook):
    def __init__(self, ticker: Ticker) -> None:
        self.tick = ticker.tick
        self.errors: list[ReactLoopError] = []

    async def on_error(self, run: Run, error: ReactLoopError) -> None:
        self.errors.append(error)

    async def before_run(self, run: Run) -> None:
        await self.tick()

    async def before_reasoning(self, run: Run, request: ModelRequest) -> None:
        await self.tick()

    async def after_reasoning(self, run: Run, response: ModelResponse) -> None:
        await self.tick()

    async def before_tool_call(self, run: Run, c: ToolCall) -> StopRun | None:
        await self.tick()
        return None

    async def after_tool_call(self, run: Run, c: ToolCall, result: ToolResult) -> None:
        await self.tick()


def scripted() -> ScriptedModel:
    usage = Usage(5, 1)
    return ScriptedModel(
        [
            reply("", call("a"), call("b"), usage=usage),
            reply("", call("a"), usage=usage),
            reply("done", usage=usage),
        ]
    )


def assert_consistent(state: RunState) -> None:
    calls: dict[str, int] = {}
    for position, message in enumerate(state.messages):
        if isinstance(message, AssistantMessage):
            calls.update({c.id: position for c in message.tool_calls})
        if isinstance(message, ToolMessage):
            assert calls.get(message.call_id, position) < position, "result before or without call"
    answered = {m.call_id for m in state.messages if isinstance(m, ToolMessage)}
    groups = [m for m in state.messages if isinstance(m, AssistantMessage) and m.tool_calls]
    for group in groups[:-1]:
        assert {c.id for c in group.tool_calls} <= answered, "an earlier tool group lost results"
    if groups:
        open_calls = {c.id for c in groups[-1].tool_calls} - answered
        assert open_calls in (set(), {c.id for c in groups[-1].tool_calls}), "half-appended group"
    assert [s.index for s in state.steps] == list(range(1, len(state.steps) + 1))
    draft_usage = state.current.usage if state.current else Usage()
    assert sum((s.usage for s in state.steps), draft_usage) == state.usage


async def run_cancelled_at(k: int) -> tuple[Ticker, Run, RunResult | None, list[ReactLoopError]]:
    ticker = Ticker(k)
    tools = [FakeTool("a"), FakeTool("b")]
    hook = TickingHook(ticker)
    loop = ReActLoop(scripted(), tools=tools, hooks=[hook])

    async def sink(event: Event) -> None:
        await ticker.tick()

    run = await start_run(loop.config, "go", sink=sink)
    result = None
    with ticker.scope:
        result = await loop.drive(run)
    return ticker, run, result, hook.errors


async def test_cancellation_at_every_await_point_keeps_state_consistent() -> None:
    k = 0
    while True:
        k += 1
        ticker, run, result, errors = await run_cancelled_at(k)
        assert not any("Cancel" in e.message for e in errors), "cancellation became an error"
        if not ticker.scope.cancelled_caught:
            break
        assert result is None, f"cancelled at await {k} but the run returned a result"
        assert_consistent(run.state)
        contents = [m.text for m in run.state.messages if isinstance(m, ToolMessage)]
        assert not any("Cancel" in c for c in contents), "cancellation became a tool result"
    assert result is not None and result.output == "done"
    assert k > 30, f"the scripted run should pass many await points, saw {k}"

"""The journal writes at phase boundaries: each tool result on its own as soon as its tool returns,
before anything acts on it; without a store it is a no-op."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from reactloop._core._contracts import Hook, RunStore
from reactloop._core._decisions import PROCEED, PhaseDecision, StopReason
from reactloop._core._messages import ToolCall
from reactloop._core._records import (
    CallStarted,
    ResponseSaved,
    ResultSaved,
    RunCreated,
    RunEnded,
    StepClosed,
)
from reactloop._core._state import ToolResult
from reactloop._durable._journal import NULL_JOURNAL
from reactloop._errors import ContractError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop.testing import FakeTool, ScriptedModel, make_run, reply

pytestmark = pytest.mark.anyio


class SeesSaved(Hook):
    """Records, at each after-tool-call point, whether the store already holds the result."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.saw: list[bool] = []

    async def after_tool_call(self, run: Run, call: ToolCall, result: ToolResult) -> None:
        records = (await self.store.load(run.state.run_id)).records
        saved = [r.result for r in records if isinstance(r, ResultSaved)]
        self.saw.append(result in saved)


async def test_a_result_is_committed_before_any_hook_sees_it(any_store: RunStore) -> None:
    hook = SeesSaved(any_store)
    model = ScriptedModel([ToolCall("a"), "done"])
    await ReActLoop(model, tools=[FakeTool("a")], hooks=[hook], store=any_store).run("go")
    assert hook.saw == [True]


async def test_each_result_is_written_as_its_tool_returns_not_at_the_end_of_the_batch(
    any_store: RunStore,
) -> None:
    slow = FakeTool("slow", gate=anyio.Event())
    calls = (ToolCall("fast", id="1"), ToolCall("fast", id="2"), ToolCall("slow", id="3"))
    model = ScriptedModel([reply("", *calls), "done"])
    loop = ReActLoop(model, tools=[FakeTool("fast"), slow], store=any_store)
    async with loop.start("go") as handle:
        with anyio.fail_after(10):  # a bound only: results written at the batch's end never come
            while True:
                records = (await any_store.load(handle.run_id)).records
                if sum(isinstance(r, ResultSaved) for r in records) == 2:
                    break
                await anyio.lowlevel.checkpoint()
        # The batch cannot have ended (the slow tool is held), yet both fast results are saved.
        # (The slow call may still be journaling its start: a store may be slower than a tool.)
        saved = {r.result.call_id for r in records if isinstance(r, ResultSaved)}
        assert saved == {"1", "2"} and slow.calls in ([], [{}])
        assert slow.gate is not None
        slow.gate.set()
        result = await handle.result()
    assert result.output == "done"


async def test_a_run_journals_its_records_in_order(any_store: RunStore) -> None:
    model = ScriptedModel([ToolCall("a"), "done"])
    result = await ReActLoop(model, tools=[FakeTool("a")], store=any_store).run("go")
    kinds = [type(r) for r in (await any_store.load(result.run_id)).records]
    assert kinds == [
        RunCreated, ResponseSaved, CallStarted, ResultSaved, StepClosed, ResponseSaved,
        StepClosed, RunEnded,
    ]  # fmt: skip


async def test_without_a_store_the_journal_is_the_no_op_one() -> None:
    assert make_run().journal is NULL_JOURNAL


class Unsaveable:
    """A phase that puts a non-JSON value in the phase data."""

    async def __call__(self, run: Run) -> PhaseDecision:
        run.state.phase_data["clock"] = object()
        return PROCEED


async def test_phase_data_that_cannot_be_saved_ends_the_run_with_a_contract_error(
    any_store: RunStore,
) -> None:
    model = ScriptedModel(["done"])
    loop = ReActLoop(model, store=any_store)
    loop.phases = (Unsaveable(), *loop.phases)
    result = await loop.run("go")
    assert result.stop_reason is StopReason.ERROR
    assert isinstance(result.error, ContractError) and "phase data" in result.error.message

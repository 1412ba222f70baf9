"""When a step's response is committed (adr/0010, issue 30): with its first call's start, in one
write, when nothing can act on it between the two (no hooks, only built-in phases between the
reasoning and the tool phase); on its own, before the next phase, otherwise."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from reactloop import Hook, ReActLoop, StopReason, tool
from reactloop._core import PROCEED, PhaseDecision
from reactloop.phases import Run, ToolResult, default_phases
from reactloop.stores import CallStarted, Record, ResponseSaved, RunEnded
from reactloop.testing import ScriptedModel, call, reply
from tests.conftest import Store

pytestmark = pytest.mark.anyio


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _counted(store: Store) -> list[list[type]]:
    """Each append the store is given from now on, as the kinds of its records."""
    appends: list[list[type]] = []
    append: Callable[[str, Sequence[Record]], Awaitable[None]] = store.append

    async def counting(run_id: str, records: Sequence[Record]) -> None:
        appends.append([type(record) for record in records])
        await append(run_id, records)

    store.append = counting  # type: ignore[method-assign]
    return appends


def _script() -> ScriptedModel:
    return ScriptedModel(
        [reply("", call("add", a=1, b=2)), reply("", call("add", a=3, b=4)), "4+7"]
    )


async def test_a_plain_loop_commits_the_response_with_its_call_start(any_store: Store) -> None:
    appends = _counted(any_store)
    result = await ReActLoop(_script(), tools=[add], store=any_store).run("go")
    assert result.stop_reason is StopReason.COMPLETED
    with_start = [kinds for kinds in appends if CallStarted in kinds]
    assert len(with_start) == 2  # two tool steps
    for kinds in with_start:
        assert ResponseSaved in kinds and kinds.index(ResponseSaved) < kinds.index(CallStarted)
    assert len(appends) == 2 * 2 + 1  # per tool step: the start (with the response), the result
    assert ResponseSaved in appends[-1] and RunEnded in appends[-1]  # the answer, with the end
    stored = await any_store.load(result.run_id)
    assert stored.messages == result.messages


class SeesTheStore:
    """A phase between reasoning and tools: it could act on the response (send it somewhere)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.stored_responses: list[int] = []

    async def __call__(self, run: Run) -> PhaseDecision:
        stored = await self.store.load(run.state.run_id)
        self.stored_responses.append(sum(step.response is not None for step in stored.steps))
        return PROCEED


@pytest.mark.parametrize("assigned", [False, True], ids=["given", "assigned later"])
async def test_a_phase_between_reasoning_and_tools_sees_the_response_committed(
    any_store: Store, assigned: bool
) -> None:
    seeing = SeesTheStore(any_store)
    phases: list[Any] = default_phases()
    phases.insert(2, seeing)
    loop = ReActLoop(_script(), tools=[add], store=any_store, phases=None if assigned else phases)
    if assigned:
        loop.phases = tuple(phases)
    result = await loop.run("go")
    assert result.stop_reason is StopReason.COMPLETED
    assert seeing.stored_responses == [1, 2, 3]  # each step's response, before the phase ran


class Watching(Hook):
    """A hook that sees each result (it could act on what the model asked for)."""

    async def after_tool_call(self, run: Run, call: Any, result: ToolResult) -> None:
        return None


async def test_a_loop_with_hooks_commits_the_response_on_its_own(any_store: Store) -> None:
    appends = _counted(any_store)
    loop = ReActLoop(_script(), tools=[add], store=any_store, hooks=[Watching()])
    await loop.run("go")
    assert [ResponseSaved] in [[k for k in kinds if k is ResponseSaved] for kinds in appends]
    assert not any(ResponseSaved in kinds and CallStarted in kinds for kinds in appends)

"""Sessions written straight through a store's API: runs whose journals say what a loop's would
(an input, a step per tool call with its result, a final answer), without running a loop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attrs import frozen

from reactloop._core._approvals import GivenDecision
from reactloop._core._contracts import RunStore
from reactloop._core._decisions import StopReason
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    ToolCall,
    Usage,
)
from reactloop._core._records import (
    CallStarted,
    Record,
    ResponseSaved,
    ResultSaved,
    RunCreated,
    RunEnded,
    RunSummary,
    StepClosed,
    StoredRun,
)
from reactloop._core._state import ToolResult


@frozen
class Turn:
    """One stored run of a session: its input, the sizes of its tool results (one step each)
    and its answer; `history` goes in its `RunCreated` (a hand-written store's run may have
    one; the loop's session turns never do)."""

    text: str
    results: tuple[str, ...] = ()
    answer: str = "done"
    history: tuple[Message, ...] = ()
    standing: tuple[GivenDecision, ...] = ()
    ended: bool = True
    open_call: bool = False  # it stopped while its last call ran: no result, no answer


def _step(index: int, tag: str, content: str) -> list[Record]:
    call = ToolCall("lookup", '{"q": 1}', id=f"{tag}-c{index}")
    response = ModelResponse(AssistantMessage("", [call]))
    result = ToolResult(call.id, "lookup", content)
    return [
        ResponseSaved(index, response, Usage()),
        ResultSaved(index, result),
        StepClosed(index, 0.0, 0.0, Usage()),
    ]


def journal(run_id: str, session_id: str, turn: Turn, tag: str) -> list[Record]:
    """The records of one turn, `RunCreated` first; its calls' ids begin with `tag`."""
    created = RunCreated(
        run_id,
        turn.text,
        None,
        ("lookup",),
        1.0,
        turn.history,
        session_id=session_id,
        standing=turn.standing,
    )
    records: list[Record] = [created]
    for index, content in enumerate(turn.results, start=1):
        records += _step(index, tag, content)
    last = len(turn.results) + 1
    if turn.open_call:
        call = ToolCall("lookup", "{}", id=f"{tag}-open")
        response = ModelResponse(AssistantMessage("", [call]))
        return [
            *records,
            ResponseSaved(last, response, Usage()),
            CallStarted(last, call.id, "lookup"),
        ]
    answer = ModelResponse(AssistantMessage(turn.answer))
    records += [ResponseSaved(last, answer, Usage()), StepClosed(last, 0.0, 0.0, Usage())]
    if turn.ended:
        records.append(RunEnded(StopReason.FINAL_ANSWER, "", turn.answer, Usage(), 2.0))
    return records


async def write_session(
    store: RunStore, session_id: str, turns: Sequence[Turn], prefix: str = "r"
) -> list[str]:
    """Store `turns` as the session's runs, oldest first (run ids `prefix` and their position,
    call ids `t`, the position and the step): their run ids."""
    ids: list[str] = []
    for position, turn in enumerate(turns):
        run_id = f"{prefix}{position}"
        records = journal(run_id, session_id, turn, f"t{position}")
        created = records[0]
        assert isinstance(created, RunCreated)
        await store.create_run(created)
        await store.append(run_id, records[1:])
        ids.append(run_id)
    return ids


class WholeRead:
    """The store as a turn saw it before `session_turns`, and as a store written before it
    is: every call but that one goes to `inner`, so a turn reads the whole session."""

    def __init__(self, inner: RunStore) -> None:
        self.inner = inner

    async def create_run(self, created: RunCreated) -> None:
        await self.inner.create_run(created)

    async def append(self, run_id: str, records: Sequence[Record]) -> None:
        await self.inner.append(run_id, records)

    async def load(self, run_id: str) -> StoredRun:
        return await self.inner.load(run_id)

    async def list_runs(self, **filters: Any) -> list[RunSummary]:
        return await self.inner.list_runs(**filters)

    async def delete_run(self, run_id: str) -> bool:
        return await self.inner.delete_run(run_id)

    async def delete_session(self, session_id: str) -> int:
        return await self.inner.delete_session(session_id)

    async def session_history(self, session_id: str, *, before: str | None = None) -> list[Message]:
        return await self.inner.session_history(session_id, before=before)

    async def aclose(self) -> None:
        """Its owner closes the inner store."""

"""Every store keeps the contract: exact round trips, atomic appends, listing and deleting."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings

from reactloop._core._contracts import RunStore
from reactloop._core._decisions import StopReason
from reactloop._core._messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from reactloop._core._records import PhaseDataSaved, Record, RunCreated, RunEnded, RunStatus
from reactloop._core._state import RunContext
from reactloop._durable._replay import replay
from reactloop._durable._stores import MemoryStore, PostgresStore, SqliteStore
from reactloop._errors import ContractError
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import RunNotFoundError
from reactloop._tools._tool import tool
from reactloop.testing import FunctionModel, reply
from tests.helpers.strategies import journals

pytestmark = pytest.mark.anyio


def created(run_id: str, at: float = 0.0, **who: str | None) -> RunCreated:
    return RunCreated(run_id, "hi", None, (), at, **who)  # type: ignore[arg-type]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(journal=journals())
async def test_a_journal_reads_back_exactly(any_store: RunStore, journal: list[Record]) -> None:
    first = journal[0]
    assert isinstance(first, RunCreated)
    await any_store.delete_run(first.run_id)
    await any_store.create_run(first)
    for record in journal[1:]:
        await any_store.append(first.run_id, [record])
    stored = await any_store.load(first.run_id)
    assert list(stored.records) == journal
    assert stored == replay(journal).stored


async def test_every_store_implements_the_contract(tmp_path: Path) -> None:
    assert isinstance(MemoryStore(), RunStore)
    assert isinstance(SqliteStore(tmp_path / "x.db"), RunStore)
    assert isinstance(PostgresStore("postgresql://nowhere/db"), RunStore)


async def test_loading_an_unknown_run_is_a_typed_error(any_store: RunStore) -> None:
    with pytest.raises(RunNotFoundError):
        await any_store.load("missing")


async def test_appending_to_an_unknown_run_is_a_typed_error(any_store: RunStore) -> None:
    with pytest.raises(RunNotFoundError):
        await any_store.append("missing", [])


async def test_runs_are_listed_newest_first_and_filtered(any_store: RunStore) -> None:
    await any_store.create_run(created("a", 100.0, user_id="u1", session_id="s1"))
    await any_store.create_run(created("b", 200.0, user_id="u2", session_id="s1"))
    await any_store.create_run(created("c", 300.0, user_id="u1", session_id="s2"))
    ids = [summary.run_id for summary in await any_store.list_runs()]
    assert ids == ["c", "b", "a"]
    assert [s.run_id for s in await any_store.list_runs(user_id="u1")] == ["c", "a"]
    assert [s.run_id for s in await any_store.list_runs(session_id="s1")] == ["b", "a"]
    assert [s.run_id for s in await any_store.list_runs(since=150.0, until=300.0)] == ["b"]
    assert [s.run_id for s in await any_store.list_runs(limit=1)] == ["c"]
    running = await any_store.list_runs(status=RunStatus.RUNNING)
    assert len(running) == 3 and not await any_store.list_runs(status=RunStatus.FINISHED)


async def test_a_run_and_a_session_can_be_deleted(any_store: RunStore) -> None:
    await any_store.create_run(created("a", session_id="s1"))
    await any_store.create_run(created("b", session_id="s1"))
    await any_store.create_run(created("c", session_id="s2"))
    assert await any_store.delete_run("c") is True
    assert await any_store.delete_run("c") is False
    assert await any_store.delete_session("s1") == 2
    assert await any_store.list_runs() == []


async def test_an_append_that_ends_the_run_sets_its_status_and_update_time(
    any_store: RunStore,
) -> None:
    await any_store.create_run(created("a"))
    (before,) = await any_store.list_runs()
    ended = RunEnded(StopReason.COMPLETED, "", "done", Usage(), time.time())
    await any_store.append("a", [ended])
    (after,) = await any_store.list_runs()
    assert (before.status, after.status) == (RunStatus.RUNNING, RunStatus.FINISHED)
    assert after.updated_at >= before.updated_at
    assert (await any_store.load("a")).output == "done"


async def test_an_append_that_cannot_be_encoded_writes_nothing(any_store: RunStore) -> None:
    await any_store.create_run(created("a"))
    good = PhaseDataSaved({"n": 1})
    with pytest.raises(ContractError):
        await any_store.append("a", [good, PhaseDataSaved({"bad": object()})])
    assert len((await any_store.load("a")).records) == 1


async def test_two_hundred_concurrent_runs_on_one_store_lose_and_cross_nothing(
    any_store: RunStore,
) -> None:
    @tool
    def echo(text: str, context: RunContext[Any]) -> str:
        """Echo the text with the run's id."""
        return f"{context.run_id}:{text}"

    def answer(request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if isinstance(last, UserMessage):
            return reply("", ToolCall.of("echo", {"text": last.text}))
        assert isinstance(last, ToolMessage)
        return reply(f"said {last.text}")

    store = any_store
    loop = ReActLoop(FunctionModel(answer), tools=[echo], store=store)
    results: dict[str, str] = {}

    async def one(n: int) -> None:
        result = await loop.run(f"n{n}", session_id=f"s{n}")
        results[result.run_id] = f"n{n}"

    async with anyio.create_task_group() as tasks:
        for n in range(200):
            tasks.start_soon(one, n)
    assert len(results) == 200
    for run_id, text in results.items():
        stored = await store.load(run_id)
        assert stored.status is RunStatus.FINISHED
        assert stored.output == f"said {run_id}:{text}"
        assert stored.messages[0] == UserMessage(text)
        assert isinstance(stored.messages[1], AssistantMessage)
    assert len(await store.list_runs(limit=1000)) == 200

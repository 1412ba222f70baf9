"""Store faults a run must survive or report, never wait out: a PostgreSQL server that cuts its
connections or restarts (reconnect, retry-safe writes), one that hangs, and a SQLite file another
process keeps locked (bounded and cancellable waits). Real servers and files only."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from reactloop._core._decisions import StopReason
from reactloop._core._messages import ModelRequest, ModelResponse, ToolMessage
from reactloop._core._records import PhaseDataSaved, ResultSaved, RunCreated
from reactloop._durable._leases import StoreTimeouts
from reactloop._durable._postgres_pool import Disconnected
from reactloop._durable._stores import PostgresStore, SqliteStore
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import StoreError
from reactloop._tools._tool import tool
from reactloop.testing import FunctionModel, call, reply
from tests.helpers.postgres_server import backend_pids, restart, terminate

pytestmark = pytest.mark.anyio
HANG_GUARD = 60.0  # each faulty call returns long before this unless it hangs


def fault_in_tool(fault: Callable[[], object], ran: list[int]) -> Any:
    @tool
    def pay(amount: int) -> str:
        """Pay an amount (the store's connection is cut while it runs)."""
        ran.append(amount)
        fault()
        return f"paid {amount}"

    return pay


def paying(request: ModelRequest) -> ModelResponse | str:
    if isinstance(request.messages[-1], ToolMessage):
        return "done"
    return reply("", call("pay", amount=5))


@pytest.mark.parametrize("how", ["terminate", "restart"])
async def test_a_cut_connection_loses_no_result_and_runs_no_tool_twice(
    worker: Callable[..., PostgresStore], postgres_url: str, how: str
) -> None:
    store, ran = worker("w1"), list[int]()
    fault = (
        (lambda: terminate(postgres_url, "w1"))
        if how == "terminate"
        else (lambda: restart(postgres_url))
    )
    loop = ReActLoop(FunctionModel(paying), tools=[fault_in_tool(fault, ran)], store=store)
    with anyio.fail_after(HANG_GUARD):
        result = await loop.run("go")
    assert result.stop_reason is StopReason.COMPLETED and result.output == "done"
    assert ran == [5]
    saved = [r for r in (await store.load(result.run_id)).records if isinstance(r, ResultSaved)]
    assert [r.result.content for r in saved] == ["paid 5"]  # the committed result, once


async def test_an_append_retried_after_a_lost_answer_writes_its_records_once(
    worker: Callable[..., PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = worker("w1")
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    connections = store._connections
    real, lost = connections.locked, list[bool]()

    def answer_lost(work: Any, call: Any) -> Any:
        done = real(work, call)
        if not lost:  # committed, then the connection dies before the answer arrives
            lost.append(True)
            assert connections.open_count() == 1
            connections.close_all()
            raise Disconnected("server closed the connection unexpectedly")
        return done

    monkeypatch.setattr(connections, "locked", answer_lost)
    await store.append("r1", [PhaseDataSaved({"n": 1})])
    records = (await store.load("r1")).records
    assert lost and [type(r).__name__ for r in records] == ["RunCreated", "PhaseDataSaved"]


async def test_a_hung_server_fails_the_call_within_its_bound_and_the_store_recovers(
    worker: Callable[..., PostgresStore], postgres_url: str
) -> None:
    timeouts = StoreTimeouts(call=1.0, reconnect=0.5, lock=0.5)
    store = worker("w1", timeouts=timeouts)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    (pid,) = backend_pids(postgres_url, "w1")
    os.kill(pid, signal.SIGSTOP)  # the backend freezes (a stuck server, a frozen VM)
    try:
        with anyio.fail_after(HANG_GUARD), pytest.raises(StoreError, match=r"StoreTimeouts\."):
            await store.load("r1")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert len((await store.load("r1")).records) == 1  # a new connection serves the next call


async def test_a_cancelled_call_to_a_hung_server_returns_at_once(
    worker: Callable[..., PostgresStore], postgres_url: str
) -> None:
    store = worker("w1")  # default bounds (60 s): the cancellation, not a timeout, ends it
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    (pid,) = backend_pids(postgres_url, "w1")
    os.kill(pid, signal.SIGSTOP)
    try:
        with anyio.fail_after(HANG_GUARD), anyio.move_on_after(0.5) as scope:
            await store.load("r1")
        assert scope.cancelled_caught
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.fixture
def locked_file(tmp_path: Path) -> Iterator[Path]:
    """A store file whose write lock another connection (another process, in effect) holds."""
    path = tmp_path / "runs.db"

    async def prepare() -> None:
        store = SqliteStore(path)
        await store.create_run(RunCreated("r1", "go", None, (), 0.0))
        await store.aclose()

    anyio.run(prepare)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    yield path
    other.execute("ROLLBACK")
    other.close()


async def test_a_file_locked_by_another_writer_fails_the_write_within_its_bound(
    locked_file: Path,
) -> None:
    store = SqliteStore(locked_file, timeouts=StoreTimeouts(lock=0.3))
    with anyio.fail_after(HANG_GUARD), pytest.raises(StoreError, match=r"StoreTimeouts\.lock"):
        await store.delete_run("r1")
    assert len((await store.load("r1")).records) == 1  # reads go on beside the writer
    await store.aclose()


async def test_a_write_waiting_for_a_locked_file_is_cancelled_at_once(locked_file: Path) -> None:
    store = SqliteStore(locked_file)  # default bounds: only the cancellation ends the wait
    with anyio.fail_after(HANG_GUARD), anyio.move_on_after(0.3) as scope:
        await store.delete_run("r1")
    assert scope.cancelled_caught
    await store.aclose()

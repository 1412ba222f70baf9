"""SqliteStore's writer thread: appends queued while a transaction is under way commit together
(each caller's failure its own), a cancelled caller never loses nor half-applies a write, and
the thread stops on `aclose` and when the store is dropped. Real files, asyncio and trio."""

from __future__ import annotations

import gc
import os
import sqlite3
import threading
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest

from reactloop._core._records import CallStarted, RunCreated
from reactloop._durable._stores import SqliteStore
from reactloop._stored_errors import LeaseLostError, StoreError

pytestmark = pytest.mark.anyio
POLLS = 2000  # bounded waits for the thread to reach a state (never a timing assertion)


def created(run_id: str) -> RunCreated:
    return RunCreated(run_id, "go", None, ("echo",), time.time())


def started(call_id: str) -> CallStarted:
    return CallStarted(1, call_id, "echo")


def call_ids(path: Path, run_id: str) -> list[str]:
    """The call ids the run's journal holds, in order (read with a connection of our own)."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute(
            "SELECT body FROM records WHERE run_id = ? AND seq > 1 ORDER BY seq", (run_id,)
        ).fetchall()
    connection.close()
    return [body.decode().split('"call_id":"')[1].split('"')[0] for (body,) in rows]


async def until(condition: str, check: object) -> None:
    for _ in range(POLLS):
        if callable(check) and check():
            return
        await anyio.sleep(0.001)
    raise AssertionError(f"never: {condition}")


@contextmanager
def writer_held(store: SqliteStore) -> Iterator[None]:
    """Hold the lock the writer thread takes for each transaction: what it took waits."""
    store._writer.lock.acquire()
    try:
        yield
    finally:
        store._writer.lock.release()


async def hand_over_first(
    store: SqliteStore, group: anyio.abc.TaskGroup, run_id: str, call_id: str
) -> int:
    """With the writer held, start an append and wait until the writer thread has taken it (it
    waits there); returns how many jobs the writer has been handed so far."""
    writer = store._writer
    handed = writer.submitted + 1
    group.start_soon(store.append, run_id, [started(call_id)])
    await until("the first append is handed over", lambda: writer.submitted == handed)
    await until("and taken", lambda: writer.queued() == 0)
    return handed


async def test_appends_queued_during_a_transaction_commit_together_in_order(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    runs = [f"r{i}" for i in range(6)]
    for run_id in runs:
        await store.create_run(created(run_id))
    before, writer = store._writer.commits, store._writer
    async with anyio.create_task_group() as group:
        with writer_held(store):
            handed = writer.submitted + len(runs)
            for run_id in runs:
                group.start_soon(store.append, run_id, [started(f"{run_id}-a")])
            await until("the appends are handed over", lambda: writer.submitted == handed)
    assert writer.commits - before <= 2  # what the thread took first, then all the others
    async with anyio.create_task_group() as group:
        for run_id in runs:
            group.start_soon(store.append, run_id, [started(f"{run_id}-b"), started(f"{run_id}-c")])
    for run_id in runs:
        assert call_ids(path, run_id) == [f"{run_id}-a", f"{run_id}-b", f"{run_id}-c"]
    await store.aclose()


async def test_one_failing_append_in_a_group_leaves_the_others_committed(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store, thief = SqliteStore(path, worker_id="mine"), SqliteStore(path, worker_id="thief")
    await store.create_run(created("kept"))
    await store.create_run(created("taken"))
    await store.create_run(created("other"))
    await store.release_lease("taken")
    await thief.acquire_lease("taken")  # our next append to it is refused, alone
    outcomes: dict[str, BaseException | None] = {}

    async def append(run_id: str) -> None:
        try:
            await store.append(run_id, [started(f"{run_id}-1")])
        except LeaseLostError as error:
            outcomes[run_id] = error
        else:
            outcomes[run_id] = None

    async with anyio.create_task_group() as group:
        with writer_held(store):
            await hand_over_first(store, group, "kept", "kept-0")
            for count, run_id in enumerate(("kept", "taken", "other"), 1):  # in this order
                group.start_soon(append, run_id)
                await until(f"{run_id} queues up", lambda n=count: store._writer.queued() == n)
    assert outcomes["kept"] is None and outcomes["other"] is None
    assert isinstance(outcomes["taken"], LeaseLostError)
    assert call_ids(path, "kept") == ["kept-0", "kept-1"]
    assert call_ids(path, "other") == ["other-1"]
    assert call_ids(path, "taken") == []
    await store.aclose()
    await thief.aclose()


async def test_a_caller_cancelled_before_its_append_started_writes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    await store.create_run(created("r"))
    async with anyio.create_task_group() as group:
        with writer_held(store):
            await hand_over_first(store, group, "r", "first")
            with anyio.CancelScope() as scope:
                scope.cancel()
                await store.append("r", [started("withdrawn")])
            assert scope.cancelled_caught
    await store.append("r", [started("next")])
    assert call_ids(path, "r") == ["first", "next"]
    await store.aclose()


async def test_a_caller_cancelled_mid_commit_waits_for_it_and_the_write_is_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    await store.create_run(created("r"))
    inside, proceed = threading.Event(), threading.Event()

    def slow(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO runs (run_id, status, created_at, updated_at)"
                           " VALUES ('slow', 'running', 0, 0)")  # fmt: skip
        inside.set()
        proceed.wait()

    returned: list[bool] = []

    async def caller(scope: anyio.CancelScope) -> None:
        with scope:
            await store._writer.call(slow, grouped=True)
        returned.append(proceed.is_set())

    scope = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(caller, scope)
        await until("the transaction is under way", inside.is_set)
        scope.cancel()
        await anyio.sleep(0.01)
        assert returned == []  # still waiting for its transaction
        proceed.set()
    assert returned == [True] and scope.cancelled_caught
    assert [run.run_id for run in await store.list_runs()] == ["slow", "r"]
    await store.aclose()


async def test_a_failed_write_is_a_store_error_and_the_thread_goes_on(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    await store.create_run(created("r"))
    await store._run(lambda c: c.execute("PRAGMA query_only = 1"))
    with pytest.raises(StoreError, match="readonly"):
        await store.append("r", [started("refused")])
    await store._run(lambda c: c.execute("PRAGMA query_only = 0"))
    await store.append("r", [started("kept")])
    assert call_ids(tmp_path / "runs.db", "r") == ["kept"]
    await store.aclose()


async def test_aclose_stops_the_thread_and_a_later_call_starts_another(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    await store.create_run(created("r"))
    thread = store._writer._thread
    assert thread is not None and thread.is_alive()
    await store.aclose()
    assert not thread.is_alive()
    await store.append("r", [started("after")])
    assert call_ids(tmp_path / "runs.db", "r") == ["after"]
    await store.aclose()


async def test_a_store_dropped_unclosed_stops_its_thread(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    await store.create_run(created("r"))
    thread = store._writer._thread
    assert thread is not None
    del store
    gc.collect()
    await until("the dropped store's thread exits", lambda: not thread.is_alive())


async def bounded(call: Awaitable[None]) -> None:
    with anyio.fail_after(30):  # far over a write; a child stuck on its parent's thread fails
        await call


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_forked_child_writes_through_a_thread_of_its_own(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    anyio.run(store.create_run, created("parent"), backend=backend)
    pid = os.fork()
    if pid == 0:  # the child: its parent's writer thread is not here, nor its connection
        code = 1
        try:
            anyio.run(bounded, store.append("parent", [started("from-the-child")]), backend=backend)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    anyio.run(store.append, "parent", [started("from-the-parent")], backend=backend)
    assert call_ids(path, "parent") == ["from-the-child", "from-the-parent"]
    anyio.run(store.aclose, backend=backend)


async def cancellable(scope: anyio.CancelScope, call: Awaitable[None]) -> None:
    with scope:
        await call


async def test_a_write_queued_before_aclose_and_then_cancelled_is_withdrawn(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    await store.create_run(created("r"))
    writer = store._writer
    async with anyio.create_task_group() as group:
        with writer_held(store):
            handed = await hand_over_first(store, group, "r", "first")
            scope = anyio.CancelScope()
            group.start_soon(cancellable, scope, store.append("r", [started("withdrawn")]))
            await until("it is queued", lambda: writer.queued() == 1)
            group.start_soon(store.aclose)  # the thread stops after what it holds
            await until("the thread is told to stop", lambda: writer._thread is None)
            group.start_soon(store.append, "r", [started("after")])  # a new thread and queue
            await until("the last append is handed over", lambda: writer.submitted == handed + 2)
            scope.cancel()  # withdrawn from the stopping thread's queue, no longer the writer's
            await until("its caller has left", lambda: scope.cancelled_caught)
    await store.append("r", [started("last")])
    assert call_ids(path, "r") == ["first", "after", "last"]
    await store.aclose()

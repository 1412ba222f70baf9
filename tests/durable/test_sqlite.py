"""SqliteStore: one owner-only WAL file, a versioned schema, many concurrent runs, no secrets."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from reactloop._core._messages import (
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._core._records import (
    STORE_SCHEMA_VERSION,
    CallStarted,
    ResultSaved,
    RunCreated,
    RunStatus,
)
from reactloop._core._state import RunContext, ToolResult
from reactloop._durable._stores import SqliteStore
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import LeaseHeldError, LeaseLostError, RunNotFoundError, StoreError
from reactloop._tools._tool import tool
from reactloop.testing import FakeTool, ScriptedModel

pytestmark = pytest.mark.anyio
FIXTURE = Path(__file__).parent.parent / "fixtures" / "stores" / "runs-v1.db"


def pragma(path: Path, name: str) -> Any:
    with sqlite3.connect(path) as connection:
        return connection.execute(f"PRAGMA {name}").fetchone()[0]


def folder_bytes(folder: Path) -> bytes:
    """Every byte of every file in `folder` (the database, its WAL and shared-memory files)."""
    return b"".join(path.read_bytes() for path in folder.iterdir())


async def test_the_file_and_its_wal_are_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    loop = ReActLoop(ScriptedModel(["hi"]), store=SqliteStore(path))
    await loop.run("go")
    for file in (path, Path(f"{path}-wal")):
        assert stat.S_IMODE(os.stat(file).st_mode) == 0o600, file


async def test_the_file_is_in_wal_mode_with_the_schema_version(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    await ReActLoop(ScriptedModel(["hi"]), store=store).run("go")
    await store.aclose()
    assert pragma(tmp_path / "runs.db", "journal_mode") == "wal"
    assert pragma(tmp_path / "runs.db", "user_version") == STORE_SCHEMA_VERSION == 3


async def test_synchronous_full_is_applied(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db", synchronous="FULL")
    level = await store._run(lambda c: c.execute("PRAGMA synchronous").fetchone()[0])
    normal = SqliteStore(tmp_path / "runs.db")
    default = await normal._run(lambda c: c.execute("PRAGMA synchronous").fetchone()[0])
    assert (level, default) == (2, 1)


async def test_a_file_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {STORE_SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match=f"schema version {STORE_SCHEMA_VERSION + 1}"):
        await SqliteStore(path).list_runs()


async def test_a_store_closed_opens_again_on_use(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    result = await ReActLoop(ScriptedModel(["hi"]), store=store).run("go")
    await store.aclose()
    assert (await store.load(result.run_id)).output == "hi"


async def test_the_committed_version_1_sample_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    shutil.copy(FIXTURE, path)
    store = SqliteStore(path)
    newer, older = await store.list_runs(session_id="sample")
    done, failed = await store.load(older.run_id), await store.load(newer.run_id)
    assert (done.status, failed.status) == (RunStatus.FINISHED, RunStatus.FAILED)
    assert done.output == "done 😀" and done.phase_data == {"plan": "1. search"}
    assert done.created.instructions == "Be brief." and done.created.user_id == "u1"
    assert [type(m).__name__ for m in done.messages] == [
        "UserMessage", "AssistantMessage", "ToolMessage", "ToolMessage", "AssistantMessage",
    ]  # fmt: skip
    hits = done.messages[2]
    assert isinstance(hits, ToolMessage) and "東京" in hits.text
    assert done.usage.input_tokens >= 13
    history = await store.session_history("sample")
    assert history[0] == UserMessage("find it") and len(history) == 8
    search = FakeTool("search")
    resumed = await ReActLoop(ScriptedModel(["ok"]), tools=[search], store=store).resume(
        failed.run_id
    )
    assert resumed.output == "ok" and not search.calls


async def test_no_secret_reaches_the_file(tmp_path: Path) -> None:
    secret = "sk-live-0123456789SECRET"

    @tool
    def lookup(context: RunContext[dict[str, str]]) -> str:
        """Use the deps' key without showing it."""
        return "found" if context.deps["api_key"] == secret else "no key"

    class KeyedModel(ScriptedModel):
        api_key = secret

    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    model = KeyedModel([ToolCall("lookup"), "done"])
    loop = ReActLoop(model, tools=[lookup], store=store)
    result = await loop.run("go", deps={"api_key": secret})
    assert result.output == "done"
    await store.aclose()
    stored = folder_bytes(tmp_path)
    assert b"found" in stored and secret.encode() not in stored


def call_started(step: int) -> CallStarted:
    return CallStarted(step, f"c{step}", "t")


@pytest.mark.parametrize("on_loop", [False, True])
async def test_two_stores_on_one_file_append_to_one_run_in_turn_by_taking_its_lease(
    tmp_path: Path, on_loop: bool
) -> None:
    first = SqliteStore(tmp_path / "runs.db", commit_on_loop=on_loop)
    second = SqliteStore(tmp_path / "runs.db", commit_on_loop=on_loop)
    await first.create_run(RunCreated("r1", "go", None, (), 0.0))
    await first.release_lease("r1")
    for step in range(1, 7):  # each store's idea of the last record is stale every other time
        writer = first if step % 2 else second
        await writer.acquire_lease("r1")
        await writer.append("r1", [call_started(step)])
        await writer.release_lease("r1")
    records = (await second.load("r1")).records
    assert [r.step for r in records[1:] if isinstance(r, CallStarted)] == [1, 2, 3, 4, 5, 6]
    await first.aclose()
    await second.aclose()


@pytest.mark.parametrize("on_loop", [False, True])
async def test_a_store_that_does_not_hold_the_lease_writes_nothing(
    tmp_path: Path, on_loop: bool
) -> None:
    first = SqliteStore(tmp_path / "runs.db", commit_on_loop=on_loop, worker_id="one")
    second = SqliteStore(tmp_path / "runs.db", commit_on_loop=on_loop, worker_id="two")
    await first.create_run(RunCreated("r1", "go", None, (), 0.0))
    with pytest.raises(LeaseHeldError, match="leased by worker 'one'"):
        await second.acquire_lease("r1")
    with pytest.raises(LeaseLostError, match=r"'two' lost its lease \(now leased by worker 'one"):
        await second.append("r1", [call_started(1)])
    assert len((await first.load("r1")).records) == 1
    await first.aclose()
    await second.aclose()


@pytest.mark.parametrize("on_loop", [False, True])
async def test_an_append_to_a_deleted_run_is_refused(tmp_path: Path, on_loop: bool) -> None:
    store = SqliteStore(tmp_path / "runs.db", commit_on_loop=on_loop)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    await store.append("r1", [call_started(1)])
    assert await store.delete_run("r1")
    with pytest.raises(RunNotFoundError):
        await store.append("r1", [call_started(2)])
    await store.aclose()


@pytest.mark.parametrize("on_loop", [False, True])
async def test_an_append_waits_for_another_writer_without_blocking_the_event_loop(
    tmp_path: Path, on_loop: bool
) -> None:
    store = SqliteStore(tmp_path / "runs.db", commit_on_loop=on_loop)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    other = sqlite3.connect(tmp_path / "runs.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    done = anyio.Event()

    async def append() -> None:
        await store.append("r1", [call_started(1)])
        done.set()

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(append)
            for _ in range(20):  # the loop keeps running while the append waits
                await anyio.sleep(0.01)
            assert not done.is_set()
            other.execute("COMMIT")
    other.close()
    assert [type(r) for r in (await store.load("r1")).records] == [RunCreated, CallStarted]
    await store.aclose()


@pytest.mark.parametrize("on_loop", [False, True])
async def test_the_write_ahead_log_is_checkpointed_as_appends_go_on(
    tmp_path: Path, on_loop: bool
) -> None:
    store = SqliteStore(tmp_path / "runs.db", commit_on_loop=on_loop)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    body = ToolResult("c", "t", "x" * 3000)
    for step in range(1, 1501):
        await store.append("r1", [ResultSaved(step, body)])
    wal = tmp_path / "runs.db-wal"
    assert wal.stat().st_size < 16 * 1024 * 1024  # never checkpointed, it reaches 27 MB
    await store.aclose()


@pytest.mark.parametrize("on_loop", [False, True])
async def test_only_commit_on_loop_runs_statements_on_the_event_loops_thread(
    tmp_path: Path, on_loop: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: set[int] = set()
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection: sqlite3.Connection = connect(*args, **kwargs)
        connection.set_trace_callback(lambda statement: threads.add(threading.get_ident()))
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced)
    store = SqliteStore(tmp_path / "runs.db", commit_on_loop=on_loop)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    for step in range(1, 20):
        await store.append("r1", [call_started(step)])
    await store.load("r1")
    assert (threading.get_ident() in threads) is on_loop
    await store.aclose()

"""Store faults that used to pass silently: a file deleted (or its WAL removed) under an open
store, a journal edited to contradict itself, a folder that does not exist or cannot be written,
and a run whose end cannot be saved. Each is detected, refused and reported, typed, naming the
file or the record; the faults are made for real (files deleted, records edited with sqlite3)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from reactloop._core._decisions import StopReason
from reactloop._core._messages import ModelRequest, ModelResponse, ToolMessage
from reactloop._core._records import PhaseDataSaved, RunCreated
from reactloop._durable._stores import SqliteStore, store_from_url
from reactloop._errors import ErrorCode
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import StoreError, UnreadableRunError
from reactloop._tools._tool import tool
from reactloop.testing import FunctionModel, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio


def paying(request: ModelRequest) -> ModelResponse | str:
    if isinstance(request.messages[-1], ToolMessage):
        return "done"
    return reply("", call("pay", amount=5))


def deleting(path: Path, suffix: str, ran: list[int]) -> Any:
    @tool
    def pay(amount: int) -> str:
        """Pay; meanwhile an operator deletes the store's file."""
        ran.append(amount)
        os.remove(f"{path}{suffix}")
        return f"paid {amount}"

    return pay


@pytest.mark.parametrize("on_loop", [False, True])
@pytest.mark.parametrize("suffix", ["", "-wal"])
async def test_a_file_deleted_under_an_open_store_fails_the_run_saying_what_was_lost(
    tmp_path: Path, suffix: str, on_loop: bool
) -> None:
    path, ran = tmp_path / "runs.db", list[int]()
    store = SqliteStore(path, commit_on_loop=on_loop)
    loop = ReActLoop(FunctionModel(paying), tools=[deleting(path, suffix, ran)], store=store)
    result = await loop.run("go")
    assert ran == [5]  # the tool ran once; its result was not pretended saved
    assert result.stop_reason is StopReason.ERROR and isinstance(result.error, StoreError)
    message = result.error.message
    assert str(path) in message and "deleted" in message
    assert "the result of call" in message and "(pay)" in message  # which result was lost
    with pytest.raises(StoreError, match="deleted"):  # and it stays refused, never silent
        await store.list_runs()


async def test_a_journal_edited_to_contradict_itself_is_refused_naming_the_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)

    @tool
    def pay(amount: int) -> str:
        """Pay an amount."""
        return f"paid {amount}"

    run_id = (await ReActLoop(FunctionModel(paying), tools=[pay], store=store).run("go")).run_id
    await store.aclose()
    with sqlite3.connect(path) as connection:  # someone edits the saved result's tool name
        rows = connection.execute("SELECT seq, body FROM records ORDER BY seq").fetchall()
        seq, record = next((n, orjson.loads(b)) for n, b in rows if b"paid 5" in b)
        record["result"]["name"] = "refund"
        connection.execute("UPDATE records SET body = ? WHERE seq = ?", (orjson.dumps(record), seq))
    connection.close()
    with pytest.raises(UnreadableRunError, match=rf"record {seq} \(ResultSaved\)") as refused:
        await SqliteStore(path).load(run_id)
    assert "'refund'" in refused.value.message and "a call of 'pay'" in refused.value.message


@pytest.mark.parametrize("place", ["missing folder", "unwritable folder"])
async def test_a_store_that_cannot_be_opened_is_a_store_error_naming_the_file(
    tmp_path: Path, place: str
) -> None:
    # /sys takes no new files, even from root (the suite may run as root in CI)
    path = tmp_path / "nowhere" / "runs.db" if place == "missing folder" else Path("/sys/runs.db")
    with pytest.raises(StoreError, match=f"{path}.*cannot be opened") as refused:
        await SqliteStore(path).list_runs()
    assert refused.value.code is ErrorCode.STORE
    with pytest.raises(StoreError, match="cannot be opened"):
        await ReActLoop(ScriptedModel(["hi"]), store=f"sqlite:///{path}").run("go")
    with pytest.raises(StoreError, match="cannot be opened"):
        await store_from_url(f"sqlite:///{path}").create_run(RunCreated("r1", "go", None, (), 0.0))


async def test_an_in_memory_sqlite_store_has_no_file_to_lose() -> None:
    store = SqliteStore(":memory:")
    result = await ReActLoop(ScriptedModel(["hi"]), store=store).run("go")
    assert result.stop_reason is StopReason.COMPLETED
    assert [s.run_id for s in await store.list_runs()] == [result.run_id]
    await store.aclose()


@pytest.mark.parametrize("on_loop", [False, True])
async def test_a_relative_path_survives_a_change_of_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_loop: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    store = SqliteStore("runs.db", commit_on_loop=on_loop)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    monkeypatch.chdir(tmp_path.parent)  # the file is where it was: nothing was deleted
    for step in range(3):  # the appends on the event loop open the same file
        await store.append("r1", [PhaseDataSaved({"n": step})])
    assert len((await store.load("r1")).records) == 4
    assert not (tmp_path.parent / "runs.db").exists()
    await store.aclose()

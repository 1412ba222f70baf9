"""Content parts' bytes are kept once by digest in every store (adr/0028): journals refer to
them, loading resolves them, a missing one is a typed error, and older layouts still read."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings

from reactloop._core._approvals import Approve
from reactloop._core._contracts import RunStore
from reactloop._core._messages import ModelRequest, ToolCall, UserMessage
from reactloop._core._parts import AudioPart, DocumentPart, ImagePart, TextPart
from reactloop._core._records import CallStarted, Record, ResultSaved, RunCreated, RunStatus
from reactloop._core._state import ToolResult
from reactloop._durable._parts import digest_of
from reactloop._durable._replay import replay
from reactloop._durable._stores import MemoryStore, PostgresStore, SqliteStore
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import UnreadableRunError
from reactloop._tools._tool import tool
from reactloop.testing import ScriptedModel
from tests.helpers.screenshot import BIG, MB5, crop, five_steps, question, zoom
from tests.helpers.strategies import journals_with_parts

pytestmark = pytest.mark.anyio
FIXTURES = Path(__file__).parent.parent / "fixtures" / "stores"
SMALL = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # the committed v2 sample's image


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(journal=journals_with_parts())
async def test_a_journal_holding_parts_reads_back_exactly(
    any_store: RunStore, journal: list[Record]
) -> None:
    first = journal[0]
    assert isinstance(first, RunCreated)
    await any_store.delete_run(first.run_id)
    await any_store.create_run(first)
    for record in journal[1:]:
        await any_store.append(first.run_id, [record])
    stored = await any_store.load(first.run_id)
    assert list(stored.records) == journal
    assert stored == replay(journal).stored


def sqlite_rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as connection:
        return connection.execute(sql).fetchall()


def file_bytes(path: Path) -> int:
    """The database file and its write-ahead log, as the disk holds them."""
    return sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*"))


async def test_a_five_megabyte_image_is_written_once_for_a_whole_run_and_its_session(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    await store.list_runs()  # the empty file, schema made
    await store.aclose()
    empty = file_bytes(path)
    model = five_steps()
    loop = ReActLoop(model, tools=[crop, zoom], store=SqliteStore(path))
    result = await loop.run(question(BIG), session_id="s")
    assert result.output == "a login form" and len(model.requests) == 5
    await loop.config.store.aclose()  # type: ignore[union-attr]
    grown = file_bytes(path) - empty
    blobs = sqlite_rows(path, "SELECT digest, size, length(data) FROM blobs")
    assert blobs == [(digest_of(BIG), MB5, MB5)]  # input and tool result: one blob
    assert MB5 <= grown < MB5 * 1.05, grown  # once, raw (base64 inline would be 6.7 MB)
    again = ReActLoop(ScriptedModel(["the same form"]), store=SqliteStore(path))
    await again.run(question(BIG), session_id="s")  # the session's history holds it too
    await again.config.store.aclose()  # type: ignore[union-attr]
    assert sqlite_rows(path, "SELECT count(*), sum(size) FROM blobs") == [(1, MB5)]
    assert file_bytes(path) - empty < MB5 * 1.05


def image_layout(body: bytes) -> dict[str, object]:
    parts = orjson.loads(body)["input_parts"]
    found: dict[str, object] = parts[1]
    return found


async def test_a_record_refers_to_its_bytes_by_digest(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    await ReActLoop(ScriptedModel(["ok"]), store=store).run(question(SMALL))
    await store.aclose()
    (body,) = sqlite_rows(path, "SELECT body FROM records WHERE seq = 1")[0]
    assert isinstance(body, bytes)
    assert image_layout(body) == {
        "type": "image",
        "blob": f"sha256:{digest_of(SMALL).removeprefix('sha256:')}",
        "size": len(SMALL),
        "media_type": "image/png",
    }


async def test_a_missing_blob_is_an_unreadable_run_naming_its_digest(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    result = await ReActLoop(ScriptedModel(["ok"]), store=store).run(question(SMALL))
    await store.aclose()
    with sqlite3.connect(path) as connection:
        connection.execute("DELETE FROM blobs")
    with pytest.raises(UnreadableRunError, match=f"blob {digest_of(SMALL)}"):
        await SqliteStore(path).load(result.run_id)


async def test_a_blob_goes_with_the_last_run_referring_to_it(any_store: RunStore) -> None:
    image = DocumentPart(b"%PDF-1.4 the same document")
    for run_id in ("a", "b"):
        parts = (TextPart("read"), image, AudioPart(run_id.encode(), "wav"))
        await any_store.create_run(RunCreated(run_id, "read", None, (), 0.0, input_parts=parts))
    assert await any_store.delete_run("a")
    assert (await any_store.load("b")).created.input_parts[1] == image
    assert await any_store.delete_run("b")
    await any_store.create_run(RunCreated("c", "read", None, (), 0.0, input_parts=(image,)))
    assert (await any_store.load("c")).created.input_parts == (image,)


async def test_a_deleted_runs_blobs_leave_the_memory_store() -> None:
    store = MemoryStore()
    parts = (ImagePart(SMALL),)
    await store.create_run(RunCreated("a", "", None, (), 0.0, session_id="s", input_parts=parts))
    await store.create_run(RunCreated("b", "", None, (), 0.0, session_id="s", input_parts=parts))
    await store.delete_run("a")
    assert list(store._blobs) == [digest_of(SMALL)]
    await store.delete_session("s")
    assert not store._blobs


async def test_a_deleted_runs_blobs_leave_the_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    loop = ReActLoop(ScriptedModel(["ok", "ok"]), store=store)
    first = await loop.run(question(SMALL), session_id="s")
    second = await loop.run(question(SMALL), session_id="s")
    await store.delete_run(first.run_id)
    assert (await store.load(second.run_id)).created.input_parts[1] == ImagePart(SMALL)
    await store.delete_session("s")
    await store.aclose()
    counts = "SELECT (SELECT count(*) FROM blobs), (SELECT count(*) FROM run_blobs)"
    assert sqlite_rows(path, counts) == [(0, 0)]


async def test_the_committed_version_2_sample_with_inline_bytes_still_reads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    shutil.copy(FIXTURES / "runs-v2-parts.db", path)
    store = SqliteStore(path)
    (summary,) = await store.list_runs(session_id="parts")
    stored = await store.load(summary.run_id)
    assert stored.status is RunStatus.FINISHED and stored.output == "a chart and a pdf"
    assert stored.created.input_parts[1] == ImagePart(SMALL)
    pdf = stored.created.input_parts[2]
    assert isinstance(pdf, DocumentPart) and pdf.data is not None and pdf.data.startswith(b"%PDF")
    tool_parts = stored.steps[0].tool_results[0].parts
    assert tool_parts[1:] == (ImagePart(SMALL), AudioPart(b"RIFF....WAVE", "wav"))
    history = await store.session_history("parts")
    assert history[0] == stored.created.input_message()
    await ReActLoop(ScriptedModel(["again"]), store=store).run(question(SMALL), session_id="parts")
    await store.aclose()
    assert sqlite_rows(path, "SELECT size FROM blobs") == [(len(SMALL),)]  # new runs: by digest


@tool(requires_approval=True)
def submit(form: str) -> str:
    """Submit the form."""
    return f"submitted {form}"


def images_sent(request: ModelRequest) -> list[ImagePart]:
    return [
        part
        for message in request.messages
        if isinstance(message, UserMessage)
        for part in message.parts
        if isinstance(part, ImagePart)
    ]


async def test_a_run_resumed_from_the_store_sends_the_image_again(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    first = ReActLoop(
        ScriptedModel([ToolCall("submit", '{"form": "login"}', "c1")]),
        tools=[submit],
        store=SqliteStore(path),
    )
    paused = await first.run(question(BIG))
    assert paused.pending
    await first.config.store.aclose()  # type: ignore[union-attr]
    model = ScriptedModel(["submitted"])
    fresh = ReActLoop(model, tools=[submit], store=SqliteStore(path))
    done = await fresh.resume(paused.run_id, decisions={"c1": Approve()})
    assert done.output == "submitted"
    assert images_sent(model.requests[0]) == [ImagePart(BIG)]


async def test_postgres_keeps_one_blob_for_a_session_and_reads_it_back(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    loop = ReActLoop(ScriptedModel(["one", "two"]), store=store)
    await loop.run(question(SMALL), session_id="s")
    second = await loop.run(question(SMALL), session_id="s")
    stored = await store.load(second.run_id)
    history = await store.session_history("s", before=second.run_id)
    await store.aclose()
    assert stored.created.input_parts[1] == ImagePart(SMALL)
    assert history[0] == question(SMALL)
    with psycopg.connect(postgres_url) as connection:
        rows = connection.execute("SELECT digest, size FROM reactloop_blobs").fetchall()
        connection.execute("DELETE FROM reactloop_blobs")
    assert rows == [(digest_of(SMALL), len(SMALL))]
    reader = PostgresStore(postgres_url)
    try:
        with pytest.raises(UnreadableRunError, match=f"blob {digest_of(SMALL)}"):
            await reader.load(second.run_id)
    finally:
        await reader.aclose()


async def test_an_append_writing_blobs_never_commits_on_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blob_threads: set[int] = set()
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection: sqlite3.Connection = connect(*args, **kwargs)

        def seen(statement: str) -> None:
            if "INTO blobs" in statement:
                blob_threads.add(threading.get_ident())

        connection.set_trace_callback(seen)
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced)
    store = SqliteStore(tmp_path / "runs.db", commit_on_loop=True)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    for step in range(1, 6):
        result = ToolResult(f"c{step}", "shot", "", parts=(ImagePart(SMALL + bytes([step])),))
        await store.append("r1", [CallStarted(step, f"c{step}", "shot"), ResultSaved(step, result)])
    assert blob_threads and threading.get_ident() not in blob_threads
    assert len((await store.load("r1")).records) == 11
    await store.aclose()

"""PostgresStore on a real server: its schema and version, URLs, a missing driver, no secrets."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import psycopg
import pytest

from reactloop._core._messages import ToolCall
from reactloop._core._records import STORE_SCHEMA_VERSION, RunCreated, RunStatus
from reactloop._core._state import RunContext
from reactloop._durable._stores import PostgresStore, SqliteStore, store_from_url
from reactloop._errors import ConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import StoreError
from reactloop._tools._tool import tool
from reactloop.testing import FakeTool, ScriptedModel

pytestmark = pytest.mark.anyio


def query(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as connection:
        return connection.execute(sql).fetchall()


async def test_the_schema_is_created_on_first_use_with_its_version(
    postgres_store: PostgresStore, postgres_url: str
) -> None:
    result = await ReActLoop(ScriptedModel(["hi"]), store=postgres_store).run("go")
    assert query(postgres_url, "SELECT version FROM reactloop_schema") == [(STORE_SCHEMA_VERSION,)]
    (count,) = query(postgres_url, "SELECT count(*) FROM reactloop_records")
    assert count[0] == len((await postgres_store.load(result.run_id)).records) >= 3


async def test_a_database_from_a_newer_schema_is_refused(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as connection:
        connection.execute("CREATE TABLE reactloop_schema (version INTEGER NOT NULL)")
        connection.execute("INSERT INTO reactloop_schema VALUES (%s)", (STORE_SCHEMA_VERSION + 1,))
    store = PostgresStore(postgres_url)
    for _ in range(2):  # refused on every use, not only on the first
        with pytest.raises(StoreError, match=f"schema version {STORE_SCHEMA_VERSION + 1}"):
            await store.list_runs()
    assert store._connections.open_count() == 0


async def test_a_loop_given_a_postgresql_url_uses_and_closes_its_store(postgres_url: str) -> None:
    async with ReActLoop(ScriptedModel(["hi"]), store=postgres_url) as loop:
        result = await loop.run("go")
        store = loop.config.store
        assert isinstance(store, PostgresStore)
        assert (await store.load(result.run_id)).status is RunStatus.FINISHED
    assert store._connections.open_count() == 0


async def test_a_store_closed_opens_again_on_use(postgres_store: PostgresStore) -> None:
    result = await ReActLoop(ScriptedModel(["hi"]), store=postgres_store).run("go")
    await postgres_store.aclose()
    assert (await postgres_store.load(result.run_id)).output == "hi"


async def test_a_server_that_cannot_be_reached_is_a_store_error() -> None:
    store = PostgresStore("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
    with pytest.raises(
        StoreError, match=re.escape("run store 'postgresql://nobody@127.0.0.1:1/none")
    ):
        await store.list_runs()


async def test_no_secret_reaches_the_database(
    postgres_store: PostgresStore, postgres_url: str
) -> None:
    secret = "sk-live-0123456789SECRET"

    @tool
    def lookup(context: RunContext[dict[str, str]]) -> str:
        """Use the deps' key without showing it."""
        return "found" if context.deps["api_key"] == secret else "no key"

    class KeyedModel(ScriptedModel):
        api_key = secret

    loop = ReActLoop(KeyedModel([ToolCall("lookup"), "done"]), tools=[lookup], store=postgres_store)
    assert (await loop.run("go", deps={"api_key": secret})).output == "done"
    rows = query(postgres_url, "SELECT body FROM reactloop_records")
    rows += query(postgres_url, "SELECT * FROM reactloop_runs")
    stored = repr(rows).encode() + b"".join(bytes(r[0]) for r in rows if isinstance(r[0], bytes))
    assert b"found" in stored and secret.encode() not in stored


def test_postgresql_urls_make_a_postgres_store() -> None:
    for url in ("postgresql://u@db:5432/app", "postgres://u@db/app"):
        store = store_from_url(url)
        assert isinstance(store, PostgresStore) and store.url == url


def test_the_password_never_shows_in_the_repr() -> None:
    store = PostgresStore("postgresql://app:hunter2@db/app", worker_id="w1")
    assert repr(store) == "PostgresStore('postgresql://app:***@db/app', worker_id='w1')"


def test_a_missing_driver_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'reactloop\[postgres\]'"):
        store_from_url("postgresql://u@db/app")


@pytest.mark.parametrize("seconds", [0, -1.0, True, 86401])
def test_a_lease_length_out_of_range_is_refused(seconds: float) -> None:
    with pytest.raises(ConfigurationError, match="lease_seconds"):
        PostgresStore("postgresql://u@db/app", lease_seconds=seconds)


async def test_the_committed_version_1_sample_reads_back_the_same_from_postgresql(
    postgres_store: PostgresStore, tmp_path: Path
) -> None:
    path = tmp_path / "runs.db"
    shutil.copy(Path(__file__).parent.parent / "fixtures" / "stores" / "runs-v1.db", path)
    sqlite = SqliteStore(path)
    summaries = await sqlite.list_runs()
    assert summaries
    for summary in reversed(summaries):
        stored = await sqlite.load(summary.run_id)
        first, *rest = stored.records
        assert isinstance(first, RunCreated)
        await postgres_store.create_run(first)
        await postgres_store.append(first.run_id, rest)
        assert await postgres_store.load(summary.run_id) == stored
    assert [s.status for s in await postgres_store.list_runs()] == [s.status for s in summaries]
    sample = await sqlite.session_history("sample")
    assert sample and await postgres_store.session_history("sample") == sample
    await sqlite.aclose()


async def test_the_committed_version_1_sample_is_upgraded_and_still_reads(
    postgres_url: str,
) -> None:
    sample = Path(__file__).parent.parent / "fixtures" / "stores" / "postgres-v1.sql"
    with psycopg.connect(postgres_url) as connection:
        connection.execute(sample.read_text())  # version 1's tables and rows, as 0.1 wrote them
    store = PostgresStore(postgres_url)
    try:
        newer, older = await store.list_runs(session_id="sample")
        done, failed = await store.load(older.run_id), await store.load(newer.run_id)
        assert (done.status, failed.status) == (RunStatus.FINISHED, RunStatus.FAILED)
        assert done.output == "done 😀" and done.phase_data == {"plan": "1. search"}
        assert len(await store.session_history("sample")) == 8
        versions = query(postgres_url, "SELECT version FROM reactloop_schema ORDER BY version")
        assert versions == [(1,), (STORE_SCHEMA_VERSION,)]
        search = FakeTool("search")
        loop = ReActLoop(ScriptedModel(["ok"]), tools=[search], store=store)
        resumed = await loop.resume(failed.run_id)  # leased and fenced on the upgraded row
        assert resumed.output == "ok" and not search.calls
    finally:
        await store.aclose()

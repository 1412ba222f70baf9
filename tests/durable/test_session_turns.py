"""`session_turns`: every store reads a session's runs a page at a time, newest first (adr/0034),
and the pages together are exactly what `session_history` reads whole."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import psycopg
import pytest

from reactloop._core._approvals import GivenDecision
from reactloop._core._contracts import SessionTurnsStore
from reactloop._core._decisions import StopReason
from reactloop._core._messages import Usage, UserMessage
from reactloop._core._records import RunEnded, RunStatus, SessionTurn
from reactloop._durable._codec import encode_apart
from reactloop._durable._stores import PostgresStore, SqliteStore, Store
from reactloop._durable._turns import Stamp, TurnCache, postgres_turns, sqlite_turns
from reactloop._errors import ConfigurationError
from reactloop.approval import Approve, DecisionScope
from tests.helpers.stored_sessions import Turn, journal, write_session

pytestmark = pytest.mark.anyio

STORES = Path(__file__).parent.parent / "fixtures" / "stores"


async def two_sessions(store: Store) -> list[str]:
    """Runs of session "s" (returned, oldest first) with runs of session "t" in between."""
    mine: list[str] = []
    for position in range(5):
        mine += await write_session(store, "s", [Turn(f"q{position}", ("x",))], f"s{position}-")
        await write_session(store, "t", [Turn(f"other{position}")], f"t{position}-")
    return mine


async def test_every_store_reads_a_session_by_pages(any_store: Store) -> None:
    assert isinstance(any_store, SessionTurnsStore)


async def test_a_page_is_the_newest_runs_of_the_session_newest_first(any_store: Store) -> None:
    ids = await two_sessions(any_store)
    page = await any_store.session_turns("s", limit=2)
    assert [turn.run_id for turn in page] == [ids[4], ids[3]]
    for turn in page:
        stored = await any_store.load(turn.run_id)
        assert turn.messages == stored.messages and turn.status is RunStatus.FINISHED


async def test_pages_before_a_run_go_on_to_the_sessions_start(any_store: Store) -> None:
    ids = await two_sessions(any_store)
    second = await any_store.session_turns("s", before=ids[3], limit=2)
    last = await any_store.session_turns("s", before=ids[1], limit=2)
    assert [t.run_id for t in second] == [ids[2], ids[1]] and [t.run_id for t in last] == [ids[0]]


async def test_the_oldest_page_is_read_oldest_first(any_store: Store) -> None:
    ids = await two_sessions(any_store)
    page = await any_store.session_turns("s", limit=2, oldest=True)
    assert [turn.run_id for turn in page] == ids[:2]


async def test_all_pages_together_are_the_whole_history(any_store: Store) -> None:
    await two_sessions(any_store)
    pages = await any_store.session_turns("s", limit=100)
    read = [message for turn in reversed(pages) for message in turn.messages]
    assert read == await any_store.session_history("s")


async def test_an_unknown_session_has_no_turns(any_store: Store) -> None:
    await two_sessions(any_store)
    assert await any_store.session_turns("nobody") == []


async def test_a_turn_holds_the_session_wide_decisions_of_its_run(any_store: Store) -> None:
    always = GivenDecision("c1", "pay", Approve(always=DecisionScope.SESSION))
    await write_session(any_store, "s", [Turn("q", standing=(always,))])
    (turn,) = await any_store.session_turns("s")
    assert turn.standing == (always,)


async def test_a_deleted_run_is_no_longer_a_turn(any_store: Store) -> None:
    ids = await two_sessions(any_store)
    await any_store.delete_run(ids[4])
    page = await any_store.session_turns("s", limit=1)
    assert [turn.run_id for turn in page] == [ids[3]]
    await any_store.delete_session("s")
    assert await any_store.session_turns("s") == []


@pytest.mark.parametrize("limit", [0, -1, True, 1.5])
async def test_a_page_limit_must_be_a_positive_int(any_store: Store, limit: object) -> None:
    with pytest.raises(ConfigurationError, match="limit"):
        await any_store.session_turns("s", limit=limit)  # type: ignore[arg-type]


async def test_the_version_1_sqlite_sample_reads_by_pages(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    shutil.copy(STORES / "runs-v1.db", path)
    store = SqliteStore(path)
    newer, older = await store.session_turns("sample")
    assert (newer.status, older.status) == (RunStatus.FAILED, RunStatus.FINISHED)
    read = [*older.messages, *newer.messages]
    assert read == await store.session_history("sample") and len(read) == 8
    await store.aclose()


async def test_the_version_1_postgres_sample_reads_by_pages(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as connection:
        connection.execute((STORES / "postgres-v1.sql").read_text())
    store = PostgresStore(postgres_url)
    try:
        newer, older = await store.session_turns("sample")
        read = [*older.messages, *newer.messages]
        assert read == await store.session_history("sample") and len(read) == 8
    finally:
        await store.aclose()


async def test_a_run_read_again_after_it_grew_shows_what_it_holds_now(any_store: Store) -> None:
    await write_session(any_store, "s", [Turn("q", ended=False)])
    (before,) = await any_store.session_turns("s")
    await any_store.append("r0", [RunEnded(StopReason.FINAL_ANSWER, "", "done", Usage(), 3.0)])
    (after,) = await any_store.session_turns("s")
    assert (before.status, after.status) == (RunStatus.RUNNING, RunStatus.FINISHED)


async def test_a_run_deleted_and_made_again_under_its_id_is_read_anew(any_store: Store) -> None:
    await write_session(any_store, "s", [Turn("first question")])
    await any_store.session_turns("s")
    await any_store.delete_run("r0")
    await write_session(any_store, "s", [Turn("second question")])
    (turn,) = await any_store.session_turns("s")
    assert turn.messages[0] == UserMessage("second question")


async def test_a_turn_read_twice_is_the_same(any_store: Store) -> None:
    await two_sessions(any_store)
    assert await any_store.session_turns("s") == await any_store.session_turns("s")


def test_a_stores_turn_cache_keeps_the_most_recently_used_turns() -> None:
    cache, stamp = TurnCache(size=2), (1, 8)
    for run_id in ("a", "b"):
        bodies = [encode_apart(record)[0] for record in journal(run_id, "s", Turn("q"), "t")]
        cache.turn(run_id, stamp, (bodies, {}))
    again = cache.cached("a", stamp)
    assert again is not None and cache.cached("a", (1, 9)) is None  # a grown journal is not it
    cache.turn("a", stamp, again)  # used again: "b" is now the least recently used
    bodies = [encode_apart(record)[0] for record in journal("c", "s", Turn("q"), "t")]
    cache.turn("c", stamp, (bodies, {}))
    assert cache.cached("b", stamp) is None and cache.cached("a", stamp) is again


async def test_a_run_deleted_while_its_page_is_read_is_left_out_on_sqlite(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    await write_session(store, "s", [Turn("kept"), Turn("gone")])
    await store.aclose()

    def deleting(run_id: str, stamp: Stamp) -> SessionTurn | None:
        if run_id == "r1":  # another process deletes it between the page and its records
            connection.execute("DELETE FROM records WHERE run_id = 'r1'")
        return None

    with sqlite3.connect(tmp_path / "runs.db") as connection:
        read = sqlite_turns(connection, ("s", None, 10, False), deleting)
    assert [run_id for run_id, _, _ in read] == ["r0"]


async def test_a_run_deleted_while_its_page_is_read_is_left_out_on_postgres(
    postgres_store: PostgresStore, postgres_url: str
) -> None:
    await write_session(postgres_store, "s", [Turn("kept"), Turn("gone")])

    def deleting(run_id: str, stamp: Stamp) -> SessionTurn | None:
        if run_id == "r1":
            connection.execute("DELETE FROM reactloop_runs WHERE run_id = %s", (b"r1",))
        return None

    with psycopg.connect(postgres_url) as connection:
        read = postgres_turns(connection, (b"s", None), (10, False), deleting)
    assert [run_id for run_id, _, _ in read] == ["r0"]

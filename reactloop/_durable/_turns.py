"""A session's runs read a page at a time (`SessionTurnsStore.session_turns`, adr/0034).

A new turn reads the session newest first and stops once its context window is full, so the
cost of a turn does not grow with the session's age. The SQL here uses each store's index on
(session id, position): a page is one range scan from the newest end, whatever the session's
length.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reactloop._core import SessionTurn
from reactloop._durable._codec import decode
from reactloop._durable._replay import replay
from reactloop._durable._sqlite_blobs import run_blobs

if TYPE_CHECKING:
    import psycopg

_LAST = 9223372036854775807  # the largest position: "before no run" reads to the newest


def turn_of(bodies: Sequence[bytes], blobs: dict[str, bytes]) -> SessionTurn:
    """One run's journal read as a session turn: its messages and "always" decisions."""
    replayed = replay([decode(body, blobs) for body in bodies])
    stored = replayed.stored
    return SessionTurn(stored.run_id, stored.status, stored.messages, replayed.session_wide)


def _page_order(oldest: bool) -> str:
    return "ASC" if oldest else "DESC"


def sqlite_turns(
    connection: sqlite3.Connection,
    session_id: str,
    before: str | None,
    limit: int,
    oldest: bool,
) -> list[tuple[list[bytes], dict[str, bytes]]]:
    """The journals (record bodies and blobs) of one page of a session's runs, in page order."""
    ids = connection.execute(
        "SELECT run_id FROM runs WHERE session_id = ? AND position < COALESCE("
        f"(SELECT position FROM runs WHERE run_id = ?), {_LAST})"
        f" ORDER BY position {_page_order(oldest)} LIMIT ?",
        (session_id, before, limit),
    ).fetchall()
    journals: list[tuple[list[bytes], dict[str, bytes]]] = []
    for (run_id,) in ids:
        rows = connection.execute(
            "SELECT body FROM records WHERE run_id = ? ORDER BY seq", (run_id,)
        ).fetchall()
        journals.append(([row[0] for row in rows], run_blobs(connection, run_id)))
    return journals


def postgres_turns(
    connection: psycopg.Connection[Any],
    keys: tuple[bytes, bytes | None],
    limit: int,
    oldest: bool,
) -> tuple[list[list[bytes]], dict[str, bytes]]:
    """The record bodies of one page of a session's runs (`keys`: the session's and `before`'s,
    as stored), in page order, and the blobs they refer to: two round trips."""
    order = _page_order(oldest)
    page = (
        "SELECT run_id, position FROM reactloop_runs WHERE session_id = %s AND position <"
        f" coalesce((SELECT position FROM reactloop_runs WHERE run_id = %s), {_LAST})"
        f" ORDER BY position {order} LIMIT %s"
    )
    rows = connection.execute(
        f"WITH page AS ({page}) SELECT p.run_id, r.body FROM page AS p"
        f" JOIN reactloop_records AS r USING (run_id) ORDER BY p.position {order}, r.seq",
        (*keys, limit),
    ).fetchall()
    grouped: dict[bytes, list[bytes]] = {}
    for run_id, body in rows:
        grouped.setdefault(bytes(run_id), []).append(bytes(body))
    blobs = connection.execute(
        "SELECT DISTINCT b.digest, b.data FROM reactloop_run_blobs AS r"
        " JOIN reactloop_blobs AS b ON b.digest = r.digest WHERE r.run_id = ANY(%s)",
        (list(grouped),),
    ).fetchall()
    return list(grouped.values()), {digest: bytes(data) for digest, data in blobs}

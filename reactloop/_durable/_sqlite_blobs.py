"""The SQLite store's blob tables: content parts' bytes kept once by digest (adr/0028).

`blobs` holds each distinct content once; `run_blobs` says which runs refer to which blob, so a
run's blobs load with it and a deleted run's blobs go when no other run refers to them. Every
function runs inside the caller's transaction (reads outside one)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

UPGRADE = (  # schema version 3
    "CREATE TABLE IF NOT EXISTS blobs ("
    " digest TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS run_blobs ("
    " run_id TEXT NOT NULL, digest TEXT NOT NULL, PRIMARY KEY (run_id, digest)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS run_blobs_by_digest ON run_blobs (digest)",
)


def put_blobs(connection: sqlite3.Connection, run_id: str, blobs: Mapping[str, bytes]) -> None:
    """Keep `blobs` (a content already kept is not written again) as the run's."""
    if not blobs:
        return
    connection.executemany(
        "INSERT OR IGNORE INTO blobs (digest, size, data) VALUES (?, ?, ?)",
        [(digest, len(data), data) for digest, data in blobs.items()],
    )
    connection.executemany(
        "INSERT OR IGNORE INTO run_blobs (run_id, digest) VALUES (?, ?)",
        [(run_id, digest) for digest in blobs],
    )


def run_blobs(connection: sqlite3.Connection, run_id: str) -> dict[str, bytes]:
    """The blobs the run's records refer to, by digest (a missing one is left out: reading the
    record that names it says so)."""
    rows = connection.execute(
        "SELECT b.digest, b.data FROM run_blobs AS r JOIN blobs AS b ON b.digest = r.digest"
        " WHERE r.run_id = ?",
        (run_id,),
    ).fetchall()
    return {digest: bytes(data) for digest, data in rows}


def run_journal(
    connection: sqlite3.Connection, run_id: str
) -> tuple[list[bytes], dict[str, bytes]]:
    """The run's record bodies in order, and the blobs they refer to."""
    rows = connection.execute(
        "SELECT body FROM records WHERE run_id = ? ORDER BY seq", (run_id,)
    ).fetchall()
    return [row[0] for row in rows], run_blobs(connection, run_id)


def forget_blobs(connection: sqlite3.Connection, where: str, value: object) -> None:
    """Before runs matching `where` are deleted: drop their references, and the blobs no other
    run refers to."""
    runs = f"SELECT run_id FROM runs WHERE {where}"
    digests = connection.execute(
        f"SELECT DISTINCT digest FROM run_blobs WHERE run_id IN ({runs})", (value,)
    ).fetchall()
    connection.execute(f"DELETE FROM run_blobs WHERE run_id IN ({runs})", (value,))
    connection.executemany(
        "DELETE FROM blobs WHERE digest = ?1"
        " AND NOT EXISTS (SELECT 1 FROM run_blobs WHERE digest = ?1)",
        digests,
    )

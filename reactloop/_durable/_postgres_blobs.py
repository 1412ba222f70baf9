"""The PostgreSQL store's blob tables: content parts' bytes kept once by digest (adr/0028).

`reactloop_blobs` holds each distinct content once; `reactloop_run_blobs` says which runs refer
to which blob (gone with the run: ON DELETE CASCADE), so a run's blobs load with it and a
deleted run's blobs go when no other run refers to them. Writers of references take a shared
advisory lock and deleters an exclusive one, so a blob is never deleted while a transaction not
yet committed starts to refer to it. Every function runs inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

UPGRADE = (  # schema version 3
    "CREATE TABLE IF NOT EXISTS reactloop_blobs ("
    " digest TEXT PRIMARY KEY, size BIGINT NOT NULL, data BYTEA NOT NULL)",
    "ALTER TABLE reactloop_blobs ALTER COLUMN data SET STORAGE EXTERNAL",  # media: no pglz
    "CREATE TABLE IF NOT EXISTS reactloop_run_blobs ("
    " run_id BYTEA NOT NULL REFERENCES reactloop_runs (run_id) ON DELETE CASCADE,"
    " digest TEXT NOT NULL, PRIMARY KEY (run_id, digest))",
    "CREATE INDEX IF NOT EXISTS reactloop_run_blobs_by_digest ON reactloop_run_blobs (digest)",
)
_LOCK = "hashtext('reactloop_blobs')"


def put_blobs(
    connection: psycopg.Connection[Any], run_key: bytes, blobs: Mapping[str, bytes]
) -> None:
    """Keep `blobs` as the run's; the bytes of a content already kept are not even sent."""
    if not blobs:
        return
    connection.execute(f"SELECT pg_advisory_xact_lock_shared({_LOCK})")
    rows = connection.execute(
        "SELECT digest FROM reactloop_blobs WHERE digest = ANY(%s)", (list(blobs),)
    ).fetchall()
    known = {row[0] for row in rows}
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO reactloop_blobs (digest, size, data) VALUES (%s, %s, %s)"
            " ON CONFLICT (digest) DO NOTHING",
            [(d, len(data), data) for d, data in blobs.items() if d not in known],
        )
        cursor.executemany(
            "INSERT INTO reactloop_run_blobs (run_id, digest) VALUES (%s, %s)"
            " ON CONFLICT DO NOTHING",
            [(run_key, digest) for digest in blobs],
        )


def blobs_where(connection: psycopg.Connection[Any], where: str, *values: Any) -> dict[str, bytes]:
    """The blobs referred to by the runs matching `where` (on `run`, the runs table)."""
    return blobs_of(connection.execute(blobs_query(where), values).fetchall())


def blobs_query(where: str) -> str:
    """The query `blobs_where` sends (for a caller pipelining it with others)."""
    return (
        "SELECT DISTINCT b.digest, b.data FROM reactloop_runs AS run"
        " JOIN reactloop_run_blobs AS r ON r.run_id = run.run_id"
        f" JOIN reactloop_blobs AS b ON b.digest = r.digest WHERE {where}"
    )


def blobs_of(rows: Sequence[Sequence[Any]]) -> dict[str, bytes]:
    """The blobs by digest, from the rows of `blobs_query`."""
    return {digest: bytes(data) for digest, data in rows}


def delete_runs(connection: psycopg.Connection[Any], column: str, value: bytes) -> int:
    """Delete runs by one column (records and references go with them: ON DELETE CASCADE),
    then the blobs no other run refers to; how many runs there were."""
    with connection.transaction():
        connection.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
        rows = connection.execute(
            "SELECT DISTINCT r.digest FROM reactloop_run_blobs AS r JOIN reactloop_runs AS run"
            f" ON run.run_id = r.run_id WHERE run.{column} = %s",
            (value,),
        ).fetchall()
        cursor = connection.execute(f"DELETE FROM reactloop_runs WHERE {column} = %s", (value,))
        connection.execute(
            "DELETE FROM reactloop_blobs AS b WHERE b.digest = ANY(%s) AND NOT EXISTS"
            " (SELECT 1 FROM reactloop_run_blobs AS r WHERE r.digest = b.digest)",
            ([row[0] for row in rows],),
        )
        return cursor.rowcount

"""The PostgreSQL store's schema: its tables, created on first use, and their upgrades."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reactloop._core import STORE_SCHEMA_VERSION
from reactloop._durable._postgres_blobs import UPGRADE as BLOB_TABLES
from reactloop._stored_errors import StoreError

if TYPE_CHECKING:
    import psycopg

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS reactloop_runs (
        run_id BYTEA PRIMARY KEY,
        position BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
        status TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        user_id BYTEA,
        session_id BYTEA,
        lease_owner TEXT,
        lease_expires TIMESTAMPTZ)""",
    """CREATE TABLE IF NOT EXISTS reactloop_records (
        run_id BYTEA NOT NULL REFERENCES reactloop_runs (run_id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        body BYTEA NOT NULL,
        PRIMARY KEY (run_id, seq))""",
    "CREATE INDEX IF NOT EXISTS reactloop_runs_by_session ON reactloop_runs (session_id, position)",
    "CREATE INDEX IF NOT EXISTS reactloop_runs_by_created ON reactloop_runs (created_at)",
    "CREATE INDEX IF NOT EXISTS reactloop_runs_running ON reactloop_runs (position)"
    " WHERE status = 'running'",
)
_UPGRADES: dict[int, tuple[str, ...]] = {
    2: ("ALTER TABLE reactloop_runs ADD COLUMN IF NOT EXISTS fence BIGINT NOT NULL DEFAULT 0",),
    3: BLOB_TABLES,  # content parts' bytes apart, once by digest (adr/0028)
}


def migrate(connection: psycopg.Connection[Any]) -> None:
    """Create the schema on first use and upgrade an older one in place (one worker at a time:
    an advisory lock); refuse a newer version."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(hashtext('reactloop_schema'))")
        connection.execute("CREATE TABLE IF NOT EXISTS reactloop_schema (version INTEGER NOT NULL)")
        row = connection.execute("SELECT max(version) FROM reactloop_schema").fetchone()
        version = 0 if row is None or row[0] is None else row[0]
        if version > STORE_SCHEMA_VERSION:
            raise StoreError(
                f"the run store was written by schema version {version}; this reactloop reads "
                f"versions up to {STORE_SCHEMA_VERSION}: upgrade reactloop"
            )
        if version < STORE_SCHEMA_VERSION:
            if version < 1:
                for statement in _SCHEMA:
                    connection.execute(statement)
            for upgrade in range(max(version, 1) + 1, STORE_SCHEMA_VERSION + 1):
                for statement in _UPGRADES[upgrade]:
                    connection.execute(statement)
            connection.execute("INSERT INTO reactloop_schema VALUES (%s)", (STORE_SCHEMA_VERSION,))

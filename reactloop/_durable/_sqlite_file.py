"""The SQLite store's file and schema: creating the file owner-only, the tables and their
upgrades, one write transaction, and noticing when the file is deleted or replaced under an
open connection (SQLite would go on writing into the unlinked file)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from attrs import frozen

from reactloop._core import STORE_SCHEMA_VERSION
from reactloop._durable._sqlite_blobs import UPGRADE as BLOB_TABLES
from reactloop._stored_errors import StoreError

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runs (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        user_id TEXT,
        session_id TEXT)""",
    """CREATE TABLE IF NOT EXISTS records (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        body BLOB NOT NULL,
        PRIMARY KEY (run_id, seq)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS runs_by_session ON runs (session_id, position)",
    "CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at)",
)
_UPGRADES: dict[int, tuple[str, ...]] = {
    2: (  # leases across processes: owner, expiry (epoch seconds), fence
        "ALTER TABLE runs ADD COLUMN lease_owner TEXT",
        "ALTER TABLE runs ADD COLUMN lease_expires REAL",
        "ALTER TABLE runs ADD COLUMN fence INTEGER NOT NULL DEFAULT 0",
    ),
    3: BLOB_TABLES,  # content parts' bytes apart, once by digest (adr/0028)
}


class Busy(Exception):
    """Another process holds the file's write lock (an attempt to retry after a pause)."""


def create_private(path: str) -> None:
    """Create the database file owner-only before SQLite opens it (its WAL files follow suit)."""
    if path == ":memory:" or os.path.exists(path):
        return
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: committed whole, or rolled back whole."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _version(connection: sqlite3.Connection) -> int:
    """The file's schema version; a newer one than this reactloop reads is a `StoreError`."""
    (version,) = connection.execute("PRAGMA user_version").fetchone()
    if version > STORE_SCHEMA_VERSION:
        raise StoreError(
            f"the run store was written by schema version {version}; this reactloop reads "
            f"versions up to {STORE_SCHEMA_VERSION}: upgrade reactloop"
        )
    return int(version)


def migrate(connection: sqlite3.Connection) -> None:
    """Create the schema on first use and upgrade an older file in place (version 1 files gain
    the lease columns, version 2 files the blob tables); refuse a file written by a newer
    version."""
    if _version(connection) == STORE_SCHEMA_VERSION:
        return
    with transaction(connection):
        version = _version(connection)  # again, under the write lock: another process may have
        if version < 1:
            for statement in _SCHEMA:
                connection.execute(statement)
        for upgrade in range(max(version, 1) + 1, STORE_SCHEMA_VERSION + 1):
            for statement in _UPGRADES[upgrade]:
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {STORE_SCHEMA_VERSION}")


def is_busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def unopenable(path: str, exc: BaseException) -> StoreError:
    """A file the store cannot open or create, said with the path and the reason."""
    folder = os.path.dirname(os.path.abspath(path))
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    why = "does not exist" if not os.path.isdir(folder) else "must be writable"
    return StoreError(
        f"run store {path!r} cannot be opened ({reason}): its folder {folder!r} {why}, since "
        "SQLite creates the file and its WAL beside it"
    )


@frozen
class FileIdentity:
    """Which file (device and inode) a path named when the store opened it, and its WAL's; the
    path is kept absolute, so a later change of working directory is not taken for a deletion."""

    path: str
    database: tuple[int, int]
    wal: tuple[int, int] | None

    @classmethod
    def of(cls, path: str) -> FileIdentity:
        absolute = os.path.abspath(path)
        return cls(absolute, _inode(absolute) or (0, 0), _inode(f"{absolute}-wal"))

    def changed(self) -> str | None:
        """What happened to the files since, if anything (two `stat` calls)."""
        now = _inode(self.path)
        if now != self.database:
            return "the database file was deleted" if now is None else "the file was replaced"
        if self.wal is not None and _inode(f"{self.path}-wal") != self.wal:
            return "its write-ahead log (-wal file) was deleted or replaced"
        return None


def _inode(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return (found.st_dev, found.st_ino)

"""`PostgresStore`: runs in a PostgreSQL database shared by many workers, with run leases.

The driver is psycopg 3's blocking API in worker threads (`anyio.to_thread.run_sync`), the one
way that works on asyncio and trio alike (psycopg's async API and asyncpg are asyncio-only; see
ADR-0010). One connection per store, guarded by a lock, each append one transaction. A run is
driven by one worker at a time: its row holds a lease (owner, expiry by the server's clock),
taken when the run is created or resumed, renewed by each append and by the loop's heartbeat,
released when the run ends. A worker whose lease was taken over can no longer append.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload
from urllib.parse import urlsplit, urlunsplit

import anyio.to_thread

from reactloop._errors import ConfigurationError
from reactloop._messages import Message
from reactloop._stored_errors import LeaseHeldError, RunNotFoundError, SessionBusyError, StoreError
from reactloop._stores._codec import decode, encode
from reactloop._stores._records import (
    SCHEMA_VERSION,
    Record,
    RunCreated,
    RunStatus,
    RunSummary,
    StoredRun,
    status_after,
)
from reactloop._stores._replay import replay
from reactloop._validate import checked_arguments, fail, number, text

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
INSTALL = "pip install 'reactloop[postgres]'"

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
_LEASE = "lease_owner = %(owner)s, lease_expires = now() + make_interval(secs => %(ttl)s)"
_NO_LEASE = "lease_owner = NULL, lease_expires = NULL"
_SUMMARY = "SELECT run_id, status, created_at, updated_at, user_id, session_id FROM reactloop_runs"


def _driver() -> Any:
    """The psycopg module, imported only when a PostgreSQL store is made."""
    try:
        return importlib.import_module("psycopg")
    except ImportError as exc:
        raise ConfigurationError(
            f"PostgresStore needs the psycopg driver, which is not installed: {INSTALL}",
            option="store",
            value="postgresql://",
            rule=f"the postgres extra installed ({INSTALL})",
        ) from exc


def _redacted(url: str) -> str:
    """The URL without its password, for messages and repr."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _default_worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _migrate(connection: psycopg.Connection[Any]) -> None:
    """Create the schema on first use (one worker at a time); refuse a newer version."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(hashtext('reactloop_schema'))")
        connection.execute("CREATE TABLE IF NOT EXISTS reactloop_schema (version INTEGER NOT NULL)")
        row = connection.execute("SELECT max(version) FROM reactloop_schema").fetchone()
        version = 0 if row is None or row[0] is None else row[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the run store was written by schema version {version}; this reactloop reads "
                f"versions up to {SCHEMA_VERSION}: upgrade reactloop"
            )
        if version < SCHEMA_VERSION:
            for statement in _SCHEMA:
                connection.execute(statement)
            connection.execute("INSERT INTO reactloop_schema VALUES (%s)", (SCHEMA_VERSION,))


_MAX_LEASE = 86_400.0
_SCHEMES = ("postgresql", "postgres")


def _checked_url(url: object) -> str:
    """A `postgresql://` URL, or a libpq `key=value` connection string."""
    given = text("PostgresStore.url", url)
    scheme, found, _ = given.partition("://")
    if (found and scheme not in _SCHEMES) or (not found and "=" not in given):
        rule = "a postgresql:// URL or a libpq connection string (host=... dbname=...)"
        fail("PostgresStore.url", url, rule)
    return given


def _checked_worker(worker_id: object) -> str:
    """A worker name: non-empty, without NUL characters (PostgreSQL text cannot hold them)."""
    name = text("PostgresStore.worker_id", worker_id)
    if "\x00" in name:
        fail("PostgresStore.worker_id", worker_id, "a worker name without NUL characters")
    return name


@checked_arguments
class PostgresStore:
    """Runs in a PostgreSQL database (schema created on first use), shared by many workers.

    `worker_id` names this store's leases (default: host, pid and a random suffix);
    `lease_seconds` is how long a lease lasts without renewal before another worker may claim
    the run.
    """

    def __init__(
        self, url: str, *, worker_id: str | None = None, lease_seconds: float = 30.0
    ) -> None:
        self.url = _checked_url(url)
        self.worker_id = _default_worker() if worker_id is None else _checked_worker(worker_id)
        seconds = number("PostgresStore.lease_seconds", lease_seconds)
        if seconds > _MAX_LEASE:
            fail("PostgresStore.lease_seconds", lease_seconds, "seconds in (0, 86400]")
        self.lease_seconds = float(seconds)
        self._psycopg = _driver()
        self._lock = threading.Lock()
        self._connection: psycopg.Connection[Any] | None = None

    def __repr__(self) -> str:
        return f"PostgresStore({_redacted(self.url)!r}, worker_id={self.worker_id!r})"

    def _connect(self) -> psycopg.Connection[Any]:
        connection = self._connection
        if connection is None or connection.closed:
            connection = self._psycopg.connect(self.url, autocommit=True)
            try:
                _migrate(connection)
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return connection

    def _locked(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        with self._lock:
            try:
                return work(self._connect())
            except self._psycopg.Error as exc:
                raise StoreError(f"run store {_redacted(self.url)!r} failed: {exc}") from exc

    async def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """`work` on the connection, in a worker thread; a cancelled caller waits for it, so a
        transaction is never left half done."""
        return await anyio.to_thread.run_sync(self._locked, work)

    def _lease(self, **more: Any) -> dict[str, Any]:
        return {"owner": self.worker_id, "ttl": self.lease_seconds, **more}

    async def create_run(self, created: RunCreated) -> None:
        """Record a new run (leased to this worker) and its `RunCreated` record, atomically."""
        body = encode(created)
        row = self._lease(
            id=_key(created.run_id),
            status=RunStatus.RUNNING.value,
            at=created.created_at,
            now=time.time(),
            user=_key(created.user_id),
            session=_key(created.session_id),
        )

        def work(connection: psycopg.Connection[Any]) -> None:
            with connection.transaction():
                if created.session_id is not None:
                    self._check_session(connection, created.session_id)
                connection.execute(
                    "INSERT INTO reactloop_runs (run_id, status, created_at, updated_at, user_id,"
                    " session_id, lease_owner, lease_expires) VALUES (%(id)s, %(status)s,"
                    " %(at)s, %(now)s, %(user)s, %(session)s, %(owner)s,"
                    " now() + make_interval(secs => %(ttl)s))",
                    row,
                )
                connection.execute(
                    "INSERT INTO reactloop_records (run_id, seq, body) VALUES (%s, 1, %s)",
                    (_key(created.run_id), body),
                )

        await self._run(work)

    def _check_session(self, connection: psycopg.Connection[Any], session_id: str) -> None:
        """New turns of one session start one at a time across workers; `SessionBusyError`
        while another worker drives a run of the session (a live lease)."""
        lock = hashlib.blake2b(_key(f"reactloop-session:{session_id}"), digest_size=8)
        connection.execute(
            "SELECT pg_advisory_xact_lock(%s)", (int.from_bytes(lock.digest(), signed=True),)
        )
        busy = connection.execute(
            "SELECT 1 FROM reactloop_runs WHERE session_id = %s AND status = 'running' AND"
            " lease_owner <> %s AND lease_expires > now() LIMIT 1",
            (_key(session_id), self.worker_id),
        ).fetchone()
        if busy is not None:
            raise SessionBusyError(session_id)

    async def append(self, run_id: str, records: Sequence[Record]) -> None:
        """Append `records` to the run's journal in one transaction (all or none).

        The append renews this worker's lease, or releases it when the records end the run; a
        run leased to another worker is a `LeaseHeldError` and nothing is written.
        """
        bodies = [encode(record) for record in records]
        status = status_after(list(records))

        def work(connection: psycopg.Connection[Any]) -> None:
            with connection.transaction():
                self._check_lease(connection, run_id)
                row = connection.execute(
                    "SELECT coalesce(max(seq), 0) FROM reactloop_records WHERE run_id = %s",
                    (_key(run_id),),
                ).fetchone()
                last = 0 if row is None else int(row[0])
                with connection.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO reactloop_records (run_id, seq, body) VALUES (%s, %s, %s)",
                        [(_key(run_id), last + 1 + i, b) for i, b in enumerate(bodies)],
                    )
                self._set_status(connection, run_id, status)

        await self._run(work)

    def _check_lease(self, connection: psycopg.Connection[Any], run_id: str) -> None:
        """Lock the run's row; refuse if another worker holds a live lease on it."""
        row = connection.execute(
            "SELECT lease_owner, extract(epoch FROM lease_expires - now())::float8"
            " FROM reactloop_runs WHERE run_id = %s FOR UPDATE",
            (_key(run_id),),
        ).fetchone()
        if row is None:
            raise RunNotFoundError(run_id)
        owner, left = row
        if owner is not None and owner != self.worker_id and left > 0:
            raise LeaseHeldError(run_id, owner, left)

    def _set_status(
        self, connection: psycopg.Connection[Any], run_id: str, status: RunStatus
    ) -> None:
        """Renew the lease while the run goes on, free it when the run ends."""
        lease = _LEASE if status is RunStatus.RUNNING else _NO_LEASE
        connection.execute(
            f"UPDATE reactloop_runs SET {lease}, status = %(status)s, updated_at = CASE WHEN"
            " status = %(status)s THEN updated_at ELSE %(now)s END WHERE run_id = %(id)s",
            self._lease(status=status.value, now=time.time(), id=_key(run_id)),
        )

    async def acquire_lease(self, run_id: str) -> None:
        """Take (or renew) the run's lease for this worker; `LeaseHeldError` if another worker
        holds a live one, `RunNotFoundError` for an unknown id."""

        def work(connection: psycopg.Connection[Any]) -> None:
            with connection.transaction():
                self._check_lease(connection, run_id)
                connection.execute(
                    f"UPDATE reactloop_runs SET {_LEASE} WHERE run_id = %(id)s",
                    self._lease(id=_key(run_id)),
                )

        await self._run(work)

    async def renew_lease(self, run_id: str) -> bool:
        """Extend this worker's lease; False if it holds none any more (taken over or freed)."""

        def work(connection: psycopg.Connection[Any]) -> bool:
            renewed = connection.execute(
                f"UPDATE reactloop_runs SET {_LEASE} WHERE run_id = %(id)s"
                " AND lease_owner = %(owner)s RETURNING run_id",
                self._lease(id=_key(run_id)),
            ).fetchone()
            return renewed is not None

        return await self._run(work)

    async def release_lease(self, run_id: str) -> None:
        """Give up this worker's lease on the run (another worker may claim it at once)."""
        await self._run(
            lambda c: c.execute(
                f"UPDATE reactloop_runs SET {_NO_LEASE}"
                " WHERE run_id = %(id)s AND lease_owner = %(owner)s",
                self._lease(id=_key(run_id)),
            )
        )

    async def claimable_runs(self, *, limit: int = 100) -> list[RunSummary]:
        """Runs that started and never ended and that no worker holds (their worker died, or
        was cancelled), oldest first: what a worker resumes. Runs that ended early on purpose
        (interrupted, failed) are not claimable; resume those by id."""
        query = (
            f"{_SUMMARY} WHERE status = 'running' AND (lease_owner IS NULL OR lease_expires"
            " <= now()) ORDER BY position LIMIT %s"
        )
        rows = await self._run(lambda c: c.execute(query, (limit,)).fetchall())
        return [_summary(row) for row in rows]

    async def load(self, run_id: str) -> StoredRun:
        """The stored run rebuilt from its journal; `RunNotFoundError` for an unknown id."""
        bodies = await self._run(lambda connection: _bodies(connection, run_id))
        if not bodies:
            raise RunNotFoundError(run_id)
        return replay([decode(body) for body in bodies]).stored

    async def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 100,
    ) -> list[RunSummary]:
        """Runs matching every filter given, newest first, at most `limit`."""
        filters = {
            "status = %s": None if status is None else RunStatus(status).value,
            "session_id = %s": _key(session_id),
            "user_id = %s": _key(user_id),
            "created_at >= %s": since,
            "created_at < %s": until,
        }
        given = {clause: value for clause, value in filters.items() if value is not None}
        where = " AND ".join(given) or "TRUE"
        query = f"{_SUMMARY} WHERE {where} ORDER BY position DESC LIMIT %s"
        arguments = (*given.values(), limit)
        rows = await self._run(lambda c: c.execute(query, arguments).fetchall())
        return [_summary(row) for row in rows]

    async def delete_run(self, run_id: str) -> bool:
        """Delete a run and its journal; False if there was none with that id."""
        return await self._run(lambda c: _delete(c, "run_id", _key(run_id))) > 0

    async def delete_session(self, session_id: str) -> int:
        """Delete every run of a session; how many there were."""
        return await self._run(lambda c: _delete(c, "session_id", _key(session_id)))

    async def session_history(self, session_id: str, *, before: str | None = None) -> list[Message]:
        """The session's turns in order (every run's own messages), up to run `before`."""

        def work(connection: psycopg.Connection[Any]) -> list[list[bytes]]:
            rows = connection.execute(
                "SELECT r.run_id, r.body FROM reactloop_runs AS run JOIN reactloop_records AS r"
                " USING (run_id) WHERE run.session_id = %s AND run.position < coalesce("
                "(SELECT position FROM reactloop_runs WHERE run_id = %s), 9223372036854775807)"
                " ORDER BY run.position, r.seq",
                (_key(session_id), _key(before)),
            ).fetchall()
            grouped: dict[bytes, list[bytes]] = {}
            for run_id, body in rows:
                grouped.setdefault(bytes(run_id), []).append(bytes(body))
            return list(grouped.values())

        messages: list[Message] = []
        for bodies in await self._run(work):
            messages.extend(replay([decode(body) for body in bodies]).stored.messages)
        return messages

    async def aclose(self) -> None:
        """Close the connection (a later call opens it again)."""

        def work() -> None:
            with self._lock:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

        await anyio.to_thread.run_sync(work)


@overload
def _key(value: str) -> bytes: ...
@overload
def _key(value: str | None) -> bytes | None: ...
def _key(value: str | None) -> bytes | None:
    """An id as stored: UTF-8 bytes (a PostgreSQL text column cannot hold NUL; an id may)."""
    return None if value is None else value.encode("utf-8", "surrogatepass")


def _text(value: bytes | None) -> str | None:
    return None if value is None else bytes(value).decode("utf-8", "surrogatepass")


def _summary(row: Sequence[Any]) -> RunSummary:
    run_id, status, created_at, updated_at, user_id, session_id = row
    return RunSummary(
        bytes(run_id).decode("utf-8", "surrogatepass"),
        RunStatus(status),
        created_at,
        updated_at,
        _text(user_id),
        _text(session_id),
    )


def _bodies(connection: psycopg.Connection[Any], run_id: str) -> list[bytes]:
    rows = connection.execute(
        "SELECT body FROM reactloop_records WHERE run_id = %s ORDER BY seq", (_key(run_id),)
    ).fetchall()
    return [bytes(row[0]) for row in rows]


def _delete(connection: psycopg.Connection[Any], column: str, value: bytes) -> int:
    """Delete runs by one column (their records go with them: ON DELETE CASCADE)."""
    cursor = connection.execute(f"DELETE FROM reactloop_runs WHERE {column} = %s", (value,))
    return cursor.rowcount

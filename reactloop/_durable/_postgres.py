"""`PostgresStore`: runs in a PostgreSQL database shared by many workers, with run leases.

The driver is psycopg 3's blocking API in worker threads (`anyio.to_thread.run_sync`), the one
way that works on asyncio and trio alike (psycopg's async API and asyncpg are asyncio-only; see
ADR-0010). One connection per store, guarded by a lock, each append one transaction. A run is
driven by one worker at a time: its row holds a lease (owner, expiry by the server's clock),
taken when the run is created or resumed, renewed by each append and by the loop's heartbeat,
released when the run ends. Every write of a holder checks, in its own transaction, that the
row still names it and the fence it was given (`_leases`): a worker that stalled past its lease,
or whose run another worker finished, writes nothing. Calls are bounded (`StoreTimeouts`): a
cancelled or timed-out call shuts its connection's socket, so a hung server never holds the
caller; a dropped connection is reopened and the call retried, each write safe to retry (a
retried append finds its own records already committed and writes nothing twice).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TypeVar, overload

import anyio.to_thread

from reactloop._core import (
    Message,
    Record,
    RunCreated,
    RunStatus,
    RunSummary,
    SessionTurn,
    StoredRun,
    status_after,
)
from reactloop._durable._codec import decode, encode_apart
from reactloop._durable._leases import (
    StoreTimeouts,
    check_free,
    check_holder,
    checked_lease_seconds,
    default_worker,
    timeouts_option,
)
from reactloop._durable._postgres_blobs import blobs_where, delete_runs, put_blobs
from reactloop._durable._postgres_schema import migrate
from reactloop._durable._replay import replay
from reactloop._durable._turns import cache_of, postgres_turns
from reactloop._errors import ConfigurationError
from reactloop._redact import Credentials, redacted
from reactloop._stored_errors import (
    RunExistsError,
    RunNotFoundError,
    SessionBusyError,
    StoreError,
)
from reactloop._unicode import checked_ids, identifier
from reactloop._validate import checked_arguments, fail, integer, text

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
INSTALL = "pip install 'reactloop[postgres]'"

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


def _redacted(url: str, driver_message: object = None) -> str:
    """The URL (or libpq string) without its password or secret parameters, for messages and
    repr; with `driver_message`, that message with the URL's secrets masked wherever they are."""
    if driver_message is None:
        return redacted(url)
    return Credentials(url).redact(str(driver_message))


class _Disconnected(Exception):
    """The connection dropped (or could not be opened): a call to retry on a new one."""


class _Call:
    """One store call's claim on the connection: a call whose caller left is not started, and
    only the call using the connection shuts its socket."""

    cancelled = False


_SCHEMES = ("postgresql", "postgres")


def _checked_url(url: object) -> str:
    """A `postgresql://` URL, or a libpq `key=value` connection string."""
    given = text("PostgresStore.url", url)
    scheme, found, _ = given.partition("://")
    if (found and scheme not in _SCHEMES) or (not found and "=" not in given):
        rule = "a postgresql:// URL or a libpq connection string (host=... dbname=...)"
        fail("PostgresStore.url", redacted(given), rule)
    return given


def _checked_worker(worker_id: object) -> str:
    """A worker name keeping the id rule (no NUL: PostgreSQL text cannot hold them)."""
    return identifier("PostgresStore.worker_id", worker_id)


@checked_arguments
class PostgresStore:
    """Runs in a PostgreSQL database (schema created on first use), shared by many workers.

    `worker_id` names this store's leases (default: host, pid and a random suffix);
    `lease_seconds` is how long a lease lasts without renewal before another worker may claim
    the run; `timeouts` bound each call, its connecting and its reconnecting.
    """

    def __init__(
        self,
        url: str,
        *,
        worker_id: str | None = None,
        lease_seconds: float = 30.0,
        timeouts: StoreTimeouts | None = None,
    ) -> None:
        self.url = _checked_url(url)
        self.worker_id = default_worker() if worker_id is None else _checked_worker(worker_id)
        self.lease_seconds = checked_lease_seconds("PostgresStore.lease_seconds", lease_seconds)
        self.timeouts = timeouts_option("PostgresStore.timeouts", timeouts)
        self._psycopg = _driver()
        self._lock = threading.Lock()
        self._connection: psycopg.Connection[Any] | None = None
        self._current: _Call | None = None  # the call using the connection now
        self._fences: dict[str, int] = {}  # the fence of each lease this store holds

    def __repr__(self) -> str:
        return f"PostgresStore({_redacted(self.url)!r}, worker_id={self.worker_id!r})"

    def _connect(self) -> psycopg.Connection[Any]:
        connection = self._connection
        if connection is None or connection.closed:
            timeouts = self.timeouts
            connection = self._psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(2, round(timeouts.connect)),
                application_name=f"reactloop:{self.worker_id}"[:63],
            )
            try:
                connection.execute(f"SET statement_timeout = {round(timeouts.call * 1000)}")
                connection.execute(f"SET lock_timeout = {round(timeouts.lock * 1000)}")
                migrate(connection)
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return connection

    def _locked(self, work: Callable[[psycopg.Connection[Any]], T], call: _Call) -> T:
        if not self._lock.acquire(timeout=self.timeouts.call):
            raise StoreError(f"run store {_redacted(self.url)!r}: another call held it too long")
        try:
            if call.cancelled:  # its caller left while it waited: never start it
                raise _Disconnected("the call was cancelled before it started")
            self._current = call
            return work(self._connect())
        except self._psycopg.Error as exc:
            raise self._fault(exc) from exc
        finally:
            self._current = None
            self._lock.release()

    def _fault(self, exc: Exception) -> Exception:
        """What a driver error means: a dropped connection to retry on a new one, else a
        `StoreError` naming the store and the bound a timeout broke."""
        connection = self._connection
        if connection is None or connection.closed or connection.broken:
            if connection is not None:
                with suppress(Exception):
                    connection.close()
            self._connection = None
            return _Disconnected(str(exc).strip())
        errors = self._psycopg.errors
        where = f"run store {_redacted(self.url)!r}"
        if isinstance(exc, errors.LockNotAvailable):
            return StoreError(
                f"{where} waited longer than {self.timeouts.lock:g} s for a lock another "
                "transaction holds (StoreTimeouts.lock); nothing was written"
            )
        if isinstance(exc, errors.QueryCanceled):
            return StoreError(
                f"{where}: a statement ran longer than {self.timeouts.call:g} s "
                "(StoreTimeouts.call); nothing was written"
            )
        return StoreError(f"{where} failed: {_redacted(self.url, exc)}")

    async def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """`work` on the connection, in a worker thread, bounded by `StoreTimeouts.call`; a
        dropped connection is reopened and `work` run again (every `work` here is safe to
        repeat), for up to `StoreTimeouts.reconnect` seconds."""
        with anyio.move_on_after(self.timeouts.call):
            return await self._reconnecting(work)
        raise StoreError(
            f"run store {_redacted(self.url)!r} did not answer within "
            f"{self.timeouts.call:g} s (StoreTimeouts.call)"
        )

    async def _reconnecting(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        give_up = anyio.current_time() + self.timeouts.reconnect
        pause = 0.05
        while True:
            try:
                return await self._attempt(work)
            except _Disconnected as lost:
                if anyio.current_time() >= give_up:
                    raise StoreError(
                        f"run store {_redacted(self.url)!r} lost its connection and could not "
                        f"reconnect within {self.timeouts.reconnect:g} s "
                        f"(StoreTimeouts.reconnect): {_redacted(self.url, lost)}"
                    ) from None
            await anyio.sleep(pause)
            pause = min(pause * 2, 1.0)

    async def _attempt(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """One try in a worker thread. A caller that leaves (cancelled, timed out) does not
        wait for a hung server: the call's socket is shut, which ends the thread's wait (the
        server rolls back what was not committed)."""
        call = _Call()
        try:
            return await anyio.to_thread.run_sync(self._locked, work, call, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            self._interrupt(call)
            raise

    def _interrupt(self, call: _Call) -> None:
        call.cancelled = True
        connection = self._connection
        if self._current is not call or connection is None:
            return
        with suppress(Exception):
            duplicate = socket.socket(fileno=os.dup(connection.fileno()))
            with duplicate:
                duplicate.shutdown(socket.SHUT_RDWR)

    def _lease(self, **more: Any) -> dict[str, Any]:
        return {"owner": self.worker_id, "ttl": self.lease_seconds, **more}

    async def create_run(self, created: RunCreated) -> None:
        """Record a new run (leased to this worker) and its `RunCreated` record, atomically."""
        checked_ids(run_id=created.run_id, user_id=created.user_id, session_id=created.session_id)
        body, blobs = encode_apart(created)
        row = self._lease(
            id=_key(created.run_id),
            status=RunStatus.RUNNING.value,
            at=created.created_at,
            now=time.time(),
            user=_key(created.user_id),
            session=_key(created.session_id),
        )
        tries = 0

        def work(connection: psycopg.Connection[Any]) -> None:
            nonlocal tries
            tries += 1
            with connection.transaction():
                if tries > 1 and _bodies(connection, created.run_id)[:1] == [body]:
                    return  # a retry: the first try committed before its answer was lost
                if created.session_id is not None:
                    self._check_session(connection, created.session_id)
                inserted = connection.execute(
                    "INSERT INTO reactloop_runs (run_id, status, created_at, updated_at, user_id,"
                    " session_id, lease_owner, lease_expires, fence) VALUES (%(id)s, %(status)s,"
                    " %(at)s, %(now)s, %(user)s, %(session)s, %(owner)s,"
                    " now() + make_interval(secs => %(ttl)s), 1)"
                    " ON CONFLICT (run_id) DO NOTHING RETURNING run_id",
                    row,
                ).fetchone()
                if inserted is None:
                    raise RunExistsError(created.run_id)
                connection.execute(
                    "INSERT INTO reactloop_records (run_id, seq, body) VALUES (%s, 1, %s)",
                    (_key(created.run_id), body),
                )
                put_blobs(connection, _key(created.run_id), blobs)

        await self._run(work)
        self._fences[created.run_id] = 1

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

        Only while this worker holds the run's lease with the fence it was given (else
        `LeaseLostError`, nothing written); the append renews the lease, or frees it when the
        records end the run. Safe to retry: a try after a lost answer finds its records
        committed and writes nothing twice.
        """
        checked_ids(run_id=run_id)
        encoded = [encode_apart(record) for record in records]
        bodies = [body for body, _ in encoded]
        blobs = {digest: data for _, apart in encoded for digest, data in apart.items()}
        status = status_after(list(records))
        tries = 0

        def work(connection: psycopg.Connection[Any]) -> None:
            nonlocal tries
            tries += 1
            with connection.transaction():
                self._check_holder(connection, run_id)
                row = connection.execute(
                    "SELECT coalesce(max(seq), 0) FROM reactloop_records WHERE run_id = %s",
                    (_key(run_id),),
                ).fetchone()
                last = 0 if row is None else int(row[0])
                if tries > 1 and _tail(connection, run_id, last, len(bodies)) == bodies:
                    return  # a retry: the first try committed before its answer was lost
                with connection.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO reactloop_records (run_id, seq, body) VALUES (%s, %s, %s)",
                        [(_key(run_id), last + 1 + i, b) for i, b in enumerate(bodies)],
                    )
                put_blobs(connection, _key(run_id), blobs)
                self._set_status(connection, run_id, status)

        await self._run(work)
        if status is not RunStatus.RUNNING:
            self._fences.pop(run_id, None)  # the end freed the lease

    def _check_holder(self, connection: psycopg.Connection[Any], run_id: str) -> None:
        """Lock the run's row; `LeaseLostError` unless this worker holds it with its fence."""
        row = connection.execute(
            "SELECT lease_owner, fence FROM reactloop_runs WHERE run_id = %s FOR UPDATE",
            (_key(run_id),),
        ).fetchone()
        if row is None:
            raise RunNotFoundError(run_id)
        check_holder(run_id, self.worker_id, self._fences.get(run_id), row[0], row[1])

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
        """Take (or renew) the run's lease for this worker, with a new fence; `LeaseHeldError`
        if another worker holds a live one, `RunNotFoundError` for an unknown id."""

        def work(connection: psycopg.Connection[Any]) -> int:
            with connection.transaction():
                row = connection.execute(
                    "SELECT lease_owner, extract(epoch FROM lease_expires - now())::float8"
                    " FROM reactloop_runs WHERE run_id = %s FOR UPDATE",
                    (_key(run_id),),
                ).fetchone()
                if row is None:
                    raise RunNotFoundError(run_id)
                check_free(run_id, self.worker_id, row[0], row[1] or 0.0)
                taken = connection.execute(
                    f"UPDATE reactloop_runs SET {_LEASE}, fence = fence + 1"
                    " WHERE run_id = %(id)s RETURNING fence",
                    self._lease(id=_key(run_id)),
                ).fetchone()
                return 0 if taken is None else int(taken[0])

        self._fences[run_id] = await self._run(work)

    async def renew_lease(self, run_id: str) -> bool:
        """Extend this worker's lease; False if it holds none any more (taken over or freed)."""
        fence = self._fences.get(run_id)
        if fence is None:
            return False

        def work(connection: psycopg.Connection[Any]) -> bool:
            renewed = connection.execute(
                f"UPDATE reactloop_runs SET {_LEASE} WHERE run_id = %(id)s"
                " AND lease_owner = %(owner)s AND fence = %(fence)s RETURNING run_id",
                self._lease(id=_key(run_id), fence=fence),
            ).fetchone()
            return renewed is not None

        return await self._run(work)

    async def release_lease(self, run_id: str) -> None:
        """Give up this worker's lease on the run (another worker may claim it at once)."""
        fence = self._fences.pop(run_id, None)
        if fence is None:
            return
        await self._run(
            lambda c: c.execute(
                f"UPDATE reactloop_runs SET {_NO_LEASE} WHERE run_id = %(id)s"
                " AND lease_owner = %(owner)s AND fence = %(fence)s",
                self._lease(id=_key(run_id), fence=fence),
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
        checked_ids(run_id=run_id)
        key = _key(run_id)
        bodies, blobs = await self._run(
            lambda c: (_bodies(c, run_id), blobs_where(c, "run.run_id = %s", key))
        )
        if not bodies:
            raise RunNotFoundError(run_id)
        return replay([decode(body, blobs) for body in bodies]).stored

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
        checked_ids(session_id=session_id, user_id=user_id)
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
        checked_ids(run_id=run_id)
        return await self._run(lambda c: delete_runs(c, "run_id", _key(run_id))) > 0

    async def delete_session(self, session_id: str) -> int:
        """Delete every run of a session; how many there were."""
        checked_ids(session_id=session_id)
        return await self._run(lambda c: delete_runs(c, "session_id", _key(session_id)))

    async def session_history(self, session_id: str, *, before: str | None = None) -> list[Message]:
        """The session's turns in order (every run's own messages), up to run `before`."""
        checked_ids(session_id=session_id, before=before)

        where = (
            "run.session_id = %s AND run.position < coalesce((SELECT position FROM"
            " reactloop_runs WHERE run_id = %s), 9223372036854775807)"
        )
        keys = (_key(session_id), _key(before))

        def work(connection: psycopg.Connection[Any]) -> tuple[list[list[bytes]], dict[str, bytes]]:
            rows = connection.execute(
                "SELECT r.run_id, r.body FROM reactloop_runs AS run JOIN reactloop_records AS r"
                f" USING (run_id) WHERE {where} ORDER BY run.position, r.seq",
                keys,
            ).fetchall()
            grouped: dict[bytes, list[bytes]] = {}
            for run_id, body in rows:
                grouped.setdefault(bytes(run_id), []).append(bytes(body))
            return list(grouped.values()), blobs_where(connection, where, *keys)

        journals, blobs = await self._run(work)
        messages: list[Message] = []
        for bodies in journals:
            messages.extend(replay([decode(body, blobs) for body in bodies]).stored.messages)
        return messages

    async def session_turns(
        self,
        session_id: str,
        *,
        before: str | None = None,
        limit: int = 100,
        oldest: bool = False,
    ) -> list[SessionTurn]:
        """A page of the session's runs before run `before`: the newest `limit`, newest first
        (the oldest, oldest first, with `oldest=True`); one read, by the session's index, of the
        journals not decoded already."""
        checked_ids(session_id=session_id, before=before)
        integer("limit", limit)
        keys, cache = (_key(session_id), _key(before)), cache_of(self)
        read = await self._run(lambda c: postgres_turns(c, keys, (limit, oldest), cache.cached))
        return [cache.turn(run_id, stamp, found) for run_id, stamp, found in read]

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


def _tail(connection: psycopg.Connection[Any], run_id: str, last: int, count: int) -> list[bytes]:
    """The bodies of the run's last `count` records (up to `last`)."""
    rows = connection.execute(
        "SELECT body FROM reactloop_records WHERE run_id = %s AND seq > %s ORDER BY seq",
        (_key(run_id), last - count),
    ).fetchall()
    return [bytes(row[0]) for row in rows]


def _bodies(connection: psycopg.Connection[Any], run_id: str) -> list[bytes]:
    rows = connection.execute(
        "SELECT body FROM reactloop_records WHERE run_id = %s ORDER BY seq", (_key(run_id),)
    ).fetchall()
    return [bytes(row[0]) for row in rows]

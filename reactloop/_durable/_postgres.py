"""`PostgresStore`: runs in a PostgreSQL database shared by many workers, with run leases.

The driver is psycopg 3's blocking API in worker threads (`anyio.to_thread.run_sync`), the one
way that works on asyncio and trio alike (psycopg's async API and asyncpg are asyncio-only; see
ADR-0010), on a few connections per store, each call on one of its own (`_postgres_pool`). A run is
driven by one worker at a time: its row holds a lease (owner, expiry by the server's clock),
taken when the run is created or resumed, renewed by each append and by the loop's heartbeat,
released when the run ends. Every write of a holder checks, in its own transaction, that the
row still names it and the fence it was given (`_leases`): a worker that stalled past its lease,
or whose run another worker finished, writes nothing. An append is one transaction and one
round trip: its statements go in one pipeline, the lease check first, each write conditional on
it (ADR-0036). Calls are bounded (`StoreTimeouts`); a dropped connection is reopened and the call
retried, each write safe to retry (a retried append finds its own records already committed and
writes nothing twice).
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

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
from reactloop._durable._postgres_blobs import (
    blobs_of,
    blobs_query,
    blobs_where,
    delete_runs,
    put_blobs,
)
from reactloop._durable._postgres_pool import Connections, shown
from reactloop._durable._replay import replay
from reactloop._durable._turns import cache_of, postgres_turns
from reactloop._errors import ConfigurationError
from reactloop._redact import redacted
from reactloop._stored_errors import (
    RunExistsError,
    RunNotFoundError,
    SessionBusyError,
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
_BUSY = (  # a live lease of another worker on a running run of the session
    "SELECT 1 FROM reactloop_runs WHERE session_id = %(session)s AND status = 'running' AND"
    " lease_owner <> %(owner)s AND lease_expires > now() LIMIT 1"
)
_CREATE = (  # the run, leased to its creator, unless its id is taken or its session is busy
    "INSERT INTO reactloop_runs (run_id, status, created_at, updated_at, user_id, session_id,"
    " lease_owner, lease_expires, fence) SELECT %(id)s, %(status)s, %(at)s, %(now)s, %(user)s,"
    " %(session)s, %(owner)s, now() + make_interval(secs => %(ttl)s), 1"
    f" WHERE %(session)s::bytea IS NULL OR NOT EXISTS ({_BUSY})"
    " ON CONFLICT (run_id) DO NOTHING RETURNING run_id"
)
_FIRST = (  # its creation record, if the run was just made (an older run's is already there)
    "INSERT INTO reactloop_records (run_id, seq, body) SELECT run_id, 1, %(body)s"
    " FROM reactloop_runs WHERE run_id = %(id)s AND lease_owner = %(owner)s AND fence = 1"
    " ON CONFLICT DO NOTHING"
)
_BODIES = "SELECT body FROM reactloop_records WHERE run_id = %s ORDER BY seq"
_LEASED = (  # the run row locked, its lease's owner and seconds left
    "SELECT lease_owner, extract(epoch FROM lease_expires - now())::float8"
    " FROM reactloop_runs WHERE run_id = %(id)s FOR UPDATE"
)
_TAKE = (  # a new fence, unless another worker holds a live lease (what `check_free` refuses)
    f"UPDATE reactloop_runs SET {_LEASE}, fence = fence + 1 WHERE run_id = %(id)s AND"
    " (lease_owner IS NULL OR lease_owner = %(owner)s OR coalesce(lease_expires <= now(), TRUE))"
    " RETURNING fence"
)
_HOLDER = "SELECT lease_owner, fence FROM reactloop_runs WHERE run_id = %(id)s FOR UPDATE"
_HOLDS = (  # true while this worker holds the run's lease with its fence (the row is locked)
    "EXISTS (SELECT FROM reactloop_runs WHERE run_id = %(id)s AND lease_owner = %(owner)s"
    " AND fence = %(fence)s)"
)
_APPEND = (  # the records after the last one: a new statement, so it sees the last committed
    "INSERT INTO reactloop_records (run_id, seq, body) SELECT %(id)s, (last.seq + b.n)::integer,"
    " b.body FROM (SELECT coalesce(max(seq), 0) AS seq FROM reactloop_records"
    " WHERE run_id = %(id)s) AS last, unnest(%(bodies)s::bytea[]) WITH ORDINALITY AS b(body, n)"
    f" WHERE {_HOLDS}"
)
_STATUS = (  # renew the lease while the run goes on, free it when the run ends
    "UPDATE reactloop_runs SET lease_owner = CASE WHEN %(status)s = 'running' THEN lease_owner"
    " END, lease_expires = CASE WHEN %(status)s = 'running' THEN now() + make_interval(secs =>"
    " %(ttl)s) END, status = %(status)s, updated_at = CASE WHEN"
    " status = %(status)s THEN updated_at ELSE %(now)s END WHERE run_id = %(id)s"
    " AND lease_owner = %(owner)s AND fence = %(fence)s"
)


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
        connections: int = 8,
    ) -> None:
        self.url = _checked_url(url)
        self.worker_id = default_worker() if worker_id is None else _checked_worker(worker_id)
        self.lease_seconds = checked_lease_seconds("PostgresStore.lease_seconds", lease_seconds)
        self.timeouts = timeouts_option("PostgresStore.timeouts", timeouts)
        self.connections = integer("PostgresStore.connections", connections, minimum=1)
        self._connections = Connections(
            _driver(), self.url, self.worker_id, self.timeouts, self.connections
        )
        self._fences: dict[str, int] = {}  # the fence of each lease this store holds

    def __repr__(self) -> str:
        return f"PostgresStore({shown(self.url)!r}, worker_id={self.worker_id!r})"

    async def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """`work` on one of the store's connections, in a worker thread, bounded in time and
        retried on a new connection if the connection drops (`Connections.run`)."""
        return await self._connections.run(work)

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
            body=body,
        )
        tries = 0

        def work(connection: psycopg.Connection[Any]) -> None:
            nonlocal tries
            tries += 1
            if tries > 1 and _bodies(connection, created.run_id)[:1] == [body]:
                return  # a retry: the first try committed before its answer was lost
            if blobs:  # which blobs the server lacks needs an answer first: step by step
                self._create_checked(connection, created, row, blobs)
                return
            with connection.pipeline():  # one implicit transaction, committed at its sync
                busy = self._session_busy(connection, created.session_id)
                inserted = connection.execute(_CREATE, row)
                connection.execute(_FIRST, row)
            self._check_created(created, busy, inserted)  # nothing was written if it fails

        await self._run(work)
        self._fences[created.run_id] = 1

    def _create_checked(
        self,
        connection: psycopg.Connection[Any],
        created: RunCreated,
        row: dict[str, Any],
        blobs: dict[str, bytes],
    ) -> None:
        """`create_run` with blobs: the run made (and the session free) before they are sent."""
        with connection.transaction():
            busy = self._session_busy(connection, created.session_id)
            self._check_created(created, busy, connection.execute(_CREATE, row))
            connection.execute(_FIRST, row)
            put_blobs(connection, row["id"], blobs)

    def _session_busy(
        self, connection: psycopg.Connection[Any], session_id: str | None
    ) -> psycopg.Cursor[Any] | None:
        """New turns of one session start one at a time across workers: the session's lock
        (held to the end of the transaction), then a live lease of another worker on a run of
        it (the cursor of that query; the new run is inserted only if it finds none)."""
        if session_id is None:
            return None
        lock = hashlib.blake2b(_key(f"reactloop-session:{session_id}"), digest_size=8)
        connection.execute(
            "SELECT pg_advisory_xact_lock(%s)", (int.from_bytes(lock.digest(), signed=True),)
        )
        return connection.execute(_BUSY, {"session": _key(session_id), "owner": self.worker_id})

    @staticmethod
    def _check_created(
        created: RunCreated, busy: psycopg.Cursor[Any] | None, inserted: psycopg.Cursor[Any]
    ) -> None:
        """`SessionBusyError` or `RunExistsError` if the run was not made."""
        if busy is not None and busy.fetchone() is not None:
            raise SessionBusyError(created.session_id or "")
        if inserted.fetchone() is None:
            raise RunExistsError(created.run_id)

    async def append(self, run_id: str, records: Sequence[Record]) -> None:
        """Append `records` to the run's journal in one transaction (all or none).

        Only while this worker holds the run's lease with the fence it was given (else
        `LeaseLostError`, nothing written); the append renews the lease, or frees it when the
        records end the run. One round trip: the statements go in one pipeline, the row lock
        and lease check first and every write conditional on the lease. Safe to retry: a try
        after a lost answer finds its records committed and writes nothing twice.
        """
        checked_ids(run_id=run_id)
        encoded = [encode_apart(record) for record in records]
        bodies = [body for body, _ in encoded]
        blobs = {digest: data for _, apart in encoded for digest, data in apart.items()}
        status = status_after(list(records))
        fence = self._fences.get(run_id)
        values = self._lease(id=_key(run_id), fence=-1 if fence is None else fence,
                             bodies=bodies, status=status.value, now=time.time())  # fmt: skip
        tries = 0

        def work(connection: psycopg.Connection[Any]) -> None:
            nonlocal tries
            tries += 1
            if blobs or tries > 1:  # these need answers before they write: step by step
                self._append_checked(connection, run_id, values, blobs, retry=tries > 1)
                return
            with connection.pipeline():  # one implicit transaction, committed at its sync
                held = connection.execute(_HOLDER, values)
                connection.execute(_APPEND, values)
                connection.execute(_STATUS, values)
            self._check_holder(run_id, held.fetchone())  # nothing was written if it fails

        await self._run(work)
        if status is not RunStatus.RUNNING:
            self._fences.pop(run_id, None)  # the end freed the lease

    def _append_checked(
        self,
        connection: psycopg.Connection[Any],
        run_id: str,
        values: dict[str, Any],
        blobs: dict[str, bytes],
        *,
        retry: bool,
    ) -> None:
        """An append in a transaction that checks the lease before it writes: one with blobs
        (which of them the server lacks) or a retry (whether its first try committed)."""
        with connection.transaction():
            self._check_holder(run_id, connection.execute(_HOLDER, values).fetchone())
            if retry and _committed(connection, run_id, values["bodies"]):
                return  # the first try committed before its answer was lost
            put_blobs(connection, values["id"], blobs)
            connection.execute(_APPEND, values)
            connection.execute(_STATUS, values)

    def _check_holder(self, run_id: str, row: Sequence[Any] | None) -> None:
        """`LeaseLostError` unless the run's row (locked) names this worker and its fence."""
        if row is None:
            raise RunNotFoundError(run_id)
        check_holder(run_id, self.worker_id, self._fences.get(run_id), row[0], row[1])

    async def acquire_lease(self, run_id: str) -> None:
        """Take (or renew) the run's lease for this worker, with a new fence; `LeaseHeldError`
        if another worker holds a live one, `RunNotFoundError` for an unknown id."""

        values = self._lease(id=_key(run_id))

        def work(connection: psycopg.Connection[Any]) -> int:
            with connection.pipeline():  # one implicit transaction, committed at its sync
                held = connection.execute(_LEASED, values)
                taken = connection.execute(_TAKE, values)
            row = held.fetchone()
            if row is None:
                raise RunNotFoundError(run_id)
            check_free(run_id, self.worker_id, row[0], row[1] or 0.0)  # else nothing was taken
            fence = taken.fetchone()
            return 0 if fence is None else int(fence[0])

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

        def work(connection: psycopg.Connection[Any]) -> tuple[list[bytes], dict[str, bytes]]:
            with connection.pipeline():  # both queries in one round trip
                bodies = connection.execute(_BODIES, (key,))
                blobs = connection.execute(blobs_query("run.run_id = %s"), (key,))
            return [bytes(row[0]) for row in bodies.fetchall()], blobs_of(blobs.fetchall())

        bodies, blobs = await self._run(work)
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
        """Close the store's connections (a later call opens them again)."""
        await self._connections.aclose()


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


def _committed(connection: psycopg.Connection[Any], run_id: str, bodies: list[bytes]) -> bool:
    """Whether the run's last records are `bodies` (a retried append's first try committed)."""
    rows = connection.execute(
        "SELECT body FROM reactloop_records WHERE run_id = %s ORDER BY seq DESC LIMIT %s",
        (_key(run_id), len(bodies)),
    ).fetchall()
    return [bytes(row[0]) for row in reversed(rows)] == bodies


def _bodies(connection: psycopg.Connection[Any], run_id: str) -> list[bytes]:
    rows = connection.execute(_BODIES, (_key(run_id),)).fetchall()
    return [bytes(row[0]) for row in rows]

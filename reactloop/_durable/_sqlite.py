"""`SqliteStore`: the embedded run store, one SQLite file, no server.

The stdlib `sqlite3` runs in worker threads (`anyio.to_thread.run_sync`), on asyncio and trio
alike, so a blocking call never runs on the event loop. One lock serializes this process's
writes: SQLite takes one writer at a time anyway, and each append is one short transaction. WAL
mode lets readers go on beside the writer; `synchronous=NORMAL` (default) survives a process
crash, `FULL` also a power cut. With `commit_on_loop=True`, a NORMAL-mode append (whose commit
does not wait for the disk) commits on the event loop when the lock is free and no other process
is writing (it never waits: it goes to a thread instead), and a thread checkpoints the WAL every
512 appends. A new file is created owner-only (0600).

A run is driven by one store object at a time, across processes: its row holds a lease (owner,
expiry by the wall clock, fence), taken by `create_run` and `acquire_lease`, and every append
checks it in its own transaction (`_leases`). A lease of a process that died on this host is free
at once; any other lease when it expires. Waiting for another process's write lock is bounded
(`StoreTimeouts.lock`) and cancellable: each attempt waits a few milliseconds in its thread,
and the waits between attempts are the event loop's.
"""

from __future__ import annotations

import os
import sqlite3
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import anyio.lowlevel
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
    process_gone,
    timeouts_option,
)
from reactloop._durable._replay import replay
from reactloop._durable._sqlite_blobs import forget_blobs, put_blobs, run_journal
from reactloop._durable._sqlite_file import is_busy, transaction
from reactloop._durable._sqlite_writer import Connector, Writer
from reactloop._durable._turns import cache_of, sqlite_turns
from reactloop._errors import ConfigurationError
from reactloop._stored_errors import (
    RunExistsError,
    RunNotFoundError,
    SessionBusyError,
    StoreError,
)
from reactloop._unicode import checked_ids, identifier
from reactloop._validate import boolean, checked_arguments, integer, text

T = TypeVar("T")
Synchronous = Literal["NORMAL", "FULL"]
_CHECKPOINT_EVERY = 512  # appends between two WAL checkpoints (in a worker thread; ~9 MB WAL)
_SUMMARY = "SELECT run_id, status, created_at, updated_at, user_id, session_id FROM runs"


@checked_arguments
class SqliteStore:
    """Runs in one SQLite file (created on first use, owner-only): the embedded default.

    Every call runs in a worker thread. `commit_on_loop=True` (NORMAL mode only) lets a journal
    append commit on the event loop when that cannot wait (no lock to wait for, no disk sync):
    about a third of the per-step cost, for a short write system call on the loop.
    `worker_id` names this store object's leases (default: host, pid and a random suffix),
    `lease_seconds` how long a lease lasts unrenewed, `timeouts` the bounds of each call.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "NORMAL",
        commit_on_loop: bool = False,
        worker_id: str | None = None,
        lease_seconds: float = 30.0,
        timeouts: StoreTimeouts | None = None,
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise ConfigurationError.invalid("SqliteStore.path", path, "a file path")
        self.path = text("SqliteStore.path", os.fspath(path))
        if synchronous not in ("NORMAL", "FULL"):
            raise ConfigurationError.invalid(
                "SqliteStore.synchronous", synchronous, "'NORMAL' or 'FULL'"
            )
        self.synchronous: Synchronous = synchronous
        self.commit_on_loop = boolean("SqliteStore.commit_on_loop", commit_on_loop)
        self.worker_id = (
            default_worker()
            if worker_id is None
            else identifier("SqliteStore.worker_id", worker_id)
        )
        self.lease_seconds = checked_lease_seconds("SqliteStore.lease_seconds", lease_seconds)
        self.timeouts = timeouts_option("SqliteStore.timeouts", timeouts)
        self._connector = Connector(self.path, synchronous)
        self._writer = Writer(self._connector, self.timeouts.lock, self.timeouts.call)
        weakref.finalize(self, self._writer.stop)  # a store dropped unclosed stops its thread
        self._inline: sqlite3.Connection | None = None  # for appends on the event loop
        self._inline_generation = 0  # the writer's generation it was opened in (forks)
        self._appends = 0
        # Runs this store wrote last, still running: their last record's number (the lease
        # keeps other writers out; a lease taken again forgets it).
        self._running: dict[str, int] = {}
        self._fences: dict[str, int] = {}  # the fence of each lease this store object holds

    def __repr__(self) -> str:
        extra = ", commit_on_loop=True" if self.commit_on_loop else ""
        return f"SqliteStore({self.path!r}, synchronous={self.synchronous!r}{extra})"

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` on the connection, in the store's writer thread (`_sqlite_writer`)."""
        return await self._writer.call(work)

    def _inline_connection(self) -> sqlite3.Connection | None:
        """A second connection for short appends on the event loop: it never waits for a busy
        file (another process writing) and never checkpoints (a worker thread does that)."""
        file = self._connector.file
        if self._inline_generation != self._writer.generation:  # a forked child: not its own
            self._inline, self._inline_generation = None, self._writer.generation
        if self._inline is None and self._connector.opened and file is not None:
            opened = file.path  # the file, not a path relative to the working directory
            connection = sqlite3.connect(
                opened, isolation_level=None, check_same_thread=False, timeout=0.0
            )
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA wal_autocheckpoint=0")
            self._inline = connection
        return self._inline

    def _try_inline(
        self, work: Callable[[sqlite3.Connection], T], after: Callable[[T], None]
    ) -> bool:
        """Do a write now, on this thread, if it cannot block: NORMAL mode (a commit does not
        wait for the disk), the store's lock free, the file not busy. False: use the thread."""
        if not self.commit_on_loop or self.synchronous != "NORMAL":
            return False
        if self._appends % _CHECKPOINT_EVERY == 0:
            return False
        lock = self._writer.lock  # the writer thread holds it while it works
        if not lock.acquire(blocking=False):
            return False
        try:
            connection = self._inline_connection()
            if connection is None:
                return False
            self._connector.check()
            with transaction(connection):
                value = work(connection)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                return False  # another process writes: wait for it in the thread
            raise StoreError(f"run store {self.path!r} failed: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"run store {self.path!r} failed: {exc}") from exc
        finally:
            lock.release()
        after(value)
        return True

    async def _write(
        self, work: Callable[[sqlite3.Connection], T], after: Callable[[T], None], *, small: bool
    ) -> None:
        """A short write in the writer thread's next transaction (with those of other runs
        queued meanwhile); `after` once it committed. With `commit_on_loop`, inline when that
        cannot wait (tens of microseconds: never one writing blobs), the thread checkpointing
        the WAL every 512 writes."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        self._appends += 1
        if small and self._try_inline(work, after):
            return
        await self._writer.call(work, grouped=True, after=after)
        if self.commit_on_loop and self._appends % _CHECKPOINT_EVERY == 0:
            await self._run(_checkpoint)  # the loop's inline connection never does

    def _live(self, owner: str | None, expires: float | None) -> bool:
        """Whether a lease row still binds others: an owner, unexpired, whose process lives."""
        if owner is None or expires is None or expires <= time.time():
            return False
        return owner == self.worker_id or not process_gone(owner)

    async def create_run(self, created: RunCreated) -> None:
        """Record a new run (leased to this store object) and its `RunCreated` record, in one
        transaction; `SessionBusyError` while another live holder drives a run of its session."""
        checked_ids(run_id=created.run_id, user_id=created.user_id, session_id=created.session_id)
        body, blobs = encode_apart(created)

        def work(connection: sqlite3.Connection) -> None:
            if created.session_id is not None:
                self._check_session(connection, created.session_id)
            self._insert_run(connection, created)
            connection.execute(
                "INSERT INTO records (run_id, seq, body) VALUES (?, 1, ?)",
                (created.run_id, body),
            )
            put_blobs(connection, created.run_id, blobs)

        def after(_: None) -> None:
            self._fences[created.run_id] = 1

        await self._writer.call(work, grouped=True, after=after)

    def _insert_run(self, connection: sqlite3.Connection, created: RunCreated) -> None:
        """The run's row, leased to this store object; `RunExistsError` for an id in use."""
        now = time.time()
        try:
            connection.execute(
                "INSERT INTO runs (run_id, status, created_at, updated_at, user_id,"
                " session_id, lease_owner, lease_expires, fence)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
                (
                    created.run_id,
                    RunStatus.RUNNING.value,
                    created.created_at,
                    now,
                    created.user_id,
                    created.session_id,
                    self.worker_id,
                    now + self.lease_seconds,
                ),
            )
        except sqlite3.IntegrityError:
            raise RunExistsError(created.run_id) from None

    def _check_session(self, connection: sqlite3.Connection, session_id: str) -> None:
        """New turns of a session start one at a time across processes and store objects."""
        rows = connection.execute(
            "SELECT lease_owner, lease_expires FROM runs WHERE session_id = ? AND"
            " status = 'running' AND lease_owner IS NOT NULL AND lease_owner <> ?",
            (session_id, self.worker_id),
        ).fetchall()
        if any(self._live(owner, expires) for owner, expires in rows):
            raise SessionBusyError(session_id)

    def _check_holder(self, connection: sqlite3.Connection, run_id: str) -> None:
        """Inside a write: `LeaseLostError` unless this store object still holds the run."""
        row = connection.execute(
            "SELECT lease_owner, fence FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        if row is None:
            raise RunNotFoundError(run_id)
        check_holder(run_id, self.worker_id, self._fences.get(run_id), row[0], row[1])

    async def append(self, run_id: str, records: Sequence[Record]) -> None:
        """Append `records` to the run's journal in one transaction (all or none), only while
        this store object holds the run's lease (`LeaseLostError` otherwise, nothing written).

        The run's row is written only when its status changes (an end, which frees the lease,
        or a resume), so a usual append writes the new records and nothing else.
        """
        checked_ids(run_id=run_id)
        encoded = [encode_apart(record) for record in records]
        bodies = [body for body, _ in encoded]
        blobs = {digest: data for _, apart in encoded for digest, data in apart.items()}
        status = status_after(list(records)).value

        def work(connection: sqlite3.Connection) -> int:
            known = self._running.pop(run_id, None)
            self._check_holder(connection, run_id)
            last = _append_records(connection, run_id, bodies, status, known)
            put_blobs(connection, run_id, blobs)
            return last

        def after(last: int) -> None:
            if status == RunStatus.RUNNING.value:
                self._running[run_id] = last
            else:
                self._fences.pop(run_id, None)  # the end freed the lease

        await self._write(work, after, small=not blobs)

    async def acquire_lease(self, run_id: str) -> None:
        """Take (or renew) the run's lease for this store object, with a new fence;
        `LeaseHeldError` while another live holder has it, `RunNotFoundError` for an unknown id."""

        def work(connection: sqlite3.Connection) -> None:
            with transaction(connection):
                row = connection.execute(
                    "SELECT lease_owner, lease_expires, fence FROM runs WHERE run_id = ?",
                    (run_id,),
                ).fetchone()
                if row is None:
                    raise RunNotFoundError(run_id)
                owner, expires, fence = row
                if self._live(owner, expires):
                    check_free(run_id, self.worker_id, owner, expires - time.time())
                connection.execute(
                    "UPDATE runs SET lease_owner = ?, lease_expires = ?, fence = ?"
                    " WHERE run_id = ?",
                    (self.worker_id, time.time() + self.lease_seconds, fence + 1, run_id),
                )
            self._fences[run_id] = fence + 1
            self._running.pop(run_id, None)  # read the last record's number again

        await self._run(work)

    async def renew_lease(self, run_id: str) -> bool:
        """Extend this store object's lease; False if it holds none any more (taken over,
        freed or ended)."""
        fence = self._fences.get(run_id)
        if fence is None:
            return False

        def work(connection: sqlite3.Connection) -> bool:
            cursor = connection.execute(
                "UPDATE runs SET lease_expires = ? WHERE run_id = ? AND lease_owner = ?"
                " AND fence = ?",
                (time.time() + self.lease_seconds, run_id, self.worker_id, fence),
            )
            return cursor.rowcount == 1

        return await self._run(work)

    async def release_lease(self, run_id: str) -> None:
        """Give up this store object's lease on the run (another may take it at once)."""
        fence = self._fences.pop(run_id, None)
        if fence is None:
            return
        await self._run(
            lambda c: c.execute(
                "UPDATE runs SET lease_owner = NULL, lease_expires = NULL"
                " WHERE run_id = ? AND lease_owner = ? AND fence = ?",
                (run_id, self.worker_id, fence),
            )
        )

    async def claimable_runs(self, *, limit: int = 100) -> list[RunSummary]:
        """Runs that started and never ended that no live holder has (its process died, or it
        was cancelled), oldest first: what a worker resumes."""
        query = (
            f"{_SUMMARY.replace(' FROM', ', lease_owner, lease_expires FROM')}"
            " WHERE status = 'running' ORDER BY position"
        )
        rows = await self._run(lambda c: c.execute(query).fetchall())
        free = [row[:6] for row in rows if not self._live(row[6], row[7])]
        return [_summary(row) for row in free[:limit]]

    async def load(self, run_id: str) -> StoredRun:
        """The stored run rebuilt from its journal; `RunNotFoundError` for an unknown id."""
        checked_ids(run_id=run_id)
        bodies, blobs = await self._run(lambda connection: run_journal(connection, run_id))
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
            "status = ?": None if status is None else RunStatus(status).value,
            "session_id = ?": session_id,
            "user_id = ?": user_id,
            "created_at >= ?": since,
            "created_at < ?": until,
        }
        given = {clause: value for clause, value in filters.items() if value is not None}
        where = " AND ".join(given) or "1"
        query = f"{_SUMMARY} WHERE {where} ORDER BY position DESC LIMIT ?"
        arguments = (*given.values(), limit)
        rows = await self._run(lambda c: c.execute(query, arguments).fetchall())
        return [_summary(row) for row in rows]

    async def delete_run(self, run_id: str) -> bool:
        """Delete a run and its journal; False if there was none with that id."""
        checked_ids(run_id=run_id)
        return await self._run(lambda c: self._forget(c, "run_id = ?", run_id)) > 0

    async def delete_session(self, session_id: str) -> int:
        """Delete every run of a session; how many there were."""
        checked_ids(session_id=session_id)
        return await self._run(lambda c: self._forget(c, "session_id = ?", session_id))

    def _forget(self, connection: sqlite3.Connection, where: str, key: str) -> int:
        """Delete runs (under the store's lock) and forget what this store knew of them."""
        self._running.clear()  # an append to a deleted run must find it gone
        return _delete(connection, where, key)

    async def session_history(self, session_id: str, *, before: str | None = None) -> list[Message]:
        """The session's turns in order (every run's own messages), up to run `before`."""
        checked_ids(session_id=session_id, before=before)

        def work(connection: sqlite3.Connection) -> list[tuple[list[bytes], dict[str, bytes]]]:
            ids = connection.execute(
                "SELECT run_id FROM runs WHERE session_id = ? AND position < COALESCE("
                "(SELECT position FROM runs WHERE run_id = ?), 9223372036854775807)"
                " ORDER BY position",
                (session_id, before),
            ).fetchall()
            return [run_journal(connection, run_id) for (run_id,) in ids]

        messages: list[Message] = []
        for bodies, blobs in await self._run(work):
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
        page, cache = (session_id, before, limit, oldest), cache_of(self)
        read = await self._run(lambda connection: sqlite_turns(connection, page, cache.cached))
        return [cache.turn(run_id, stamp, found) for run_id, stamp, found in read]

    async def aclose(self) -> None:
        """Stop the writer thread (after the calls already queued) and close the connections;
        a later call opens them again."""
        thread = self._writer.stop()

        def work() -> None:
            if thread is not None:
                thread.join()
            with self._writer.lock:
                if self._inline is not None:
                    self._inline.close()
                self._inline = None

        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(work)


def _checkpoint(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")


def _summary(row: Sequence[Any]) -> RunSummary:
    return RunSummary(row[0], RunStatus(row[1]), row[2], row[3], row[4], row[5])


def _append_records(
    connection: sqlite3.Connection,
    run_id: str,
    bodies: Sequence[bytes],
    status: str,
    known: int | None,
) -> int:
    """Inside the caller's transaction: the records after the run's last one (`known`, or
    read), and the run's status when it may have changed (an end also frees the lease);
    returns the number of the last record written."""
    last = known if known is not None else _last_seq(connection, run_id)
    connection.executemany(
        "INSERT INTO records (run_id, seq, body) VALUES (?, ?, ?)",
        [(run_id, last + 1 + i, body) for i, body in enumerate(bodies)],
    )
    if status != RunStatus.RUNNING.value:
        connection.execute(
            "UPDATE runs SET status = ?, updated_at = ?, lease_owner = NULL,"
            " lease_expires = NULL WHERE run_id = ?",
            (status, time.time(), run_id),
        )
    elif known is None:
        connection.execute(
            "UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ? AND status <> ?",
            (status, time.time(), run_id, status),
        )
    return last + len(bodies)


def _last_seq(connection: sqlite3.Connection, run_id: str) -> int:
    """The number of the run's last record; `RunNotFoundError` for an unknown run."""
    (last,) = connection.execute(
        "SELECT MAX(seq) FROM records WHERE run_id = ?", (run_id,)
    ).fetchone()
    if last is None:
        raise RunNotFoundError(run_id)
    last_seq: int = last
    return last_seq


def _delete(connection: sqlite3.Connection, where: str, value: Any) -> int:
    with transaction(connection):
        forget_blobs(connection, where, value)
        connection.execute(
            f"DELETE FROM records WHERE run_id IN (SELECT run_id FROM runs WHERE {where})",
            (value,),
        )
        return connection.execute(f"DELETE FROM runs WHERE {where}", (value,)).rowcount

"""The SQLite store's writer: one long-lived thread that owns the store's connection.

Callers on the event loop hand it jobs through a queue (no thread hop per call) and wait on an
event the thread sets through the loop's own thread-safe callback (`run_sync_soon`, asyncio and
trio alike). Appends queued while a transaction is under way go into the next one together
(group commit), and one caller's failure never undoes another's write; each caller is woken
when its transaction has committed (adr/0035).
"""

from __future__ import annotations

import collections
import contextlib
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio
import anyio.lowlevel
from anyio.lowlevel import EventLoopToken

from reactloop._durable._sqlite_file import (
    FileIdentity,
    create_private,
    is_busy,
    migrate,
    unopenable,
)
from reactloop._stored_errors import StoreError

T = TypeVar("T")
_QUEUED, _TAKEN, _RUNNING, _DONE, _WITHDRAWN = range(5)
_GROUP_MAX = 64  # appends at most in one transaction
_BUSY_SLICE = 0.05  # seconds one attempt waits for another process's write lock


class Job(Generic[T]):
    """One call for the writer thread: `work` on the connection, and how its caller waits.

    A `grouped` job is a write without a transaction of its own (an append): it runs inside
    the writer's transaction, in a savepoint; `after` runs once that transaction committed.
    """

    __slots__ = ("after", "done", "grouped", "outcome", "queued", "state", "token", "work")

    def __init__(
        self,
        work: Callable[[sqlite3.Connection], T],
        grouped: bool,
        after: Callable[[T], None] | None,
    ) -> None:
        self.work = work
        self.grouped = grouped
        self.after = after
        self.done = anyio.Event()
        self.token: EventLoopToken = anyio.lowlevel.current_token()
        self.state = _QUEUED
        self.outcome: Any = None
        self.queued = time.monotonic()

    def result(self) -> T:
        """What `work` returned, or raise what it raised."""
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        value: T = self.outcome
        return value


class Connector:
    """Opens the store's file (WAL, the chosen sync mode, the schema) and notices when the file
    is deleted or replaced under it (SQLite would go on writing into the unlinked file)."""

    def __init__(self, path: str, synchronous: str) -> None:
        self.path = path
        self.synchronous = synchronous
        self.file: FileIdentity | None = None
        self.opened = False  # the schema is in place (the inline connection may open it)
        self.broken: StoreError | None = None

    def open(self) -> sqlite3.Connection:
        """A new connection to the file, created owner-only on first use."""
        try:
            create_private(self.path)
        except OSError as exc:
            raise unopenable(self.path, exc) from None
        connection = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=_BUSY_SLICE
        )
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(f"PRAGMA synchronous={self.synchronous}")
            migrate(connection)
            self.file = None if self.path == ":memory:" else FileIdentity.of(self.path)
            self.opened = True
        except BaseException:
            connection.close()
            raise
        return connection

    def check(self) -> None:
        """`StoreError` (from now on, for every call) once the file or its WAL has changed."""
        if self.broken is None and self.file is not None:
            problem = self.file.changed()
            if problem is not None:
                self.broken = StoreError(
                    f"run store {self.path!r}: {problem} while the store had it open, so what "
                    "it wrote since is gone with it; nothing more is written (restore the file, "
                    "or open a new store)"
                )
        if self.broken is not None:
            raise self.broken

    def failed(self, exc: BaseException) -> BaseException:
        """The typed error a failed call raises (SQLite's and the system's become a
        `StoreError` naming the file; the store's own errors pass as they are)."""
        if isinstance(exc, OSError) or (
            isinstance(exc, sqlite3.Error) and "unable to open" in str(exc)
        ):
            return unopenable(self.path, exc)
        if isinstance(exc, sqlite3.Error):
            return StoreError(f"run store {self.path!r} failed: {exc}")
        return exc


class Writer:
    """The thread and its queue. Started by the first job; `stop` (also when the store is
    dropped) lets it finish the jobs already queued and exit; a later job starts a new one."""

    def __init__(self, connector: Connector, lock_seconds: float, call_seconds: float) -> None:
        self.connector = connector
        self.lock_seconds = lock_seconds
        self.call_seconds = call_seconds
        self.commits = 0  # grouped transactions committed (appends per commit, for tests)
        self.submitted = 0  # jobs handed to the thread so far
        self.generation = 0  # forks survived: a connection opened before one is not used after
        self._fresh()
        _WRITERS.add(self)

    def _fresh(self) -> None:
        """No thread, no queue, new locks (a forked child has none of its parent's threads)."""
        self.lock = threading.Lock()  # held while the thread works (the store's inline appends)
        # guards the queue and job states; re-entrant, since a finalizer (`stop`) may run in a
        # garbage collection that starts while this thread holds it
        self.ready = threading.Condition(threading.RLock())
        self._queue: collections.deque[Job[Any]] = collections.deque()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def forked(self) -> None:
        """In a forked child: start afresh (the parent's connection is left alone, unclosed)."""
        self.generation += 1
        self._fresh()

    async def call(
        self,
        work: Callable[[sqlite3.Connection], T],
        *,
        grouped: bool = False,
        after: Callable[[T], None] | None = None,
    ) -> T:
        """`work` done by the thread. A caller cancelled before its job started withdraws it:
        nothing is written; once it started, the caller waits for its transaction to commit or
        fail, so a write is never abandoned half done. The thread bounds the time (a job that
        waited `StoreTimeouts.call` in the queue, or the file's lock `StoreTimeouts.lock`, is
        refused unwritten), so no timer is set per call."""
        job = Job(work, grouped, after)
        self._submit(job)
        try:
            await job.done.wait()
        except anyio.get_cancelled_exc_class():
            await self._settle(job)
            raise
        return job.result()

    def _submit(self, job: Job[Any]) -> None:
        with self.ready:
            if self._thread is None:
                self._start()
            self._queue.append(job)
            self.submitted += 1
            self.ready.notify()

    def _start(self) -> None:
        """A new thread with a queue of its own (a stopping one finishes its own and exits)."""
        self._queue = collections.deque()
        self._stopping = False
        self._thread = threading.Thread(
            target=_serve,
            args=(self, self._queue),
            name=f"reactloop-sqlite {self.connector.path}",
            daemon=True,
        )
        self._thread.start()

    async def _settle(self, job: Job[Any]) -> bool:
        """Withdraw a job not started yet (True); else wait, shielded, until it is done."""
        with self.ready:
            if job.state in (_QUEUED, _TAKEN):
                if job.state == _QUEUED:  # (in an earlier queue, its thread skips it)
                    with contextlib.suppress(ValueError):
                        self._queue.remove(job)
                job.state = _WITHDRAWN
                job.work = job.after = None  # type: ignore[assignment]
                return True
        with anyio.CancelScope(shield=True):
            await job.done.wait()
        return False

    def queued(self) -> int:
        """How many jobs wait in the queue, not yet taken by the thread."""
        with self.ready:
            return len(self._queue)

    def stop(self) -> threading.Thread | None:
        """Let the thread exit once its queue is empty, closing the connection; the thread,
        to join. Safe from any thread, and from a finalizer."""
        with self.ready:
            thread, self._thread = self._thread, None
            self._stopping = True
            self.ready.notify()
        return thread

    def next_jobs(self, queue: collections.deque[Job[Any]]) -> list[Job[Any]] | None:
        """In the thread: wait for the next solo job, or the grouped jobs at the head of the
        queue (marked taken); None once stopped with nothing left."""
        with self.ready:
            while not queue or queue[0].state == _WITHDRAWN:
                if queue:
                    queue.popleft()
                elif self._stopping or self._queue is not queue:
                    return None
                else:
                    self.ready.wait()
            first = queue.popleft()
            taken = [first]
            if first.grouped:
                while queue and queue[0].grouped and len(taken) < _GROUP_MAX:
                    taken.append(queue.popleft())
            taken = [job for job in taken if job.state == _QUEUED]
            for job in taken:
                job.state = _TAKEN
            return taken

    def begin(self, jobs: list[Job[Any]]) -> list[Job[Any]]:
        """In the thread: mark running the jobs not withdrawn (from now on they cannot be)."""
        with self.ready:
            running = [job for job in jobs if job.state == _TAKEN]
            for job in running:
                job.state = _RUNNING
            return running

    def pause(self, jobs: list[Job[Any]]) -> None:
        """In the thread: a job that found the file busy may be withdrawn again."""
        with self.ready:
            for job in jobs:
                if job.state == _RUNNING:
                    job.state = _TAKEN


class _Session:
    """One thread's connection, opened by its first job."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.connection: sqlite3.Connection | None = None

    def connected(self) -> sqlite3.Connection:
        if self.connection is None:
            self.connection = self.writer.connector.open()
        else:
            self.writer.connector.check()
        return self.connection


_WRITERS: weakref.WeakSet[Writer] = weakref.WeakSet()


def _after_fork() -> None:
    for writer in list(_WRITERS):
        writer.forked()


os.register_at_fork(after_in_child=_after_fork)


def _serve(writer: Writer, queue: collections.deque[Job[Any]]) -> None:
    """The thread's life: jobs until stopped, then the connection closed."""
    session = _Session(writer)
    try:
        while True:
            jobs = writer.next_jobs(queue)
            if jobs is None:
                return
            _do(session, jobs)
            jobs = []  # nothing of a finished job (nor its store) is kept while idle
    finally:
        if session.connection is not None:
            session.connection.close()


def _do(session: _Session, jobs: list[Job[Any]]) -> None:
    """Run the jobs (one transaction for a group), then wake their callers."""
    writer = session.writer
    try:
        with writer.lock:
            if time.monotonic() - jobs[0].queued > writer.call_seconds:
                _overdue(writer, jobs)
            elif jobs[0].grouped:
                _group(session, jobs)
            else:
                _solo(session, jobs[0])
    except BaseException as exc:  # the file cannot be opened, or the thread is dying
        writer.begin(jobs)
        for job in jobs:  # an error of its own each: callers raise it in their own tasks
            job.outcome = writer.connector.failed(exc)
    _wake([job for job in jobs if job.state == _RUNNING])


def _overdue(writer: Writer, jobs: list[Job[Any]]) -> None:
    """Jobs the thread reached too late (a call before them hung): refused, unwritten."""
    for job in writer.begin(jobs):
        job.outcome = StoreError(
            f"run store {writer.connector.path!r} did not answer within "
            f"{writer.call_seconds:g} s (StoreTimeouts.call); nothing was written"
        )


def _solo(session: _Session, job: Job[Any]) -> None:
    """A job with its own transaction (or none: a read), again while the file is busy."""
    connection = session.connected()
    attempts = _Attempts(session.writer)
    while session.writer.begin([job]):
        try:
            job.outcome = job.work(connection)
        except sqlite3.OperationalError as exc:
            if is_busy(exc) and attempts.wait([job]):
                continue
            job.outcome = (
                attempts.gave_up() if is_busy(exc) else session.writer.connector.failed(exc)
            )
        except Exception as exc:
            job.outcome = session.writer.connector.failed(exc)
        return


def _group(session: _Session, jobs: list[Job[Any]]) -> None:
    """Grouped appends in one transaction; the callers of those that succeeded learn so only
    once it committed."""
    connection = session.connected()
    if not _begun(session, connection, jobs):
        return
    running = session.writer.begin(jobs)
    try:
        kept = _each(session.writer, connection, running)
        connection.execute("COMMIT" if kept else "ROLLBACK")
    except BaseException as exc:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        for job in running:
            job.outcome = session.writer.connector.failed(exc)
        return
    session.writer.commits += bool(kept)
    for job in kept:
        if job.after is not None:
            job.after(job.outcome)


def _begun(session: _Session, connection: sqlite3.Connection, jobs: list[Job[Any]]) -> bool:
    """`BEGIN IMMEDIATE`, again while another process writes (for up to the lock bound);
    False, the jobs failed, when it could not be had."""
    attempts = _Attempts(session.writer)
    while True:
        try:
            connection.execute("BEGIN IMMEDIATE")
            return True
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or not attempts.wait([]):
                for job in session.writer.begin(jobs):
                    job.outcome = session.writer.connector.failed(
                        attempts.gave_up() if is_busy(exc) else exc
                    )
                return False


def _each(writer: Writer, connection: sqlite3.Connection, jobs: list[Job[Any]]) -> list[Job[Any]]:
    """The jobs' work inside the open transaction: those that succeeded. Optimistic: no
    savepoint per job; when one fails, what the group wrote is undone (to one savepoint taken
    at its start) and the others run again without it, so a failure undoes only its own."""
    if len(jobs) > 1:
        connection.execute("SAVEPOINT jobs")
    pending = list(jobs)
    while pending:
        failed = _first_failure(writer, connection, pending)
        if failed is None:
            return pending
        pending.remove(failed)
        if pending:  # (with none left, the caller rolls it all back)
            connection.execute("ROLLBACK TO jobs")
    return []


def _first_failure(
    writer: Writer, connection: sqlite3.Connection, jobs: list[Job[Any]]
) -> Job[Any] | None:
    """Run each job's work in order; the first that raised (its outcome the error), if any."""
    for job in jobs:
        try:
            job.outcome = job.work(connection)
        except Exception as exc:
            job.outcome = writer.connector.failed(exc)
            return job
    return None


class _Attempts:
    """Waits between attempts while another process holds the file's write lock, in the
    thread, for up to `StoreTimeouts.lock`; a caller cancelled meanwhile withdraws its job."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.give_up = time.monotonic() + writer.lock_seconds
        self.pause = 0.005

    def wait(self, jobs: list[Job[Any]]) -> bool:
        """Pause before the next attempt; False once the time is up."""
        if time.monotonic() >= self.give_up:
            return False
        self.writer.pause(jobs)
        time.sleep(self.pause)
        self.pause = min(self.pause * 2, 0.1)
        return True

    def gave_up(self) -> StoreError:
        path, seconds = self.writer.connector.path, self.writer.lock_seconds
        return StoreError(
            f"run store {path!r} stayed locked by another writer for {seconds:g} s "
            "(StoreTimeouts.lock); nothing was written"
        )


def _wake(jobs: list[Job[Any]]) -> None:
    """Mark the jobs done and set their events on their event loops, one callback per loop."""
    by_loop: dict[int, tuple[EventLoopToken, list[anyio.Event]]] = {}
    for job in jobs:
        job.state = _DONE
        job.work = job.after = None  # type: ignore[assignment]
        entry = by_loop.setdefault(id(job.token.native_token), (job.token, []))
        entry[1].append(job.done)
    for token, events in by_loop.values():
        with contextlib.suppress(anyio.RunFinishedError):  # that loop is gone, its callers too
            token.backend_class.run_sync_soon(_set_all, (events,), token.native_token)


def _set_all(events: list[anyio.Event]) -> None:
    for event in events:
        event.set()

"""The PostgreSQL store's connections: a few per store, opened as concurrent calls need them.

Each call runs in a worker thread (psycopg's blocking API: the one way that works on asyncio and
trio alike, ADR-0010) on a connection of its own: an idle one, else a new one while fewer than
`size` are open, else it waits for one. Concurrent runs' writes thus reach the server side by
side instead of queueing behind one connection (ADR-0036). Calls are bounded (`StoreTimeouts`):
a cancelled or timed-out call shuts its connection's socket, so a hung server never holds the
caller; a dropped connection is reopened and the call retried (every call is safe to retry).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread

from reactloop._durable._leases import StoreTimeouts
from reactloop._durable._postgres_schema import migrate
from reactloop._redact import Credentials, redacted
from reactloop._stored_errors import StoreError

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
Work = Callable[["psycopg.Connection[Any]"], T]


def shown(url: str, driver_message: object = None) -> str:
    """The URL (or libpq string) without its password or secret parameters, for messages and
    repr; with `driver_message`, that message with the URL's secrets masked wherever they are."""
    if driver_message is None:
        return redacted(url)
    return Credentials(url).redact(str(driver_message))


class Disconnected(Exception):
    """The connection dropped (or could not be opened): a call to retry on a new one."""


class _Slot:
    """One connection of the pool (None until opened) and the call using it now."""

    def __init__(self) -> None:
        self.connection: psycopg.Connection[Any] | None = None
        self.current: Call | None = None


class Call:
    """One store call's claim on a connection: a call whose caller left is not started, and
    only the call using a connection shuts its socket."""

    def __init__(self) -> None:
        self.cancelled = False
        self.slot: _Slot | None = None


class Connections:
    """At most `size` connections to `url`, each used by one call at a time."""

    def __init__(
        self, driver: Any, url: str, name: str, timeouts: StoreTimeouts, size: int
    ) -> None:
        self.url, self.name, self.timeouts, self.size = url, name, timeouts, size
        self._psycopg = driver
        self._slots: list[_Slot] = []
        self._idle: list[_Slot] = []  # the most recently used last: it is taken first
        self._ready = threading.Condition()

    def open_count(self) -> int:
        """How many connections are open now."""
        with self._ready:
            return sum(1 for s in self._slots if s.connection and not s.connection.closed)

    async def run(self, work: Work[T]) -> T:
        """`work` on a connection, in a worker thread, bounded by `StoreTimeouts.call`; a
        dropped connection is reopened and `work` run again (every `work` here is safe to
        repeat), for up to `StoreTimeouts.reconnect` seconds."""
        with anyio.move_on_after(self.timeouts.call):
            return await self._reconnecting(work)
        raise StoreError(
            f"run store {shown(self.url)!r} did not answer within "
            f"{self.timeouts.call:g} s (StoreTimeouts.call)"
        )

    async def _reconnecting(self, work: Work[T]) -> T:
        give_up = anyio.current_time() + self.timeouts.reconnect
        pause = 0.05
        while True:
            try:
                return await self._attempt(work)
            except Disconnected as lost:
                if anyio.current_time() >= give_up:
                    raise StoreError(
                        f"run store {shown(self.url)!r} lost its connection and could not "
                        f"reconnect within {self.timeouts.reconnect:g} s "
                        f"(StoreTimeouts.reconnect): {shown(self.url, lost)}"
                    ) from None
            await anyio.sleep(pause)
            pause = min(pause * 2, 1.0)

    async def _attempt(self, work: Work[T]) -> T:
        """One try in a worker thread. A caller that leaves (cancelled, timed out) does not
        wait for a hung server: the call's socket is shut, which ends the thread's wait (the
        server rolls back what was not committed)."""
        call = Call()
        try:
            return await anyio.to_thread.run_sync(self.locked, work, call, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            _interrupt(call)
            raise

    def locked(self, work: Work[T], call: Call) -> T:
        """`work` on a connection taken for it alone (in a worker thread)."""
        slot = self._take()
        try:
            slot.current, call.slot = call, slot
            if call.cancelled:  # its caller left while it waited: never start it
                raise Disconnected("the call was cancelled before it started")
            return work(self._connect(slot))
        except self._psycopg.Error as exc:
            raise self._fault(slot, exc) from exc
        finally:
            slot.current = None
            self._give_back(slot)

    def _take(self) -> _Slot:
        """An idle connection's slot, or a new one while fewer than `size` exist; waits for one
        to come back for up to `StoreTimeouts.call`."""
        give_up = time.monotonic() + self.timeouts.call
        with self._ready:
            while not self._idle and len(self._slots) >= self.size:
                left = give_up - time.monotonic()
                if left <= 0 or not self._ready.wait(left):
                    raise StoreError(
                        f"run store {shown(self.url)!r}: its {self.size} connections were all "
                        f"busy for {self.timeouts.call:g} s (StoreTimeouts.call)"
                    )
            if self._idle:
                return self._idle.pop()
            slot = _Slot()
            self._slots.append(slot)
            return slot

    def _give_back(self, slot: _Slot) -> None:
        with self._ready:
            kept = slot in self._slots  # else `close_all` dropped it while in use
            if kept:
                self._idle.append(slot)
            self._ready.notify()
        if not kept and slot.connection is not None:
            slot.connection.close()

    def _connect(self, slot: _Slot) -> psycopg.Connection[Any]:
        connection = slot.connection
        if connection is None or connection.closed:
            timeouts = self.timeouts
            connection = self._psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(2, round(timeouts.connect)),
                application_name=f"reactloop:{self.name}"[:63],
            )
            try:
                connection.execute(
                    f"SET statement_timeout = {round(timeouts.call * 1000)};"
                    f" SET lock_timeout = {round(timeouts.lock * 1000)}"
                )
                migrate(connection)
            except BaseException:
                connection.close()
                raise
            slot.connection = connection
        return connection

    def _fault(self, slot: _Slot, exc: Exception) -> Exception:
        """What a driver error means: a dropped connection to retry on a new one, else a
        `StoreError` naming the store and the bound a timeout broke."""
        connection = slot.connection
        if connection is None or connection.closed or connection.broken:
            if connection is not None:
                with suppress(Exception):
                    connection.close()
            slot.connection = None
            return Disconnected(str(exc).strip())
        errors = self._psycopg.errors
        where = f"run store {shown(self.url)!r}"
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
        return StoreError(f"{where} failed: {shown(self.url, exc)}")

    def close_all(self) -> None:
        """Close every idle connection now and each one in use when its call ends; a later
        call opens new ones."""
        with self._ready:
            idle, self._slots, self._idle = self._idle, [], []
            self._ready.notify_all()
        for slot in idle:
            if slot.connection is not None:
                with suppress(Exception):
                    slot.connection.close()

    async def aclose(self) -> None:
        """Close every connection, in a worker thread (closing may wait for the network)."""
        await anyio.to_thread.run_sync(self.close_all)


def _interrupt(call: Call) -> None:
    """Shut the socket of the connection `call` uses (a `dup` of its descriptor), if it uses
    one now: the thread waiting on it returns at once, even when the server is frozen."""
    call.cancelled = True
    slot = call.slot
    connection = None if slot is None or slot.current is not call else slot.connection
    if connection is None:
        return
    with suppress(Exception):
        duplicate = socket.socket(fileno=os.dup(connection.fileno()))
        with duplicate:
            duplicate.shutdown(socket.SHUT_RDWR)

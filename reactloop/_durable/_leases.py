"""The lease rules both shared stores apply (SQLite across processes, PostgreSQL across hosts),
and the time bounds of their calls.

A run row holds its lease: the owner (a worker id), an expiry and a fence, a number that grows
with every acquisition. A worker may write to a run only while the row names it *and* the fence
it was given, checked in the same transaction as the write: a worker that stalled past its
lease, or whose run another worker finished, is refused even when the lease is free again.
"""

from __future__ import annotations

import os
import socket
import uuid

from attrs import frozen

from reactloop._stored_errors import LeaseHeldError, LeaseLostError
from reactloop._validate import checked_arguments, fail, number, optional_instance

MAX_LEASE = 86_400.0


def default_worker() -> str:
    """`host:pid:suffix`: unique per store object, and tells a same-host reader the process."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def process_gone(owner: str) -> bool:
    """Whether `owner` names a process on this host that no longer exists (a default worker id
    of a crashed process): its leases are free at once. Unknown forms are never gone."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, under another user
    return False


def check_free(run_id: str, worker_id: str, owner: str | None, seconds_left: float) -> None:
    """Before taking a lease: `LeaseHeldError` while another live worker holds it."""
    if owner is not None and owner != worker_id and seconds_left > 0:
        raise LeaseHeldError(run_id, owner, seconds_left)


def check_holder(
    run_id: str, worker_id: str, fence: int | None, row_owner: str | None, row_fence: int
) -> None:
    """Before a holder's write: `LeaseLostError` unless the row still names this worker and the
    fence it was given (a takeover, an end or a release since then changed one of them)."""
    if fence is None or row_owner != worker_id or row_fence != fence:
        raise LeaseLostError(run_id, worker_id, row_owner if row_owner != worker_id else None)


@checked_arguments
@frozen
class StoreTimeouts:
    """Time bounds of a store's calls, in seconds, so a hung server or a file locked by another
    process never holds a run hostage: `call` bounds any one call end to end (its waits and
    retries included), `lock` a wait for another writer's lock, `connect` opening a connection
    and `reconnect` how long a server store keeps reconnecting after a dropped connection (the
    last two apply to PostgreSQL). Each fault is a `StoreError` naming the store and the bound.
    """

    call: float = 60.0
    lock: float = 10.0
    connect: float = 10.0
    reconnect: float = 30.0

    def __attrs_post_init__(self) -> None:
        for name in ("call", "lock", "connect", "reconnect"):
            number(f"StoreTimeouts.{name}", getattr(self, name))


def checked_lease_seconds(option: str, value: object) -> float:
    """A lease length: seconds in (0, 86400]."""
    seconds = number(option, value)
    if seconds > MAX_LEASE:
        fail(option, value, "seconds in (0, 86400]")
    return float(seconds)


def timeouts_option(option: str, value: object) -> StoreTimeouts:
    """The store's `timeouts`: a `StoreTimeouts`, or None for the defaults."""
    given = optional_instance(option, value, StoreTimeouts, "StoreTimeouts")
    return StoreTimeouts() if given is None else given

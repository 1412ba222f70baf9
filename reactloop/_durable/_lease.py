"""Keeping a run's lease while a worker drives it (stores shared by many workers).

A heartbeat renews the lease every third of its length, so a long model call or tool call does
not let it expire; leaving a run that did not end (cancelled, or its driver gave up) frees the
lease at once, so another worker can claim the run without waiting for the expiry. Each renewal
tells the journal how long the lease surely lasts: past that (the process stalled), the journal
renews before the next model call, and a lost lease stops the run before any new call.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext, suppress
from typing import TYPE_CHECKING, TypeGuard

import anyio

from reactloop._core import LeasingStore, RunStore, unwrap_single_error
from reactloop._durable._journal import Journal
from reactloop._policies import Sleep
from reactloop._stored_errors import StoreError

if TYPE_CHECKING:
    from reactloop._loop import Run
RELEASE_TIMEOUT = 5.0
_LEASING: dict[type, bool] = {type(None): False}


def leases(store: RunStore | None) -> TypeGuard[LeasingStore]:
    """Whether the store is shared by workers (leases); known per class, since a protocol check
    costs tens of microseconds and runs once per run."""
    kind = type(store)
    known = _LEASING.get(kind)
    if known is None:
        known = _LEASING[kind] = isinstance(store, LeasingStore)
    return known


def _renewed(store: LeasingStore, journal: Journal) -> None:
    """The lease was just taken or renewed: it surely lasts half its length from now."""
    journal.lease_until = time.monotonic() + store.lease_seconds / 2


async def _beat(store: LeasingStore, journal: Journal, sleep: Sleep) -> None:
    """Renew until the lease is gone (the run ended, or another worker took it over)."""
    while True:
        await sleep(store.lease_seconds / 3)
        try:
            if not await store.renew_lease(journal.run_id):
                journal.lease_until = -math.inf  # the next model call checks, and stops
                return
        except StoreError:
            continue  # a failed renewal is retried at the next beat; appends check the lease
        _renewed(store, journal)


def leased(run: Run) -> AbstractAsyncContextManager[None]:
    """Around driving `run`: keep its lease alive when its store is shared by workers."""
    store = run.config.store
    if leases(store) and isinstance(run.journal, Journal):
        return _kept(store, run.journal, run.config.sleep)
    return nullcontext()


@asynccontextmanager
async def _kept(store: LeasingStore, journal: Journal, sleep: Sleep) -> AsyncIterator[None]:
    """Renew the run's lease while the block runs; free it after, unless the run ended (its
    last append freed it already)."""
    run_id = journal.run_id
    _renewed(store, journal)
    try:
        with unwrap_single_error():
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_beat, store, journal, sleep)
                try:
                    yield
                finally:
                    tasks.cancel_scope.cancel()
    finally:
        if not journal.ended:
            await release(store, run_id)


async def acquire(store: RunStore, run_id: str) -> None:
    """Take the run's lease before resuming it (nothing for a store of one process)."""
    if leases(store):
        await store.acquire_lease(run_id)


async def let_go(store: RunStore, run_id: str) -> None:
    """Free a lease taken by `acquire` for a run that will not be driven after all."""
    if leases(store):
        await release(store, run_id)


async def release(store: LeasingStore, run_id: str) -> None:
    """Free this worker's lease, even from a cancelled task (shielded, bounded in time)."""
    with (
        anyio.CancelScope(shield=True),
        anyio.move_on_after(RELEASE_TIMEOUT),
        suppress(StoreError),  # the lease then expires on its own
    ):
        await store.release_lease(run_id)

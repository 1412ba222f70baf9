"""The mirror: a run's journal copied from its workflow to a reactloop store (`TemporalLoop(...,
mirror=store)`), so the tools that read stores (`reactloop runs`, the trace page, `ChatServer`)
show runs that live in Temporal like local ones.

The workflow hands its new records to the mirror activity at each pause and at the end (one
activity call each: the mirror is complete whenever the run waits or is over); the activity
opens nothing in history, runs on a worker with the store, and is idempotent under retries:
records carry their journal position, so a copy skips the ones the mirror already holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from attrs import evolve
from temporalio import activity

from reactloop._core import LeasingStore, Record, RunCreated, RunStatus, RunStore, status_after
from reactloop._durable import from_url
from reactloop._errors import ConfigurationError
from reactloop._stored_errors import RunNotFoundError
from reactloop._temporal._contracts import MirrorBatch, mirror_activity
from reactloop._temporal._errors import TemporalRunError
from reactloop._temporal._payloads import decode
from reactloop._temporal._workflow import decode_records

_STORE_METHODS = ("create_run", "append", "load", "list_runs")


def mirror_store(value: object) -> RunStore | None:
    """The `mirror` option as a store: None, a store URL (`sqlite:///runs.db`, as loops take),
    or a store object (`MemoryStore`, `SqliteStore`, `PostgresStore`, any `RunStore`)."""
    if value is None:
        return None
    if isinstance(value, str):
        store: RunStore = from_url("TemporalLoop.mirror", value)
        return store
    if all(callable(getattr(value, method, None)) for method in _STORE_METHODS):
        return value  # type: ignore[return-value]
    rule = "None, a run store (MemoryStore, SqliteStore, PostgresStore) or a store URL"
    raise ConfigurationError.invalid("TemporalLoop.mirror", value, rule)


class MirrorGapError(TemporalRunError):
    """The mirror holds fewer records of a run than the copy starts after (its run was deleted
    or the store replaced while the run went on): the copy would leave a hole, so none is made."""

    def __init__(self, run_id: str, held: int, after: int) -> None:
        super().__init__(
            f"the mirror must hold the run's first {after} records before the next are copied; "
            f"it holds {held} of run {run_id!r}",
            run_id,
        )


def mirror_activities(name: str, store: RunStore) -> list[Callable[..., Any]]:
    """The mirror activity of the loop named `name`, copying into `store` (on this worker)."""

    @activity.defn(name=mirror_activity(name))
    async def mirror(data: bytes) -> None:
        batch = decode(data, MirrorBatch)
        records = decode_records(batch.records)
        await copy_records(store, batch.run_id, batch.after, records, batch.session_id)

    return [mirror]


async def held_records(store: RunStore, run_id: str) -> int:
    """How many of the run's records `store` holds (0: not the run)."""
    try:
        return len((await store.load(run_id)).records)
    except RunNotFoundError:
        return 0


async def copy_records(
    store: RunStore,
    run_id: str,
    after: int,
    records: Sequence[Record],
    session_id: str | None = None,
) -> None:
    """Append `records` (the journal's from position `after`) to the run in `store`, skipping
    those it holds already: a retried copy adds nothing twice. A store that leases runs to a
    driver is leased for the copy and let go after it unless the copy ended the run. A turn of
    `session_id` is kept as a local session's turn is: in that session, without the earlier
    turns as its own history (they are the session's other runs)."""
    held = await held_records(store, run_id)
    if held < after:
        raise MirrorGapError(run_id, held, after)
    fresh = list(records[held - after :])
    if not fresh:
        return
    leasing = store if isinstance(store, LeasingStore) else None
    if held == 0:
        first = fresh.pop(0)
        assert isinstance(first, RunCreated), "a journal starts with its RunCreated record"
        if session_id is not None:
            first = evolve(first, session_id=session_id, history=())
        await store.create_run(first)  # leases it to this store object
    elif leasing is not None:
        await leasing.acquire_lease(run_id)
    try:
        if fresh:
            await store.append(run_id, fresh)
    finally:
        if leasing is not None and status_after(fresh) is RunStatus.RUNNING:
            await leasing.release_lease(run_id)

"""A worker's round over a store shared by many workers: claim the runs whose worker died and
resume each to its end (`resume_claimable`)."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import anyio

from reactloop._errors import ConfigurationError
from reactloop._groups import unwrap_single_error
from reactloop._lease import leases
from reactloop._loop import ReActLoop
from reactloop._state import RunResult
from reactloop._stored_errors import LeaseHeldError


async def resume_claimable(loop: ReActLoop, *, limit: int = 100, **context: Any) -> list[RunResult]:
    """A worker's round: resume (concurrently) up to `limit` runs of the loop's store that no
    worker holds (their worker died), each to its end; their results. A run another worker
    claims first is skipped. `context` is what `resume()` takes (`deps=`)."""
    store = loop.config.store
    if not leases(store):
        rule = "a store shared by workers (PostgresStore) to claim runs from"
        raise ConfigurationError.invalid("store", store, rule)
    results: list[RunResult] = []

    async def one(run_id: str) -> None:
        with suppress(LeaseHeldError):  # another worker was first: it drives the run
            results.append(await loop.resume(run_id, **context))

    with unwrap_single_error():
        async with anyio.create_task_group() as tasks:
            for summary in await store.claimable_runs(limit=limit):
                tasks.start_soon(one, summary.run_id)
    return results

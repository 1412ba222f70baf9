"""A worker's round over a store shared by many workers: claim the runs whose worker died and
resume each to its end (`resume_claimable`); set aside (park) a run no worker can resume, and
hand a parked run back once it is fixed (`unpark_run`)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio

from reactloop._core import (
    LeasingStore,
    RunParked,
    RunResult,
    RunStatus,
    RunStore,
    RunUnparked,
    unwrap_single_error,
)
from reactloop._durable import acquire, leases, let_go, release
from reactloop._errors import ConfigurationError, ContractError, ErrorCode, ReactLoopError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._resume import NotClaimableError, claim_run, resume_run
from reactloop._stored_errors import RunNotFoundError, UnreadableRunError

if TYPE_CHECKING:
    from reactloop._telemetry._workers import WorkerMetrics

logger = logging.getLogger("reactloop")

REASON_CHARS = 2_000
"""A parked run's reason keeps at most this much of the error's message."""


def cannot_resume(error: Exception) -> bool:
    """Whether `error`, met resuming a run, will recur on every try, so the run is parked:
    an error of code `configuration` (`MissingToolError`: a tool the loop lacks; a
    `ConfigurationError`, a decision that cannot apply, ...), a
    `ContractError` (user code broke its contract), an `UnreadableRunError` (a journal that
    cannot be read), or an exception reactloop does not type (a bug) other than an `OSError`.
    Every other reactloop error is a fault in the world that may clear (the store, the model,
    a toolset's server, a timeout, a run slot): the run stays claimable for the next round."""
    if isinstance(error, ContractError | UnreadableRunError):
        return True
    if isinstance(error, ReactLoopError):
        return error.code is ErrorCode.CONFIGURATION  # ConfigurationError, MissingToolError, ...
    return not isinstance(error, OSError)


def _taken_elsewhere(error: Exception) -> bool:
    """Another driver has the run (a conflict: another worker's lease, this process drives
    it, its session is busy), or it is gone or no longer running: the round leaves it."""
    if isinstance(error, NotClaimableError | RunNotFoundError):
        return True
    return isinstance(error, ReactLoopError) and error.code is ErrorCode.CONFLICT


async def resume_claimable(loop: ReActLoop, *, limit: int = 100, **context: Any) -> list[RunResult]:
    """A worker's round: resume (concurrently) up to `limit` runs of the loop's store that no
    worker holds (their worker died), each to its end; their results. `context` is what
    `resume()` takes (`deps=`).

    One run's failure never stops the others. A run another worker claims first (or ended
    meanwhile) is skipped. A run that cannot be resumed (see `cannot_resume`: a missing tool, a
    journal that cannot be read, a configuration or contract error) is *parked*: a `RunParked`
    record with the reason is journaled under this worker's lease, its status becomes
    `RunStatus.PARKED` and no worker claims it again until `unpark_run` (or a resume by id).
    A transient fault (a `StoreError`, the model or a toolset down) is logged and the run
    stays claimable. Cancellation is never caught.
    """
    store = loop.config.store
    if not leases(store):
        rule = "a store shared by workers (PostgresStore, SqliteStore) to claim runs from"
        raise ConfigurationError.invalid("store", store, rule)
    metrics = _metrics(loop)
    claimable = await store.claimable_runs(limit=limit)
    if metrics is not None:
        await metrics.round_started(store, len(claimable))
    results: list[RunResult] = []

    async def one(run_id: str) -> None:
        try:
            resumed = await resume_run(loop.config, run_id, context, claiming=True)
            if metrics is not None:
                metrics.taken_over()
            results.append(await loop._complete(resumed.run))  # a running run: no stored result
        except Exception as error:
            await _failed(store, run_id, error, metrics)

    with unwrap_single_error():
        async with anyio.create_task_group() as tasks:
            for summary in claimable:
                tasks.start_soon(one, summary.run_id)
    return results


async def _failed(
    store: LeasingStore, run_id: str, error: Exception, metrics: WorkerMetrics | None
) -> None:
    """What a round does with a run whose resume raised: leave it, park it, or log it."""
    if _taken_elsewhere(error):
        return
    if not cannot_resume(error):
        logger.warning("run %s stays claimable after a transient fault: %r", run_id, error)
        return
    try:
        parked = await park(store, run_id, error)
    except Exception as fault:  # the store failed: the run stays claimable, parked next time
        logger.warning("run %s cannot be resumed (%r) nor parked: %r", run_id, error, fault)
        return
    if parked:
        logger.warning("run %s parked: it cannot be resumed: %r", run_id, error)
        if metrics is not None:
            metrics.parked(error)


def parked_record(error: BaseException, worker_id: str | None) -> RunParked:
    """The record that parks a run for `error`."""
    reason = str(error) or type(error).__qualname__
    code = error.code if isinstance(error, ReactLoopError) else None
    return RunParked(reason[:REASON_CHARS], time.time(), code, type(error).__qualname__, worker_id)


async def park(store: LeasingStore, run_id: str, error: BaseException) -> bool:
    """Park the run for `error` under this worker's lease, if it is still running (another
    worker may have ended or parked it meanwhile); whether it was parked."""
    try:
        await store.acquire_lease(run_id)
    except Exception as taken:
        if _taken_elsewhere(taken):
            return False
        raise
    try:
        if await _status(store, run_id) is not RunStatus.RUNNING:
            return False
        await store.append(run_id, [parked_record(error, store.worker_id)])  # frees the lease
        return True
    finally:
        await release(store, run_id)


async def _status(store: RunStore, run_id: str) -> RunStatus:
    """The run's status; a journal that cannot be read counts as running (it was claimable,
    and no worker could have ended it)."""
    try:
        return (await store.load(run_id)).status
    except UnreadableRunError:
        return RunStatus.RUNNING


async def unpark_run(store: RunStore, run_id: str) -> bool:
    """Hand a parked run back, once what stopped it is fixed (the tool deployed, say): it is
    running again (`RunUnparked` is journaled) and the next worker round claims it. False if
    the run was not parked. `RunNotFoundError` for an unknown id; `LeaseHeldError` while a
    worker holds it. To drive it at once instead, `await loop.resume(run_id)` continues a
    parked run too."""
    release_claim = claim_run(store, run_id)
    try:
        await acquire(store, run_id)
        try:
            if await _status(store, run_id) is not RunStatus.PARKED:
                return False
            await store.append(run_id, [RunUnparked(time.time())])
            return True
        finally:
            await let_go(store, run_id)  # claimable at once, not when a lease expires
    finally:
        release_claim()


def _metrics(loop: ReActLoop) -> WorkerMetrics | None:
    """The worker metrics of a loop with telemetry on; None (no work at all) when it is off."""
    tracing = loop.config.tracing
    if tracing is None:
        return None
    from reactloop._telemetry._workers import worker_metrics  # OpenTelemetry: only when on

    return worker_metrics(tracing)

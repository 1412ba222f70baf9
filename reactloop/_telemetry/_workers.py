"""Worker metrics through OpenTelemetry (imported only when a loop's telemetry is on): what a
worker round (`resume_claimable`) meets.

- `reactloop.worker.lease.takeovers` (counter): runs a round took over from a worker that no
  longer drove them (its lease expired or was let go) and resumed;
- `reactloop.worker.runs.parked` (counter, by `error.type`): runs a round parked;
- `reactloop.worker.runs.claimable` (gauge): runs waiting to be claimed at a round's start (at
  most the round's `limit`);
- `reactloop.worker.paused_run.age` (gauge, seconds): how long the oldest paused run has waited
  for decisions (among the newest `PAUSED_SCAN` paused runs; 0 when none waits).

Not semantic-convention names (there are none for these): reactloop's own, under `reactloop.`.
"""

from __future__ import annotations

import logging
import time
import weakref

from opentelemetry import metrics

from reactloop._core import RunStatus, RunStore
from reactloop._telemetry import _semconv as sc
from reactloop._telemetry._otel import SCOPE, Tracing, error_type
from reactloop._version import __version__

TAKEOVERS = "reactloop.worker.lease.takeovers"
PARKED = "reactloop.worker.runs.parked"
CLAIMABLE = "reactloop.worker.runs.claimable"
PAUSED_AGE = "reactloop.worker.paused_run.age"
RUNS_UNIT = "{run}"
PAUSED_SCAN = 1_000
"""How many paused runs (the newest) a round looks at to find the oldest."""

logger = logging.getLogger("reactloop")


class WorkerMetrics:
    """A loop's worker instruments, made once per loop (on its first round)."""

    def __init__(self, meter: metrics.Meter) -> None:
        self.takeovers = meter.create_counter(
            TAKEOVERS, unit=RUNS_UNIT, description="Runs a worker took over and resumed."
        )
        self.parked_runs = meter.create_counter(
            PARKED, unit=RUNS_UNIT, description="Runs a worker could not resume and parked."
        )
        self.claimable = meter.create_gauge(
            CLAIMABLE, unit=RUNS_UNIT, description="Runs waiting to be claimed by a worker."
        )
        self.paused_age = meter.create_gauge(
            PAUSED_AGE, unit="s", description="How long the oldest paused run has waited."
        )

    async def round_started(self, store: RunStore, claimable: int) -> None:
        """Measure the runs waiting to be claimed and the oldest paused run's age; a store
        that cannot list paused runs now leaves that gauge as it was (the round goes on)."""
        self.claimable.set(claimable)
        try:
            paused = await store.list_runs(status=RunStatus.PAUSED, limit=PAUSED_SCAN)
        except Exception as fault:
            logger.warning("the oldest paused run could not be measured: %r", fault)
            return
        since = min((summary.updated_at for summary in paused), default=None)
        self.paused_age.set(0.0 if since is None else max(0.0, time.time() - since))

    def taken_over(self) -> None:
        """A round took a run over."""
        self.takeovers.add(1)

    def parked(self, error: BaseException) -> None:
        """A round parked a run for `error`."""
        self.parked_runs.add(1, {sc.ERROR_TYPE: error_type(error)})


_made: weakref.WeakKeyDictionary[Tracing, WorkerMetrics] = weakref.WeakKeyDictionary()


def worker_metrics(tracing: Tracing) -> WorkerMetrics:
    """The worker metrics of a loop's tracing, made on first use."""
    made = _made.get(tracing)
    if made is None:
        telemetry = tracing.telemetry
        meter = metrics.get_meter(SCOPE, __version__, telemetry.meter_provider)
        made = _made[tracing] = WorkerMetrics(meter)
    return made

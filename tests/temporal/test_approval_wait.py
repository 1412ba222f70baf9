"""A run paused for approval waits in its workflow with no worker at all: every worker process
is stopped during the wait, a fresh one is started, the decision is applied, and the approved
tool runs once, in the fresh worker; the result is the one a local run of the same loop gives,
and the workflow's history replays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import Client

from reactloop import Approve, RunResult
from reactloop._core._records import RunStatus
from reactloop.temporal import TemporalRun
from tests.temporal.agents import (
    create_counts,
    invocations,
    loop,
    temporal_loop,
    vendor_model,
)
from tests.temporal.harness import assert_runs_replay, final_answer, script, vendor, workers

pytestmark = pytest.mark.anyio
GUARD_SECONDS = 60.0
"""A hang guard: each wait here ends within a few workflow tasks."""
POLL_SECONDS = 0.05
TEXT = script("refund", "refund")


async def paused(run: TemporalRun) -> None:
    """Return once the run has paused (polling the server, under a hang guard)."""
    with anyio.fail_after(GUARD_SECONDS):
        while True:
            if await run.status() is RunStatus.PAUSED:
                return
            await anyio.sleep(POLL_SECONDS)


async def local_result(counts: Path) -> RunResult[Any]:
    """The same conversation run by the plain loop in this process (its own vendor; its model
    closed before the vendor stops, so no connection is left to the garbage collector)."""
    create_counts(counts)
    async with (
        vendor() as scripted,
        vendor_model(scripted.url) as model,
        loop(scripted.url, counts, model) as local,
    ):
        first = await local.run(TEXT, run_id="refund")
        assert first.stop_reason == "awaiting_approval"
        return await local.resume("refund", decisions={"call_0": Approve()})


def comparable(result: RunResult[Any]) -> tuple[object, ...]:
    """What a run's result says, without its wall-clock duration and step timings."""
    return (
        result.run_id,
        result.output,
        result.stop_reason,
        result.stop_detail,
        result.messages,
        result.usage,
        result.tools_used,
        result.error,
        result.pending,
    )


async def test_a_paused_run_survives_every_worker_stopping_and_resumes_on_a_fresh_one(
    temporal_dev: Client, task_queue: str, tmp_path: Path
) -> None:
    counts = tmp_path / "counts.db"
    create_counts(counts)
    async with (
        vendor() as scripted,
        workers(temporal_dev, task_queue, scripted, counts, tmp_path) as pool,
    ):
        support = temporal_loop(scripted.url, counts)
        await pool.start()
        await pool.start()
        run = await support.start(temporal_dev, TEXT, run_id="refund", task_queue=task_queue)
        await paused(run)
        await pool.stop_all()
        assert await run.status() is RunStatus.PAUSED  # read with no worker up
        assert [held.call_id for held in await run.pending()] == ["call_0"]
        fresh = await pool.start()
        await run.decide({"call_0": Approve()})
        with anyio.fail_after(GUARD_SECONDS):
            result = await run.result()

    rows = invocations(counts)
    assert [(row.tool, row.event, row.pid) for row in rows] == [
        ("refund", "start", fresh.pid),
        ("refund", "finish", fresh.pid),
    ]
    assert scripted.repeated_model_calls() == {}
    assert result.output == final_answer("refund", ["refunded refund"])
    assert comparable(result) == comparable(await local_result(tmp_path / "local.db"))
    await assert_runs_replay(temporal_dev, support, "refund")

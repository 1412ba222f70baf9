"""200 runs of 3 steps (two tool calls and an answer) across 3 worker processes on the dev
server: every run completes with its answer, and each activity ran once: one model request per
run and step at the vendor, one start and one finish per tool call in the counts file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import Client

from reactloop import RunResult
from reactloop.temporal import TemporalLoop
from tests.temporal.agents import create_counts, invocations, temporal_loop
from tests.temporal.harness import assert_runs_replay, final_answer, script, vendor, workers

pytestmark = pytest.mark.anyio
RUNS = 200
WORKERS = 3
STEPS = 3  # model calls per run: two tool calls, then the answer
GUARD_SECONDS = 300.0
"""A hang guard (the runs take well under a minute on two cores)."""


async def run_all(client: Client, support: TemporalLoop, task_queue: str) -> dict[str, Any]:
    """Start every run at once; return each run's result by run id."""
    results: dict[str, RunResult[Any]] = {}

    async def one(run_id: str) -> None:
        text = script(run_id, *["step"] * (STEPS - 1))
        run = await support.start(client, text, run_id=run_id, task_queue=task_queue)
        results[run_id] = await run.result()

    with anyio.fail_after(GUARD_SECONDS):
        async with anyio.create_task_group() as tasks:
            for index in range(RUNS):
                tasks.start_soon(one, f"scale-{index}")
    return results


async def test_200_runs_of_3_steps_across_3_workers_each_activity_once(
    temporal_dev: Client, task_queue: str, tmp_path: Path
) -> None:
    counts = tmp_path / "counts.db"
    create_counts(counts)
    async with (
        vendor() as scripted,
        workers(temporal_dev, task_queue, scripted, counts, tmp_path) as pool,
    ):
        support = temporal_loop(scripted.url, counts)
        pids = {(await pool.start()).pid for _ in range(WORKERS)}
        results = await run_all(temporal_dev, support, task_queue)

    run_ids = sorted(results)
    assert len(run_ids) == RUNS
    for run_id, result in results.items():
        assert result.output == final_answer(run_id, [f"stepped {run_id}"] * (STEPS - 1))
    expected_calls = {(run_id, step) for run_id in run_ids for step in range(STEPS)}
    assert set(scripted.model_calls) == expected_calls
    assert scripted.repeated_model_calls() == {}
    rows = invocations(counts)
    per_call = Counter((row.run_id, row.call_id, row.event) for row in rows)
    assert len(per_call) == RUNS * (STEPS - 1) * 2 and set(per_call.values()) == {1}
    assert {row.pid for row in rows} == pids  # every worker took part
    await assert_runs_replay(temporal_dev, support, *run_ids)

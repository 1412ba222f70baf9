"""A worker process SIGKILLed while two runs' tools are in flight on it (one idempotent, one
not): another worker process finishes both runs; no model call is made twice; the idempotent
tool runs again (twice in all) and the other never does: its run reads reactloop's interrupted
result, as a resumed local run would (ADR-0033's exactly-once rules, kept across processes)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from temporalio.client import Client

from reactloop import ToolMessage
from reactloop._core._repair import INTERRUPTED_RESULT
from tests.temporal.agents import Invocation, create_counts, invocations, temporal_loop
from tests.temporal.harness import (
    assert_runs_replay,
    final_answer,
    script,
    vendor,
    workers,
)

pytestmark = pytest.mark.anyio
RUNS_SECONDS = 120.0
"""A hang guard: the runs end within the heartbeat timeout (2 s) plus a few workflow tasks."""


def starts(rows: list[Invocation], tool: str) -> list[int]:
    """The pids that started `tool`, in order."""
    return [row.pid for row in rows if row.tool == tool and row.event == "start"]


def finishes(rows: list[Invocation], tool: str) -> list[int]:
    return [row.pid for row in rows if row.tool == tool and row.event == "finish"]


def tool_message(messages: tuple[object, ...]) -> ToolMessage:
    (found,) = [message for message in messages if isinstance(message, ToolMessage)]
    return found


async def test_a_worker_killed_mid_tool_another_finishes_every_run_without_repeats(
    temporal_dev: Client, task_queue: str, tmp_path: Path
) -> None:
    counts = tmp_path / "counts.db"
    create_counts(counts)
    async with (
        vendor() as scripted,
        workers(temporal_dev, task_queue, scripted, counts, tmp_path) as pool,
    ):
        support = temporal_loop(scripted.url, counts)
        doomed = await pool.start()  # alone, so both tools start on it
        charging = await support.start(
            temporal_dev, script("charge", "charge"), run_id="charge", task_queue=task_queue
        )
        looking = await support.start(
            temporal_dev, script("lookup", "lookup"), run_id="lookup", task_queue=task_queue
        )
        with anyio.fail_after(RUNS_SECONDS):
            visits = await scripted.wait_for_visits(2)
        assert {(visit.tool, visit.pid) for visit in visits} == {
            ("charge", doomed.pid),
            ("lookup", doomed.pid),
        }
        survivor = await pool.start()
        await pool.kill(doomed)
        scripted.opened.set()
        with anyio.fail_after(RUNS_SECONDS):
            charged, looked = await charging.result(), await looking.result()

    rows = invocations(counts)
    assert starts(rows, "lookup") == [doomed.pid, survivor.pid]  # re-run once, elsewhere
    assert finishes(rows, "lookup") == [survivor.pid]
    assert starts(rows, "charge") == [doomed.pid]  # never started again
    assert finishes(rows, "charge") == []
    assert scripted.repeated_model_calls() == {}
    assert set(scripted.model_calls) == {("charge", 0), ("charge", 1), ("lookup", 0), ("lookup", 1)}

    interrupted = tool_message(charged.messages)
    assert (interrupted.text, interrupted.is_error) == (INTERRUPTED_RESULT, True)
    assert charged.output == final_answer("charge", [INTERRUPTED_RESULT])
    assert tool_message(looked.messages).text == "found lookup"
    assert looked.output == final_answer("lookup", ["found lookup"])
    await assert_runs_replay(temporal_dev, support, "charge", "lookup")

"""A run's handle on Temporal: interrupt a running run (the signal reaches the live run), and
reach a run started elsewhere by its id."""

from __future__ import annotations

import uuid

import anyio
import pytest
from temporalio.client import Client

from reactloop import ReActLoop, StopReason
from reactloop.stores import RunStatus
from reactloop.temporal import TemporalLoop, temporal_worker
from reactloop.testing import ScriptedModel, call
from reactloop.tools import tool
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


async def test_an_interrupt_stops_the_running_run_with_its_message(
    temporal_dev: Client, task_queue: str
) -> None:
    started, gate, calls = anyio.Event(), anyio.Event(), []

    @tool
    async def slow() -> str:
        """Wait until the test lets go."""
        calls.append("slow")
        started.set()
        await gate.wait()
        return "done"

    model = ScriptedModel([call("slow"), "never asked", "never asked"])
    support = TemporalLoop(ReActLoop(model, tools=[slow]), name="support")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            await support.start(temporal_dev, "go", run_id=run_id, task_queue=task_queue)
            run = support.get(temporal_dev, run_id)  # a handle on a run started before
            await started.wait()
            await run.interrupt("enough")  # in history before the tool's completion
            gate.set()
            result = await run.result()
            status = await run.status()
    assert (result.stop_reason, result.output) == (StopReason.INTERRUPTED, "enough")
    assert calls == ["slow"] and len(model.requests) == 1 and status is RunStatus.INTERRUPTED
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)

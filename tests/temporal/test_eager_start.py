"""`start(..., eager_start=True)`: the run's first workflow task comes back in the start's own
answer to this process's worker (Temporal's eager workflow start) instead of through the task
queue, and the run is the one a plain start gives; the history replays."""

from __future__ import annotations

import uuid

import anyio
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from reactloop import ReActLoop
from reactloop.temporal import TemporalLoop, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call, reply
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


async def _first_task_polled(client: Client, workflow_id: str) -> bool:
    """Whether the first workflow task reached the worker by a poll of the task queue: the
    server then tells the worker the history's size, which it leaves out of a task handed back
    in the start's answer."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    started = next(
        event.workflow_task_started_event_attributes
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
    )
    return started.history_size_bytes > 0


async def test_an_eager_start_hands_the_first_task_to_this_worker_and_runs_the_same(
    temporal_dev: Client, task_queue: str
) -> None:
    script = [reply("Looking.", call("lookup", order=42)), reply("Refunded.")]
    tool = FakeTool("lookup", result="found")
    support = TemporalLoop(ReActLoop(ScriptedModel(script * 2), tools=[tool]), name="support")
    plain_id, eager_id = uuid.uuid4().hex, uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            plain = await support.run(
                temporal_dev, "Refund order 42", run_id=plain_id, task_queue=task_queue
            )
            eager = await support.run(
                temporal_dev, "Refund order 42", run_id=eager_id, task_queue=task_queue,
                eager_start=True,
            )  # fmt: skip
    assert await _first_task_polled(temporal_dev, support.workflow_id(plain_id))
    assert not await _first_task_polled(temporal_dev, support.workflow_id(eager_id))
    assert (eager.output, eager.messages) == (plain.output, plain.messages)
    assert tool.calls == [{"order": 42}, {"order": 42}]
    await assert_replays(temporal_dev, support.workflow_id(eager_id), WORKFLOWS)

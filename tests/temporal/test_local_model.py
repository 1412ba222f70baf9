"""`ModelActivity(local=True)`: each model call is a Temporal local activity (run inside the
workflow task, recorded as a marker), and the run is the one a regular model activity gives:
the same events (deltas, a provider's refusal retried by the loop, the tool call), the tool
still an activity run once; the history replays."""

from __future__ import annotations

import uuid

import anyio
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from reactloop.errors import ConfigurationError
from reactloop.temporal import ActivityOptions, ModelActivity, TemporalLoop, temporal_worker
from reactloop.testing import FakeTool
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays
from tests.temporal.test_events import _events, _ids, _local, _loop, _script

pytestmark = pytest.mark.anyio


async def _scheduled_and_markers(client: Client, workflow_id: str) -> tuple[list[str], int]:
    """The activity types the workflow scheduled, and how many markers it recorded."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    scheduled = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    markers = sum(e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED for e in history.events)
    return scheduled, markers


async def test_local_model_calls_give_the_events_of_loop_stream_the_tool_an_activity(
    temporal_dev: Client, task_queue: str
) -> None:
    script = _script()
    local = await _local(script, "Refund order 42", tools=[FakeTool("lookup", result="found")])
    tool = FakeTool("lookup", result="found")
    options = ActivityOptions(model=ModelActivity(local=True))
    support = TemporalLoop(_loop(script, tools=[tool]), name="support", activities=options)
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            run = await support.start(
                temporal_dev, "Refund order 42", run_id=run_id, task_queue=task_queue
            )
            events = [event async for event in run.events()]
            await run.result()
    assert _ids(_events(events), run_id) == _events(local)
    assert tool.calls == [{"order": 42}]
    scheduled, markers = await _scheduled_and_markers(temporal_dev, run.workflow_id)
    assert scheduled == ["support.tool"]
    assert markers == 3  # the refusal, the tool call's answer, the final answer
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


def test_a_local_model_call_cannot_name_another_task_queue() -> None:
    with pytest.raises(ConfigurationError, match="local activity runs on the workflow's worker"):
        ModelActivity(local=True, task_queue="models")

"""A run on Temporal ends as the same run ends locally: the tool runs once, as an activity, the
result is that of `loop.run()` (its events: test_events.py); and the workflow's history
replays (determinism)."""

from __future__ import annotations

import uuid

import anyio
import pytest
from temporalio.client import Client

from reactloop import ReActLoop
from reactloop.models import ModelResponse
from reactloop.temporal import TemporalLoop, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call, reply
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


def _script() -> list[ModelResponse]:
    lookup = call("lookup", order=42)
    return [reply("Looking it up.", lookup), reply("Order 42 is refunded.")]


async def test_a_run_with_a_tool_gives_the_result_loop_run_gives(
    temporal_dev: Client, task_queue: str
) -> None:
    script = _script()
    local = await ReActLoop(ScriptedModel(script), tools=[FakeTool("lookup", result="found")]).run(
        "Refund order 42"
    )
    tool = FakeTool("lookup", result="found")
    support = TemporalLoop(ReActLoop(ScriptedModel(script), tools=[tool]), name="support")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            result = await support.run(
                temporal_dev, "Refund order 42", run_id=run_id, task_queue=task_queue
            )
    assert tool.calls == [{"order": 42}]
    assert result.run_id == run_id
    assert (result.output, result.stop_reason, result.stop_detail) == (
        local.output,
        local.stop_reason,
        local.stop_detail,
    )
    assert (result.messages, result.usage, result.tools_used) == (
        local.messages,
        local.usage,
        local.tools_used,
    )
    assert [step.response for step in result.steps] == [step.response for step in local.steps]
    await assert_replays(temporal_dev, support.workflow_id(run_id), WORKFLOWS)

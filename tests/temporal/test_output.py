"""Structured output on Temporal: a loop with `output_type` gives the same typed
`RunResult.output` as a local run (the workflow checks the answer, the client rebuilds the
value from the journal), also after an invalid answer went back to the model."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import attrs
import pytest
from temporalio.client import Client

from reactloop import ReActLoop
from reactloop.messages import ToolCall
from reactloop.output import FINAL_TOOL
from reactloop.temporal import TemporalLoop, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


@attrs.frozen
class Invoice:
    customer: str
    total: float
    paid: bool = False


def _final(**arguments: Any) -> ToolCall:
    return call(FINAL_TOOL, **arguments)


def _loop() -> ReActLoop[Invoice]:
    script = [call("lookup", who="Ann"), _final(customer="Ann", total="lots"), _final(
        customer="Ann", total=12.5
    )]  # fmt: skip
    lookup = FakeTool("lookup", result="Ann owes 12.5")
    return ReActLoop(ScriptedModel(script), tools=[lookup], output_type=Invoice)


async def test_a_typed_output_is_the_value_a_local_run_gives(
    temporal_dev: Client, task_queue: str
) -> None:
    local = await _loop().run("bill Ann")
    billing = TemporalLoop(_loop(), name="billing")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[billing]):
            result = await billing.run(
                temporal_dev, "bill Ann", run_id=run_id, task_queue=task_queue
            )
    assert local.output == Invoice("Ann", 12.5)
    assert type(result.output) is Invoice and result.output == local.output
    assert (result.stop_reason, len(result.steps)) == (local.stop_reason, len(local.steps))
    assert [m.text for m in result.messages] == [m.text for m in local.messages]
    await assert_replays(temporal_dev, billing.workflow_id(run_id), WORKFLOWS)

"""Temporal's size limits, handled: a tool result or a model answer too large for the workflow's
history (over `ActivityOptions.max_payload_bytes`, under Temporal's 2 MB a payload) never
crashes the workflow: the tool's call gets an error result naming the limit and the size (the
run goes on), the model call fails with a `ModelError` saying the same (the loop decides)."""

from __future__ import annotations

import uuid

import anyio
import pytest
from temporalio.client import Client

from reactloop import ReActLoop, StopReason
from reactloop.temporal import ActivityOptions, TemporalLoop, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call, reply
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


async def test_a_tool_result_over_the_limit_is_its_error_result_and_the_run_goes_on(
    temporal_dev: Client, task_queue: str
) -> None:
    big = FakeTool("dump", result="x" * 3_000_000)  # over Temporal's 2 MB: no workflow takes it
    model = ScriptedModel([call("dump"), "It was too large."])
    dumps = TemporalLoop(ReActLoop(model, tools=[big]), name="dumps")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(60):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[dumps]):
            result = await dumps.run(temporal_dev, "dump", run_id=run_id, task_queue=task_queue)
    (dumped,) = result.steps[0].tool_results
    assert dumped.is_error and "PayloadTooLargeError" in dumped.content
    assert "at most 2000000 bytes" in dumped.content and "it was 30000" in dumped.content
    assert (result.output, result.stop_reason) == ("It was too large.", StopReason.COMPLETED)
    assert big.calls == [{}]
    await assert_replays(temporal_dev, dumps.workflow_id(run_id), WORKFLOWS)


async def test_a_model_answer_over_the_limit_is_a_model_error_naming_it(
    temporal_dev: Client, task_queue: str
) -> None:
    model = ScriptedModel([reply("y" * 5_000)])
    limited = ActivityOptions(max_payload_bytes=4_096)  # a small budget: the limit is injected
    chat = TemporalLoop(ReActLoop(model), name="chat", activities=limited)
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[chat]):
            result = await chat.run(temporal_dev, "talk", run_id=run_id, task_queue=task_queue)
    assert result.stop_reason is StopReason.ERROR  # the error read back from the journal:
    assert "a model answer must be at most 4096 bytes" in str(result.error)
    assert len(model.requests) == 1  # a refusal of the loop's budget: never retried
    await assert_replays(temporal_dev, chat.workflow_id(run_id), WORKFLOWS)

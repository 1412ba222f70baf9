"""A run id names one run on Temporal as it does locally: starting a run with the id of a run
that exists (paused, or ended) gives that run's handle, never a second run, and
`if_exists="error"` refuses it with `RunExistsError`; a session's turn the same."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest
from temporalio.client import Client

from reactloop import Approve, ReActLoop, RunResult
from reactloop.errors import RunExistsError
from reactloop.stores import RunStatus
from reactloop.temporal import TemporalLoop, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


def _seen(result: RunResult[Any]) -> tuple[object, ...]:
    """What a caller reads of a result (a `RunResult` compares by identity)."""
    return (result.run_id, result.output, result.messages, result.stop_reason, result.usage)


async def test_a_run_id_in_use_gives_that_run_paused_or_ended_and_error_refuses_it(
    temporal_dev: Client, task_queue: str
) -> None:
    pay = FakeTool("pay", result="paid", requires_approval=True)
    model = ScriptedModel([call("pay"), "Paid."])
    payments = TemporalLoop(ReActLoop(model, tools=[pay]), name="payments")
    run_id, queue = uuid.uuid4().hex, dict[str, Any](task_queue=task_queue)
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, loops=[payments], **queue):
            first = await payments.start(temporal_dev, "pay", run_id=run_id, **queue)
            [event async for event in first.events()]  # up to its pause
            again = await payments.start(temporal_dev, "pay twice", run_id=run_id, **queue)
            assert (again.run_id, await again.status()) == (run_id, RunStatus.PAUSED)
            with pytest.raises(RunExistsError, match=run_id):
                await payments.start(temporal_dev, "pay", run_id=run_id, if_exists="error", **queue)
            (held,) = await again.pending()
            await again.decide({held.call_id: Approve()})
            result = await first.result()
            ended = await payments.start(temporal_dev, "pay again", run_id=run_id, **queue)
            assert _seen(await ended.result()) == _seen(result)
            with pytest.raises(RunExistsError):
                await payments.start(temporal_dev, "pay", run_id=run_id, if_exists="error", **queue)
    assert pay.calls == [{}] and len(model.requests) == 2 and result.output == "Paid."
    await assert_replays(temporal_dev, payments.workflow_id(run_id), WORKFLOWS)


async def test_a_sessions_turn_with_a_run_id_in_use_gives_that_run(
    temporal_dev: Client, task_queue: str
) -> None:
    model = ScriptedModel(["Hello, Ada.", "never asked"])
    chat = TemporalLoop(ReActLoop(model), name="chat")
    queue = dict[str, Any](task_queue=task_queue, session_id=uuid.uuid4().hex)
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, loops=[chat], task_queue=task_queue):
            first = await (
                await chat.start(temporal_dev, "I am Ada.", run_id=run_id, **queue)
            ).result()
            again = await chat.start(temporal_dev, "Who am I?", run_id=run_id, **queue)
            assert _seen(await again.result()) == _seen(first)
            with pytest.raises(RunExistsError):
                await chat.start(temporal_dev, "Hi", run_id=run_id, if_exists="error", **queue)
    assert first.output == "Hello, Ada." and len(model.requests) == 1
    await assert_replays(temporal_dev, chat.workflow_id(run_id), WORKFLOWS)

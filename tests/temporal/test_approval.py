"""Approvals on Temporal: a paused run waits in its workflow, its held calls readable without a
worker (the memo); a decision is an update the workflow checks as `resume()` does (a refused
one is a `DecisionError` to the caller, nothing kept); an hour's deadline denies at once on the
time-skipping server."""

from __future__ import annotations

import anyio
import pytest
from temporalio.client import Client

from reactloop import Approve, ReActLoop
from reactloop.approval import ApprovalPolicy, ExternalResult
from reactloop.errors import ConfigurationError, DecisionError
from reactloop.stores import RunStatus
from reactloop.temporal import TemporalLoop, TemporalRun, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call
from tests.temporal.flow import WORKFLOWS, shown
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


def _paying(approval: ApprovalPolicy | None = None) -> tuple[TemporalLoop, FakeTool]:
    pay = FakeTool("pay", result="paid", requires_approval=True, parameters={
        "type": "object", "properties": {"amount": {"type": "integer"}},
        "required": ["amount"], "additionalProperties": False,
    })  # fmt: skip
    model = ScriptedModel([call("pay", amount=5), "Paid."])
    loop = ReActLoop(model, tools=[pay], approval=approval)  # no store: the workflow keeps it
    return TemporalLoop(loop, name="payments"), pay


async def _paused(run: TemporalRun) -> str:
    """Wait for the run to pause (its events end there); the id of the one call it holds."""
    assert "RunPaused" in shown([event async for event in run.events()])
    assert await run.status() is RunStatus.PAUSED
    (held,) = await run.pending()
    return held.call_id


async def test_an_approved_call_runs_once_and_the_run_ends(
    temporal_dev: Client, task_queue: str
) -> None:
    payments, pay = _paying()
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[payments]):
            run = await payments.start(temporal_dev, "pay 5", task_queue=task_queue)
            call_id = await _paused(run)
            assert pay.calls == []
            await run.decide({call_id: Approve()})
            result = await run.result()
    assert pay.calls == [{"amount": 5}]
    assert (result.output, result.paused) == ("Paid.", False)
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


@pytest.mark.parametrize(
    "decision",
    [{"no-such-call": Approve()}, "an external result"],
    ids=["unknown call", "wrong kind for the hold"],
)
async def test_a_refused_decision_is_a_decision_error_and_nothing_is_kept(
    temporal_dev: Client, task_queue: str, decision: object
) -> None:
    payments, pay = _paying()
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[payments]):
            run = await payments.start(temporal_dev, "pay 5", task_queue=task_queue)
            call_id = await _paused(run)
            given = decision if isinstance(decision, dict) else {call_id: ExternalResult("x")}
            with pytest.raises(DecisionError) as refused:
                await run.decide(given)
            assert "nothing was run" in str(refused.value)
            assert await run.status() is RunStatus.PAUSED
            assert [p.call_id for p in await run.pending()] == [call_id]
            await run.decide({call_id: Approve()})
            result = await run.result()
    assert pay.calls == [{"amount": 5}] and result.output == "Paid."
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


async def test_an_hours_deadline_denies_the_call_at_once_on_the_time_skipping_server(
    temporal_time_skipping: Client, task_queue: str
) -> None:
    payments, pay = _paying(ApprovalPolicy(expire_after=3600))
    client = temporal_time_skipping
    with anyio.fail_after(20):
        async with temporal_worker(client, task_queue=task_queue, loops=[payments]):
            run = await payments.start(client, "pay 5", task_queue=task_queue)
            result = await run.result()
    assert pay.calls == []
    (denied,) = result.steps[0].tool_results
    assert denied.is_error and "deadline" in denied.content
    assert result.output == "Paid."
    await assert_replays(client, run.workflow_id, WORKFLOWS)


async def test_a_loop_holding_calls_needs_no_store_or_key_on_temporal(
    temporal_dev: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REACTLOOP_STATE_KEY", raising=False)
    payments, pay = _paying()
    assert payments.loop.config.store is None and payments.loop.config.state_keys is None
    with pytest.raises(ConfigurationError, match="state_key"):
        await payments.loop.run("pay 5")  # locally its paused run could not be resumed
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[payments]):
            run = await payments.start(temporal_dev, "pay 5", task_queue=task_queue)
            await run.decide({await _paused(run): Approve()})
            result = await run.result()
    assert pay.calls == [{"amount": 5}] and result.output == "Paid."
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)

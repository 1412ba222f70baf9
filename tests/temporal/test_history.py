"""Temporal's history limits, handled: a paused run whose history is long continues as new while
it waits (its journal and events carried into the next execution, which resumes it from its
journal) and ends as the same run without it; a session continues as new between turns and
its next turn still sees the transcript; a run whose history reaches the limit between pauses
fails with a `HistoryLimitError`, and one whose carried journal is over the payload budget with
a `PayloadTooLargeError`, each naming the limit. The limits are forced small through
`TemporalLoop(history=HistoryLimits(...))`; every execution's history replays."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import attrs
import pytest
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHistory
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner

from reactloop import Approve, ReActLoop, RunResult
from reactloop._durable import replay
from reactloop._serve._replay import stored_result
from reactloop._temporal._contracts import session_workflow_id
from reactloop._temporal._payloads import encode_decisions
from reactloop._temporal._workflow import RunWorkflow, decode_outcome
from reactloop.errors import HistoryLimitError, PayloadTooLargeError
from reactloop.messages import AssistantMessage, UserMessage
from reactloop.temporal import ActivityOptions, HistoryLimits, TemporalLoop, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call
from tests.temporal.flow import WORKFLOWS, shown

pytestmark = pytest.mark.anyio
GUARD = 60.0
TIMED = frozenset({"duration", "started_at"})
"""What two runs of the same script differ in: workflow time."""


def _paying(name: str, **options: Any) -> tuple[TemporalLoop, FakeTool]:
    pay = FakeTool("pay", result="paid", requires_approval=True)
    twice = [attrs.evolve(call("pay"), id=f"pay_{n}") for n in (1, 2)]  # the same ids each run
    model = ScriptedModel([*twice, "Paid twice."])
    return TemporalLoop(ReActLoop(model, tools=[pay]), name=name, **options), pay


def _plain(value: object) -> object:
    """A value as comparable data, workflow times left out."""
    if attrs.has(type(value)):
        fields = attrs.fields(type(value))  # type: ignore[arg-type]
        return {f.name: _plain(getattr(value, f.name)) for f in fields if f.name not in TIMED}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


async def executions(client: Client, workflow_id: str) -> list[WorkflowHistory]:
    """Every execution's history of the workflow, the first first (each continued one names
    the execution it continues)."""
    histories: list[WorkflowHistory] = []
    run_id: str | None = None
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        histories.insert(0, history)
        started = history.events[0].workflow_execution_started_event_attributes
        run_id = started.continued_execution_run_id or None
        if run_id is None:
            return histories


async def assert_every_execution_replays(client: Client, workflow_id: str) -> int:
    """Replay each execution's history with the SDK's replayer; how many there were."""
    replayer = Replayer(workflows=WORKFLOWS, workflow_runner=UnsandboxedWorkflowRunner())
    histories = await executions(client, workflow_id)
    for history in histories:
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert replayed.replay_failure is None, f"{workflow_id}: {replayed.replay_failure!r}"
    return len(histories)


async def _approved_twice(
    client: Client, task_queue: str, loop: TemporalLoop, run_id: str
) -> tuple[RunResult[Any], list[object]]:
    """Run the loop, approving each of its two held calls; its result and its events as
    the handle read them (each `events()` going on where the last stopped)."""
    read: list[object] = []
    with anyio.fail_after(GUARD):
        async with temporal_worker(client, task_queue=task_queue, loops=[loop]):
            run = await loop.start(client, "pay twice", run_id=run_id, task_queue=task_queue)
            for _ in range(2):
                read += shown([event async for event in run.events()])
                (held,) = await run.pending()
                await run.decide({held.call_id: Approve()})
            result = await run.result()
            read += shown([event async for event in run.events()])
    return result, read


async def test_a_paused_run_continues_as_new_while_it_waits_and_ends_as_without(
    temporal_dev: Client, task_queue: str
) -> None:
    run_id = uuid.uuid4().hex
    forced = HistoryLimits(continue_after=1)  # every pause: the history is past 1 event
    continued, paid = _paying("payments_continued", history=forced)
    plain, plain_paid = _paying("payments_plain")
    result, read = await _approved_twice(temporal_dev, task_queue, continued, run_id)
    expected, expected_read = await _approved_twice(temporal_dev, task_queue, plain, run_id)
    assert paid.calls == [{}, {}] and plain_paid.calls == [{}, {}]
    assert _plain(result) == _plain(expected) and result.output == "Paid twice."
    assert read == expected_read and read.count("RunPaused") == 2  # none repeated, none lost
    assert len(result.steps) == 3  # the whole journal, across the executions
    ids = continued.workflow_id(run_id), plain.workflow_id(run_id)
    assert await assert_every_execution_replays(temporal_dev, ids[0]) == 3  # at each pause
    assert await assert_every_execution_replays(temporal_dev, ids[1]) == 1


async def _settled(client: Client, workflow_id: str) -> None:
    """Wait until the session's newest execution, the one it continued as after its last turn
    (no turn in it), has run its first workflow task: a worker stopped while that task is on its
    way was seen (1 run in ~5, temporalio 1.35) to stall in its shutdown."""
    handle = client.get_workflow_handle(workflow_id)
    while True:
        events = (await handle.fetch_history()).events
        idle = not any(
            e.HasField("start_child_workflow_execution_initiated_event_attributes") for e in events
        )
        if idle and any(e.HasField("workflow_task_completed_event_attributes") for e in events):
            return
        await anyio.sleep(0.05)


async def test_a_session_continues_as_new_and_its_next_turn_sees_the_transcript(
    temporal_dev: Client, task_queue: str
) -> None:
    model = ScriptedModel(["Hello, Ada.", "Noted: Paris.", "Ada, from Paris."])
    chat = TemporalLoop(ReActLoop(model), name="chat", history=HistoryLimits(continue_after=1))
    session = uuid.uuid4().hex
    said = ["I am Ada.", "I live in Paris.", "Who am I?"]
    with anyio.fail_after(GUARD):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[chat]):
            runs = [
                await chat.start(temporal_dev, text, session_id=session, task_queue=task_queue)
                for text in said
            ]
            last = await runs[-1].result()
            await _settled(temporal_dev, session_workflow_id("chat", session))
    assert last.output == "Ada, from Paris."
    earlier = [
        UserMessage("I am Ada."),
        AssistantMessage("Hello, Ada."),
        UserMessage("I live in Paris."),
        AssistantMessage("Noted: Paris."),
    ]
    assert list(model.requests[2].messages[:4]) == earlier
    session_id = session_workflow_id("chat", session)
    assert await assert_every_execution_replays(temporal_dev, session_id) >= 2
    for run in runs:
        assert await assert_every_execution_replays(temporal_dev, run.workflow_id) == 1


async def test_a_history_over_the_limit_between_pauses_fails_the_run_naming_it(
    temporal_dev: Client, task_queue: str
) -> None:
    look = FakeTool("look", result="seen")
    model = ScriptedModel([call("look"), call("look"), call("look"), "Seen."])
    short = HistoryLimits(fail_after=20)  # a step's model and tool activities: ~12 events
    looking = TemporalLoop(ReActLoop(model, tools=[look]), name="looking", history=short)
    run_id = uuid.uuid4().hex
    with anyio.fail_after(GUARD):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[looking]):
            run = await looking.start(temporal_dev, "look", run_id=run_id, task_queue=task_queue)
            with pytest.raises(HistoryLimitError) as failed:
                await run.result()
    assert failed.value.limit == 20 and failed.value.length >= 20
    assert "must stay under 20 events between its pauses" in str(failed.value)
    assert failed.value.run_id == run_id
    assert len(look.calls) < 3  # stopped before the run's end
    assert await assert_every_execution_replays(temporal_dev, looking.workflow_id(run_id)) == 1


async def test_a_carried_journal_over_the_payload_budget_fails_the_run_naming_it(
    temporal_dev: Client, task_queue: str
) -> None:
    budget = ActivityOptions(max_payload_bytes=1_500)  # a model answer fits, the journal not
    paying, paid = _paying(
        "payments_tight", history=HistoryLimits(continue_after=1), activities=budget
    )
    run_id = uuid.uuid4().hex
    with anyio.fail_after(GUARD):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[paying]):
            run = await paying.start(temporal_dev, "pay", run_id=run_id, task_queue=task_queue)
            with pytest.raises(PayloadTooLargeError) as refused:
                await run.result()
    assert refused.value.limit == 1_500 and refused.value.size > 1_500
    assert "carries into its next workflow execution must be at most 1500 bytes" in str(
        refused.value
    )
    assert paid.calls == []
    assert await assert_every_execution_replays(temporal_dev, paying.workflow_id(run_id)) == 1


async def _carried_input(client: Client, loop: TemporalLoop, run_id: str) -> bytes:
    """The input the run's workflow handed its continued execution (its journal, paused)."""
    histories = await executions(client, loop.workflow_id(run_id))
    assert len(histories) >= 2, "the run did not continue as new at its pause"
    started = histories[-1].events[0].workflow_execution_started_event_attributes
    (data,) = await client.data_converter.decode(started.input.payloads, [bytes])
    assert isinstance(data, bytes)
    return data


async def test_a_decision_reaching_a_continued_run_in_its_first_task_is_taken(
    temporal_dev: Client, task_queue: str
) -> None:
    """A decision sent while a paused run continues as new can reach the next execution in its
    first workflow task, before the workflow's run method: the update (delivered with the
    start, so always then) is validated against the calls held in the carried input."""
    pay = FakeTool("pay", result="paid", requires_approval=True)
    model = ScriptedModel([attrs.evolve(call("pay"), id="pay_1"), "Paid."])
    forced = HistoryLimits(continue_after=1)
    paying = TemporalLoop(ReActLoop(model, tools=[pay]), name="payments_first", history=forced)
    run_id, again = uuid.uuid4().hex, uuid.uuid4().hex
    with anyio.fail_after(GUARD):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[paying]):
            run = await paying.start(temporal_dev, "pay", run_id=run_id, task_queue=task_queue)
            assert "RunPaused" in shown([event async for event in run.events()])
            carried = await _carried_input(temporal_dev, paying, run_id)
            start = WithStartWorkflowOperation(
                RunWorkflow.run,
                carried,
                id=paying.workflow_id(again),
                task_queue=task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            )
            decisions = encode_decisions({"pay_1": Approve()})
            await temporal_dev.execute_update_with_start_workflow(
                "decide", decisions, start_workflow_operation=start
            )
            records, _ = decode_outcome(await (await start.workflow_handle()).result())
    result = stored_result(replay(records).stored)
    assert result.output == "Paid." and pay.calls == [{}]
    replayer = Replayer(workflows=WORKFLOWS, workflow_runner=UnsandboxedWorkflowRunner())
    history = await temporal_dev.get_workflow_handle(paying.workflow_id(again)).fetch_history()
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None, f"{history.workflow_id}: {replayed.replay_failure!r}"

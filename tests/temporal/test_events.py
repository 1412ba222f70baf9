"""A run's events on Temporal are those `loop.stream()` gives for the same run: every event, its
kind and fields (model deltas, phases, steps, retries, tool calls, the pause and the end), a
`RunFinished` carrying the result `run.result()` gives; after a decision the handle's next
`events()` goes on with the resumed run; a closed run's events come from its result with no
worker up (or, when the result had no room for them, by query); errors inside events come back
as their own classes."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import anyio
import attrs
import pytest
from temporalio.client import Client

from reactloop import Approve, MemoryStore, ReActLoop, RetryPolicy
from reactloop._temporal import _workflow
from reactloop.errors import InvalidRequestError, RateLimitedError
from reactloop.events import (
    Event,
    ModelRetrying,
    RunFailed,
    RunFinished,
    RunPaused,
    TextStreamed,
    ToolCallStreamed,
)
from reactloop.models import ModelResponse
from reactloop.temporal import TemporalLoop, TemporalRun, WorkflowEvents, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call, reply
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio

TIMED = frozenset({"duration", "started_at"})
"""What differs between a local run and the workflow's: the clock (wall time vs workflow time)."""


def _plain(value: object) -> object:
    """A value as comparable data: attrs classes by kind and fields (times left out), errors
    by class and message."""
    if isinstance(value, BaseException):
        return (type(value).__name__, str(value))
    if attrs.has(type(value)):
        fields = attrs.fields(type(value))  # type: ignore[arg-type]
        kept = {f.name: _plain(getattr(value, f.name)) for f in fields if f.name not in TIMED}
        return (type(value).__name__, kept)
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _result(result: Any) -> object:
    """What a run's result says, as comparable data (its error by code and message: a result
    rebuilt from a journal carries its error as the journal keeps it)."""
    kept = _plain(attrs.evolve(result, error=None))
    error = None if result.error is None else (result.error.code, result.error.message)
    return (kept, error)


def _events(events: Sequence[Event]) -> list[object]:
    """The events as comparable data, each `RunFinished`'s result by `_result`."""
    return [
        ("RunFinished", _result(e.result)) if isinstance(e, RunFinished) else _plain(e)
        for e in events
    ]


def _loop(script: Sequence[Any], **options: Any) -> ReActLoop[Any]:
    retry = RetryPolicy(initial_delay=0.01, jitter=0.0)  # the workflow retries without jitter
    return ReActLoop(ScriptedModel(list(script)), retry=retry, **options)


async def _local(script: Sequence[object], text: str, **options: Any) -> list[Event]:
    """The events `loop.stream()` gives for the run, stored (so its result's error is the
    journal's, as a run on Temporal gives it)."""
    store = MemoryStore()
    async with _loop(script, store=store, **options).stream(text, run_id="local") as stream:
        events = [event async for event in stream]
    stored = await _loop(script, store=store, **options).resume("local")
    return [RunFinished(stored) if isinstance(e, RunFinished) else e for e in events]


def _ids(events: list[object], run_id: str) -> list[object]:
    """Comparable events with the local run's id in place of `run_id`."""
    return [_swap(event, run_id) for event in events]


def _swap(value: object, run_id: str) -> object:
    if value == run_id:
        return "local"
    if isinstance(value, tuple | list):
        return type(value)(_swap(item, run_id) for item in value)
    if isinstance(value, dict):
        return {key: _swap(item, run_id) for key, item in value.items()}
    return value


def _script() -> list[object]:
    lookup = call("lookup", order=42)
    return [
        RateLimitedError("slow down"),
        reply("Looking it up for you.", lookup),
        reply("Order 42 is refunded."),
    ]


async def test_a_runs_events_are_those_loop_stream_gives_deltas_retries_and_tools_included(
    temporal_dev: Client, task_queue: str
) -> None:
    script = _script()
    local = await _local(script, "Refund order 42", tools=[FakeTool("lookup", result="found")])
    tool = FakeTool("lookup", result="found")
    support = TemporalLoop(_loop(script, tools=[tool]), name="support")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            run = await support.start(
                temporal_dev, "Refund order 42", run_id=run_id, task_queue=task_queue
            )
            events = [event async for event in run.events()]
            result = await run.result()
    assert _ids(_events(events), run_id) == _events(local)
    kinds = {type(event) for event in events}
    assert {ModelRetrying, TextStreamed, ToolCallStreamed} <= kinds
    assert [e.text for e in events if isinstance(e, TextStreamed)][:2] == ["Looking ", "it "]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and _result(finished.result) == _result(result)
    assert tool.calls == [{"order": 42}]
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


async def test_a_failed_runs_error_event_is_the_models_own_error_class(
    temporal_dev: Client, task_queue: str
) -> None:
    script = [InvalidRequestError("the request is malformed", status=400)]
    local = await _local(script, "hello")
    support = TemporalLoop(_loop(script), name="support")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            run = await support.start(temporal_dev, "hello", run_id=run_id, task_queue=task_queue)
            events = [event async for event in run.events()]
    assert _ids(_events(events), run_id) == _events(local)
    (failed,) = [event for event in events if isinstance(event, RunFailed)]
    assert type(failed.error) is InvalidRequestError and failed.error.status == 400
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


def _paying() -> tuple[list[ModelResponse | str], FakeTool]:
    pay = FakeTool("pay", result="paid", requires_approval=True)
    return [reply("Paying.", call("pay", amount=5)), "Paid."], pay


async def _local_paused_then_resumed(
    script: list[ModelResponse | str],
) -> tuple[list[Event], list[Event]]:
    store = MemoryStore()
    loop = _loop(
        script, tools=[FakeTool("pay", result="paid", requires_approval=True)], store=store
    )
    async with loop.stream("pay 5", run_id="local") as stream:
        first = [event async for event in stream]
    (paused,) = [event for event in first if isinstance(event, RunPaused)]
    decisions = {paused.pending[0].call_id: Approve()}
    async with loop.resume_stream("local", decisions=decisions) as stream:
        second = [event async for event in stream]
    return first, second


async def test_after_a_decision_the_handles_next_events_go_on_with_the_resumed_run(
    temporal_dev: Client, task_queue: str
) -> None:
    script, pay = _paying()
    first, second = await _local_paused_then_resumed(script)
    payments = TemporalLoop(_loop(script, tools=[pay]), name="payments")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[payments]):
            run = await payments.start(temporal_dev, "pay 5", run_id=run_id, task_queue=task_queue)
            before = [event async for event in run.events()]
            (paused,) = [event for event in before if isinstance(event, RunPaused)]
            assert isinstance(before[-1], RunFinished) and pay.calls == []
            await run.decide({paused.pending[0].call_id: Approve()})  # at once: it stands
            after = [event async for event in run.events()]
            whole = [event async for event in run.events(after=0)]
            result = await run.result()
    assert _ids(_plain_kinds(before), run_id) == _plain_kinds(first)
    assert _ids(_plain_kinds(after), run_id) == _plain_kinds(second)
    assert _events(whole) == _events(before) + _events(after)
    assert _result(after[-1].result) == _result(result)  # type: ignore[union-attr]
    assert pay.calls == [{"amount": 5}]
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


def _plain_kinds(events: Sequence[Event]) -> list[object]:
    """The events as comparable data, a `RunFinished` by its stop reason and output (a local
    stream's result is the live run's, whose messages and steps a resumed run does not hold)."""
    return [
        ("RunFinished", e.result.stop_reason, e.result.output)
        if isinstance(e, RunFinished)
        else _plain(e)
        for e in events
    ]


async def test_a_closed_runs_events_come_from_its_result_with_no_worker_up(
    temporal_dev: Client, task_queue: str
) -> None:
    polls: list[float] = []

    async def counted(seconds: float) -> None:
        polls.append(seconds)
        await anyio.sleep(seconds)

    channel = WorkflowEvents(poll=0.02, sleep=counted)
    support = TemporalLoop(_loop(["Hello there."]), name="support", events=channel)
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            live = await support.start(temporal_dev, "hi", run_id=run_id, task_queue=task_queue)
            seen = [event async for event in live.events()]
            await live.result()
        polls_while_running = list(polls)
        closed: TemporalRun = support.get(temporal_dev, run_id)  # no worker is up now
        again = [event async for event in closed.events()]
    assert _events(again) == _events(seen)
    assert [e.text for e in again if isinstance(e, TextStreamed)] == ["Hello ", "there."]
    assert set(polls_while_running) <= {0.02} and polls == polls_while_running
    await assert_replays(temporal_dev, closed.workflow_id, WORKFLOWS)


async def test_events_read_in_bounded_answers_and_without_a_result_copy_are_the_same(
    temporal_dev: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script()
    local = await _local(script, "Refund order 42", tools=[FakeTool("lookup", result="found")])
    monkeypatch.setattr(_workflow, "EVENTS_PER_QUERY", 3)  # a query answers 3 events at most
    monkeypatch.setattr(_workflow, "EVENTS_IN_RESULT", 10)  # the result keeps none of them
    support = TemporalLoop(
        _loop(script, tools=[FakeTool("lookup", result="found")]), name="support"
    )
    run_id = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            run = await support.start(
                temporal_dev, "Refund order 42", run_id=run_id, task_queue=task_queue
            )
            live = [event async for event in run.events()]
            await run.result()
            closed = [event async for event in support.get(temporal_dev, run_id).events()]
    assert _ids(_events(live), run_id) == _events(local) == _ids(_events(closed), run_id)
    assert len(live) > 3 * 5
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


async def test_a_session_turns_events_are_those_of_a_local_stream_given_the_transcript(
    temporal_dev: Client, task_queue: str
) -> None:
    script = ["Hello, Ada.", "You are Ada."]
    first = await _loop(script).run("I am Ada.")
    async with _loop(script[1:]).stream(
        "Who am I?", history=first.messages, run_id="local"
    ) as stream:
        local = [event async for event in stream]
    chat = TemporalLoop(_loop(script), name="chat")
    session = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[chat]):
            turns = [
                await chat.start(temporal_dev, text, session_id=session, task_queue=task_queue)
                for text in ("I am Ada.", "Who am I?")
            ]
            events = [event async for event in turns[1].events()]  # waits for its turn
            result = await turns[1].result()
    assert _ids(_plain_kinds(events), turns[1].run_id) == _plain_kinds(local)
    assert [e.text for e in events if isinstance(e, TextStreamed)] == ["You ", "are ", "Ada."]
    assert result.output == "You are Ada."
    await assert_replays(temporal_dev, turns[1].workflow_id, WORKFLOWS)

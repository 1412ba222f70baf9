"""A stored run read back as events: the same text, tool calls, results and end a client saw
live, as one stream even when the run paused and went on, and the same whether the journal is
read whole or record by record as another worker writes it."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import Approve, ReActLoop, tool
from reactloop._core import (
    Event,
    RunCreated,
    RunFailed,
    RunFinished,
    RunPaused,
    RunStarted,
    StepFinished,
    StepStarted,
    StoredRun,
    TextStreamed,
    ToolCallFinished,
    ToolCallStarted,
)
from reactloop._durable import replay
from reactloop._serve._replay import (
    JournalReader,
    StoredRunError,
    follow_store,
    replay_epoch,
    replayed,
    stored_result,
)
from reactloop._stored_errors import RunNotFoundError
from reactloop.stores import MemoryStore
from reactloop.testing import ScriptedModel, call, reply
from tests.serve.hosting import Payments, paying_model

pytestmark = pytest.mark.anyio


@tool
def look(city: str) -> str:
    """Look a city up."""
    return f"{city} is sunny"


async def live_and_stored(model: ScriptedModel, *tools: Any) -> tuple[list[Event], StoredRun]:
    """A run's live events, and the run as its store keeps it."""
    store = MemoryStore()
    loop = ReActLoop(model, tools=list(tools), store=store)
    async with loop.stream("Weather in Oslo and Rome?", run_id="r1") as stream:
        events = [event async for event in stream]
    return events, await store.load("r1")


def text(events: list[Event]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextStreamed))


def calls(events: list[Event]) -> list[Any]:
    return [event.call for event in events if isinstance(event, ToolCallStarted)]


def results(events: list[Event]) -> list[Any]:
    return [event.result for event in events if isinstance(event, ToolCallFinished)]


TWO_LOOKS: list[Any] = [
    reply("Looking.", call("look", city="Oslo"), call("look", city="Rome")),
    "Both sunny.",
]


async def test_a_finished_run_replays_its_text_tool_calls_results_and_end() -> None:
    live, stored = await live_and_stored(ScriptedModel(TWO_LOOKS), look)
    replayed = JournalReader().read(stored)
    assert replayed[0] == RunStarted("r1", "Weather in Oslo and Rome?")
    assert text(replayed) == text(live) == "Looking.Both sunny."
    assert calls(replayed) == calls(live)
    by_id = sorted(results(live), key=lambda result: result.call_id)
    assert sorted(results(replayed), key=lambda result: result.call_id) == by_id
    end, live_end = replayed[-1], live[-1]
    assert isinstance(end, RunFinished) and isinstance(live_end, RunFinished)
    assert end.result.output == live_end.result.output
    assert end.result.messages == live_end.result.messages
    assert end.result.stop_reason is live_end.result.stop_reason
    assert [e.index for e in replayed if isinstance(e, StepStarted)] == [1, 2]
    assert [e.step.index for e in replayed if isinstance(e, StepFinished)] == [1, 2]


async def test_a_journal_read_record_by_record_gives_the_events_read_whole() -> None:
    _, stored = await live_and_stored(ScriptedModel(TWO_LOOKS), look)
    reader = JournalReader()
    pieces: list[Event] = []
    for length in range(1, len(stored.records) + 1):
        pieces += reader.read(replay(stored.records[:length]).stored)
    whole = JournalReader().read(stored)
    assert pieces[:-1] == whole[:-1]  # a RunFinished's result compares by identity: by fields
    last, whole_last = pieces[-1], whole[-1]
    assert isinstance(last, RunFinished) and isinstance(whole_last, RunFinished)
    assert last.result.output == whole_last.result.output == "Both sunny."
    assert last.result.messages == whole_last.result.messages


async def test_a_paused_run_replays_its_held_calls_before_its_end() -> None:
    store = MemoryStore()
    loop = ReActLoop(paying_model(), tools=[Payments().tool()], store=store)
    paused = await loop.run("Pay 5", run_id="r1")
    events = JournalReader().read(await store.load("r1"))
    assert isinstance(events[-2], RunPaused) and events[-2].pending == paused.pending
    end = events[-1]
    assert isinstance(end, RunFinished) and end.result.paused and end.result.state is None


async def test_a_run_paused_and_resumed_replays_as_one_stream() -> None:
    store, payments = MemoryStore(), Payments()
    loop = ReActLoop(paying_model(), tools=[payments.tool()], store=store)
    paused = await loop.run("Pay 5", run_id="r1")
    before = replay_epoch(await store.load("r1"))
    await loop.resume("r1", decisions={paused.pending[0].call_id: Approve()})
    stored = await store.load("r1")
    events = JournalReader().read(stored)
    kinds = [type(event) for event in events]
    assert kinds.count(RunStarted) == kinds.count(RunFinished) == 1 and RunPaused not in kinds
    assert kinds.count(StepStarted) == kinds.count(StepFinished)
    assert [result.content for result in results(events)] == ["paid 5"]
    assert len(calls(events)) == 1 and text(events) == "Paying.Paid 5."
    assert replay_epoch(stored) != before and replay_epoch(stored) == replay_epoch(stored)
    assert payments.paid == [5]


async def test_a_failed_run_replays_its_error_by_code_and_message() -> None:
    live, stored = await live_and_stored(ScriptedModel([call("look", city="Oslo")]), look)
    failed = next(event for event in live if isinstance(event, RunFailed))
    events = JournalReader().read(stored)
    replayed = next(event for event in events if isinstance(event, RunFailed))
    assert isinstance(replayed.error, StoredRunError)
    assert replayed.error.code is failed.error.code
    assert replayed.error.message == failed.error.message
    assert stored_result(stored).error is not None


async def test_an_end_held_back_is_read_once_the_journal_goes_on() -> None:
    store = MemoryStore()
    loop = ReActLoop(paying_model(), tools=[Payments().tool()], store=store)
    paused = await loop.run("Pay 5", run_id="r1")
    reader = JournalReader()
    first = reader.read(await store.load("r1"), hold_end=True)
    assert not any(isinstance(event, RunFinished | RunPaused) for event in first)
    await loop.resume("r1", decisions={paused.pending[0].call_id: Approve()})
    rest = reader.read(await store.load("r1"))
    assert not any(isinstance(event, RunPaused) for event in rest)
    end = rest[-1]
    assert isinstance(end, RunFinished) and end.result.output == "Paid 5."


async def test_a_follower_whose_store_fails_ends_with_the_stores_error() -> None:
    store = MemoryStore()
    await store.create_run(RunCreated("r1", "hi", None, (), 0.0))  # running, no worker yet
    live = replayed(await store.load("r1"))

    async def run_deleted_meanwhile(_: float) -> None:
        await store.delete_run("r1")

    with pytest.raises(RunNotFoundError):
        await follow_store(
            store,
            live,
            JournalReader(),
            interval=1.0,
            clock=lambda: 5.0,
            sleep=run_deleted_meanwhile,
        )
    assert live.done and isinstance(live.error, RunNotFoundError) and live.finished_at == 5.0

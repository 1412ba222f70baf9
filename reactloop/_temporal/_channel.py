"""How the caller of a run on Temporal receives its events (`EventChannel`), and the default
channel that needs nothing beyond Temporal: the workflow keeps each event the loop emits in a
buffer, read by the query "events" while the workflow runs (polled every `poll` seconds), and
from the workflow's result once it closed (no worker needed then).

The events are those `loop.stream()` gives for the same run, model deltas included; a model
call's deltas arrive when its activity returns (the workflow replays them to the loop then).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
import orjson
from attrs import frozen

from reactloop._core import Event, Record, RunResult
from reactloop._temporal._events import RUN_FINISHED_AT, structure_event
from reactloop._validate import number

if TYPE_CHECKING:
    from reactloop._temporal._client import TemporalRun

POLL = 0.05
"""Seconds between two reads of a running run's event buffer (the default)."""

Sleep = Callable[[float], Awaitable[None]]


@runtime_checkable
class EventChannel(Protocol):
    """How a run's events reach its caller: `follow(run, after)` gives the run's events from
    the `after`-th on (counting from 0), as `loop.stream()` gives them, up to where the run
    stands: it ends after a `RunFinished` that nothing follows yet (the run paused or ended)."""

    def follow(self, run: TemporalRun, after: int) -> AsyncIterator[Event]:
        """The run's events from the `after`-th on."""
        ...


@frozen
class Batch:
    """Events read at once: their encoded values; whether the run stands at its end or pause
    (the workflow closed, or waits for decisions), so its last `RunFinished` is final; and
    how to read the run's journal (to rebuild a `RunFinished`'s result)."""

    values: list[Any]
    standing: bool
    closed: bool
    journal: Callable[[], Awaitable[tuple[Record, ...]]]
    more: bool = False  # more events follow at once (a query's answer holds a bounded number)


class WorkflowEvents:
    """The default channel: the workflow's event buffer, read by query every `poll` seconds
    while the workflow runs, and from its result once it closed. `sleep` waits between polls
    (anyio's; a test may count them)."""

    def __init__(self, *, poll: float = POLL, sleep: Sleep | None = None) -> None:
        self.poll = number("WorkflowEvents(poll=...)", poll)
        self._sleep: Sleep = anyio.sleep if sleep is None else sleep

    def __repr__(self) -> str:
        return f"WorkflowEvents(poll={self.poll!r})"

    async def follow(self, run: TemporalRun, after: int) -> AsyncIterator[Event]:
        """The run's events from the `after`-th on, up to its pause or end. The last
        `RunFinished` read waits until the workflow stands there (closed, or holding the
        calls for decisions), so `status()` and `decide()` agree with it at once."""
        position = after
        while True:
            batch = await run.event_batch(position)
            values = batch.values
            ends = bool(values) and _finishes(values[-1])
            if ends and not batch.standing:
                values = values[:-1]  # the run's end or pause, not yet where the run stands
            journal: tuple[Record, ...] | None = None
            for value in values:
                if journal is None and _finishes(value):
                    journal = await batch.journal()
                yield structure_event(value, _results(run, journal))
                position += 1
                run.seen = max(run.seen, position)
            if batch.more:
                continue
            if (ends and batch.standing) or batch.closed:
                return  # the run stands here: paused, or ended
            await self._sleep(self.poll)


def _finishes(value: Any) -> bool:
    """Whether an encoded event is a `RunFinished` whose result is the journal's."""
    return isinstance(value, dict) and RUN_FINISHED_AT in value


def _results(
    run: TemporalRun, journal: tuple[Record, ...] | None
) -> Callable[[int], RunResult[Any]]:
    """A `RunFinished`'s result: what the journal's first `length` records stand for."""

    def result_at(length: int) -> RunResult[Any]:
        assert journal is not None
        return run.result_of(journal[:length])

    return result_at


def encoded_values(data: bytes) -> list[Any]:
    """The events' values in an encoded list (as `_events.encode_events` wrote them)."""
    values: list[Any] = orjson.loads(data)
    return values


def queried(data: bytes) -> tuple[list[Any], bool, bool]:
    """The answer to the query "events": the events' values, whether the run is paused after
    them (its workflow holds calls for decisions), and whether more events follow them."""
    answer = orjson.loads(data)
    return answer["events"], bool(answer["paused"]), bool(answer["more"])

"""A stored run as the events a client streams: its journal read back as one stream (whole texts
instead of pieces), and a run another worker drives followed by reading the store as it grows.

A replay has no `PhaseFinished`, `ToolCallStreamed` or `ModelRetrying` events (the journal does
not keep them), and a tool call's `ToolCallFinished` comes when its step closes. A run paused and
resumed replays as one stream: only the journal's last end shows (`RunPaused`, `RunFinished`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import orjson

from reactloop._core import (
    AssistantMessage,
    CallsHeld,
    CallStarted,
    Event,
    PhaseFinished,
    ReasoningPart,
    ResponseSaved,
    ResultSaved,
    RunCreated,
    RunEnded,
    RunFailed,
    RunFinished,
    RunPaused,
    RunResult,
    RunStarted,
    RunStatus,
    RunStore,
    RunSummary,
    Step,
    StepClosed,
    StepFinished,
    StepStarted,
    StoredRun,
    TextPart,
    TextStreamed,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolResult,
)
from reactloop._core import ReasoningStreamed as Reasoned
from reactloop._errors import ErrorCode, ReactLoopError
from reactloop._serve._live import LiveRun
from reactloop._stored_errors import RunNotFoundError


class StoredRunError(ReactLoopError):
    """The error a stored run ended with, as its journal keeps it: its code and message (the
    exception itself is never stored), so a replayed `RunFinished` carries a typed error."""

    def __init__(self, message: str, code: ErrorCode) -> None:
        super().__init__(message)
        self.code = code


def replay_epoch(stored: StoredRun) -> str:
    """The epoch of a replay: the same for every replay of one stretch of the journal (so a
    client reconnecting to another worker's replay continues where it was), another once the run
    was paused and resumed since (the replay is then another stream)."""
    ends = sum(1 for record in stored.records[:-1] if isinstance(record, RunEnded))
    digest = hashlib.blake2b(f"{stored.run_id}\x00{ends}".encode(), digest_size=8)
    return f"j{digest.hexdigest()}"


def stored_result(stored: StoredRun) -> RunResult[Any]:
    """The `RunResult` a stored run's last end stands for (never a state token)."""
    ended = stored.ended
    assert ended is not None
    closes = [record for record in stored.records if isinstance(record, StepClosed)]
    error = None
    if ended.error_code is not None:
        error = StoredRunError(ended.error_message or ended.stop_detail, ended.error_code)
    output: Any = ended.output
    if ended.output_json is not None:
        output = orjson.loads(ended.output_json)
    return RunResult(
        run_id=stored.run_id,
        output=output,
        stop_reason=ended.stop_reason,
        stop_detail=ended.stop_detail,
        messages=stored.messages,
        steps=stored.steps,
        usage=ended.usage,
        tools_used=closes[-1].tools_used if closes else (),
        duration=max(0.0, ended.ended_at - stored.created.created_at),
        error=error,
        user_message=ended.user_message,
        pending=stored.pending if stored.status is RunStatus.PAUSED else (),
        phase_data=dict(stored.phase_data),
    )


class JournalReader:
    """Turns a run's journal into events, record by record: `read(stored)` gives the events of
    the records it has not read yet, so the same reader follows a run as its journal grows.
    `paused_at` keeps, for each call held at a pause the run went on from, how many events the
    reader had given before that pause: where a stream answering that call starts."""

    def __init__(self) -> None:
        self.paused_at: dict[str, int] = {}  # held call id -> events given before its pause
        self._given = 0  # events given by earlier reads
        self._held: set[str] = set()  # calls held since the last end
        self._read = 0  # records read so far
        self._open: int | None = None  # the step whose StepStarted was the last step marker
        self._calls: dict[str, ToolCall] = {}
        self._started: set[str] = set()
        self._finished: set[str] = set()
        self._saved: dict[str, ToolResult] = {}  # results of the open step, until it closes
        self._order: dict[int, tuple[str, ...]] = {}  # each step's call ids, in model order

    def read(self, stored: StoredRun, *, hold_end: bool = False) -> list[Event]:
        """The events of `stored`'s records not read before; its end's events only when the end
        is its last record (an end followed by more records was a pause since resumed).
        `hold_end` leaves a last end unread (a run another worker is resuming right now: what
        it writes next makes that end a pause it went on from)."""
        events: list[Event] = []
        records = stored.records
        for number in range(self._read, len(records)):
            record = records[number]
            if not isinstance(record, RunEnded):
                self._record(stored, record, events)
            elif number < len(records) - 1:
                self._open = None  # the resumed run reopens its step
                self._went_on(len(events))
            elif hold_end:
                self._went_on(len(events))
                self._read = number
                self._given += len(events)
                return events
            else:
                self._held.clear()
                self._ended(stored, record, events)
        self._read = len(records)
        self._given += len(events)
        return events

    def _went_on(self, given: int) -> None:
        """An end the run went on (or is going on) from: the answers to the calls it held start
        after the `given` events of this read (and those of the reads before)."""
        for call_id in self._held:
            self.paused_at[call_id] = self._given + given
        self._held.clear()

    def _record(self, stored: StoredRun, record: object, events: list[Event]) -> None:
        """One record that is not an end."""
        if isinstance(record, ResponseSaved):
            self._response(record, events)
        elif isinstance(record, CallStarted):
            self._reopen(record.step, events)
            self._start(record.call_id, events)
        elif isinstance(record, ResultSaved):
            self._saved[record.result.call_id] = record.result
        elif isinstance(record, CallsHeld):
            self._held.update(pending.call_id for pending in record.pending)
        elif isinstance(record, StepClosed):
            self._close(stored, record, events)
        elif isinstance(record, RunCreated):
            events.append(RunStarted(stored.run_id, stored.created.input))

    def _response(self, record: ResponseSaved, events: list[Event]) -> None:
        """A step's accepted response: the step starts, its reasoning and text as whole pieces."""
        self._open = record.step
        events.append(StepStarted(record.step))
        message = record.response.message
        for part in message.parts:
            if isinstance(part, ReasoningPart) and part.readable:
                events.append(Reasoned(part.readable))
            elif isinstance(part, TextPart) and part.text:
                events.append(TextStreamed(part.text))
        self._remember(record.step, message)

    def _remember(self, step: int, message: AssistantMessage) -> None:
        self._order[step] = tuple(call.id for call in message.tool_calls)
        self._calls.update((call.id, call) for call in message.tool_calls)

    def _reopen(self, step: int, events: list[Event]) -> None:
        """A record of a step that is not the open one (a resumed step): it starts again."""
        if self._open != step:
            self._open = step
            events.append(StepStarted(step))

    def _start(self, call_id: str, events: list[Event]) -> None:
        call = self._calls.get(call_id)
        if call is not None and call_id not in self._started:
            self._started.add(call_id)
            events.append(ToolCallStarted(call))

    def _settle(self, step: int, results: dict[str, ToolResult], events: list[Event]) -> None:
        """The step's calls that have a result and no `ToolCallFinished` yet, in model order."""
        for call_id in self._order.get(step, ()):
            result = results.get(call_id)
            if result is None or call_id in self._finished:
                continue
            self._start(call_id, events)
            self._finished.add(call_id)
            events.append(ToolCallFinished(result))

    def _close(self, stored: StoredRun, record: StepClosed, events: list[Event]) -> None:
        """A step closed: its results (as hooks and refusals left them), then its end."""
        self._reopen(record.index, events)
        results = self._saved | {result.call_id: result for result in record.final_results}
        self._settle(record.index, results, events)
        self._saved = {}
        self._open = None
        step = _step(stored, record.index)
        if step is not None:
            events.append(StepFinished(step))

    def _ended(self, stored: StoredRun, ended: RunEnded, events: list[Event]) -> None:
        """The run's end: calls it cut short, the open step's end, then pause and finish."""
        if self._open is not None:
            results = self._saved | {result.call_id: result for result in ended.settled}
            self._settle(self._open, results, events)
            step = _step(stored, self._open)
            if step is not None:
                events.append(StepFinished(step))
            self._open = None
        result = stored_result(stored)
        if result.paused:
            events.append(RunPaused(result.pending))
        if result.error is not None:
            events.append(RunFailed(result.error))
        events.append(RunFinished(result))


def _step(stored: StoredRun, index: int) -> Step | None:
    """The stored step of that index (steps are kept in order, one per index)."""
    steps = stored.steps
    if 0 < index <= len(steps) and steps[index - 1].index == index:
        return steps[index - 1]
    return next((step for step in steps if step.index == index), None)


def before_pause(events: list[Event]) -> list[Event]:
    """A paused run's events up to its last pause (`RunPaused`, and its open step's end before
    it, which a stored run's replay shows there): what a resumed run goes on from, re-entering
    that step (so its end shows once, and only the resumed run's own end follows)."""
    paused = max((n for n, event in enumerate(events) if isinstance(event, RunPaused)), default=-1)
    kept = events[:paused] if paused >= 0 else events
    while kept and isinstance(kept[-1], StepFinished | PhaseFinished):
        kept = kept[:-1]
    return kept


def replayed(
    stored: StoredRun, reader: JournalReader | None = None, *, hold_end: bool = False
) -> LiveRun:
    """A stored run as a LiveRun holding its events so far (read by `reader`, which a follower
    goes on reading with); not done: the caller ends it, or follows the run to its end."""
    live = LiveRun(
        stored.run_id,
        session_id=stored.created.session_id,
        owner=stored.created.user_id,
        epoch=replay_epoch(stored),
    )
    live.reader = reader or JournalReader()
    for event in live.reader.read(stored, hold_end=hold_end):
        live.append(event)
    return live


Sleep = Callable[[float], Awaitable[None]]


async def follow_store(
    store: RunStore,
    live: LiveRun,
    reader: JournalReader,
    *,
    interval: float,
    clock: Callable[[], float],
    since: int = 0,
    sleep: Sleep = anyio.sleep,
) -> None:
    """Feed `live` the events of a run another worker drives, reading the store every
    `interval` seconds (`reader` goes on from what `live` holds) until the run is no longer
    running (finished, paused, parked, failed) and its journal is longer than `since` records
    (a paused run another worker is resuming: its pause is not the end). `live` is ended however
    this returns (cancellation included)."""
    try:
        while True:
            await sleep(interval)
            stored = await store.load(live.run_id)
            waiting = len(stored.records) <= since
            for event in reader.read(stored, hold_end=waiting):
                live.append(event)
            if not waiting and stored.status is not RunStatus.RUNNING:
                return
    except Exception as error:  # the store failed: followers read why (then it is raised)
        live.end(clock(), error)
        raise
    finally:
        live.end(clock())


async def stored_run(store: RunStore, run_id: str) -> StoredRun | None:
    """The stored run of that id, or None when the store has none."""
    try:
        return await store.load(run_id)
    except RunNotFoundError:
        return None


async def newest_of_session(store: RunStore, session_id: str) -> RunSummary | None:
    """The session's newest run (its owner is that run's user), or None for a new session."""
    newest = await store.list_runs(session_id=session_id, limit=1)
    return newest[0] if newest else None


async def caught_up(store: RunStore | None, live: LiveRun) -> None:
    """Before a resumed stream that starts with the run's end (the run ended before this
    request drove it: another worker resumed it first), what the run did after the earlier
    events `live` starts with, read on by the journal reader they came from."""
    reader: JournalReader | None = live.reader
    stored = None if store is None or reader is None else await stored_run(store, live.run_id)
    for event in [] if stored is None or reader is None else reader.read(stored):
        if not isinstance(event, RunFinished | RunPaused):
            live.append(event)


def answered_from(live: LiveRun, call_ids: frozenset[str]) -> int:
    """Where the stream of a request answering `call_ids` starts in `live`: after the pause
    that held them. A run resumed here by answers starts there (`resumed_at`); one read from
    the journal (a replay, a follower, a takeover: another request's answer went first) after
    the events its reader gave before that pause, so the client sees what the answer that
    went first did, and not again what it saw before the pause."""
    reader: JournalReader | None = live.reader
    if live.decided or reader is None:
        return live.resumed_at
    found = [reader.paused_at[call_id] for call_id in call_ids if call_id in reader.paused_at]
    return min(found, default=live.resumed_at)

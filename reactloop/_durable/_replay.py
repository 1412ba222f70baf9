"""Rebuilding a run from its journal: the stored view (`StoredRun`) and, for resume, a `RunState`
whose last step continues where the journal stops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attrs import define, field, frozen

from reactloop._core import (
    CallsHeld,
    CallStarted,
    Decision,
    DecisionScope,
    DecisionsSaved,
    GivenDecision,
    InstructionsSaved,
    Message,
    ModelResponse,
    PendingCall,
    PhaseDataSaved,
    Record,
    Recovered,
    ResponseSaved,
    ResultSaved,
    RunCreated,
    RunEnded,
    RunState,
    Step,
    StepClosed,
    StepDraft,
    StoredRun,
    ToolMessage,
    ToolResult,
    Usage,
    interrupted_result,
    standing_of,
    status_after,
)
from reactloop._stored_errors import UnreadableRunError


@define
class _StepLog:
    """What the journal holds of one step."""

    index: int
    response: ModelResponse | None = None
    spent: Usage = Usage()
    saved: dict[str, ToolResult] = field(factory=dict)
    started: dict[str, str] = field(factory=dict)  # call id -> tool name
    closed: StepClosed | None = None
    settled: dict[str, ToolResult] = field(factory=dict)  # given by the run's end
    held: dict[str, PendingCall] = field(factory=dict)  # waiting for a decision
    decided: dict[str, Decision] = field(factory=dict)  # decisions given on resume
    decided_on: dict[str, dict[str, Any]] = field(factory=dict)  # the arguments they were for

    def pending(self) -> tuple[PendingCall, ...]:
        """Held calls with neither a decision nor a saved result: what a resume must decide."""
        return tuple(
            held
            for call_id, held in self.held.items()
            if call_id not in self.decided and call_id not in self.saved
        )

    def results(self) -> list[ToolResult]:
        """The step's results in the model's order: final ones, else saved ones."""
        final = {} if self.closed is None else {r.call_id: r for r in self.closed.final_results}
        calls = () if self.response is None else self.response.message.tool_calls
        found = [
            final.get(call.id) or self.saved.get(call.id) or self.settled.get(call.id)
            for call in calls
        ]
        extra = [r for r in final.values() if r.call_id not in {c.id for c in calls}]
        return [result for result in found if result is not None] + extra

    def complete(self) -> bool:
        """Closed, with a result for every call."""
        calls = () if self.response is None else self.response.message.tool_calls
        answered = {result.call_id for result in self.results()}
        return self.closed is not None and all(call.id in answered for call in calls)

    def step(self) -> Step:
        """The step record (a closed step's timing and usage)."""
        closed = self.closed
        usage = self.spent if closed is None else closed.usage
        started, duration = (0.0, 0.0) if closed is None else (closed.started_at, closed.duration)
        breaks = () if closed is None else closed.prefix_breaks
        results = tuple(self.results())
        return Step(self.index, self.response, results, usage, started, duration, breaks)

    def messages(self) -> list[Message]:
        """The step's transcript: the response, then its results (interrupted ones filled in)."""
        if self.response is None:
            return [result.to_message() for result in self.results()]
        by_id = {result.call_id: result for result in self.results()}
        out: list[Message] = [self.response.message]
        for call in self.response.message.tool_calls:
            result = by_id.get(call.id) or self.settled.get(call.id)
            out.append(interrupted_result(call) if result is None else result.to_message())
        return out


@frozen
class Replayed:
    """A journal read back: the stored view, and the pieces a resumed run starts from."""

    stored: StoredRun
    closed: tuple[_StepLog, ...]
    open: _StepLog | None
    counters: StepClosed | None
    called: frozenset[str]
    instructions: str | None
    standing: dict[str, Decision] = field(factory=dict)
    call_ids: frozenset[str] = frozenset()  # every call the run's model asked for
    session_wide: tuple[GivenDecision, ...] = ()  # "always" decisions for the session's runs


@define
class _Reading:
    """What the journal says so far, record by record."""

    instructions: str | None
    logs: dict[int, _StepLog] = field(factory=dict)
    counters: StepClosed | None = None
    data: dict[str, Any] = field(factory=dict)
    called: set[str] = field(factory=set)
    standing: dict[str, Decision] = field(factory=dict)
    session_wide: dict[str, GivenDecision] = field(factory=dict)

    def log(self, index: int) -> _StepLog:
        return self.logs.setdefault(index, _StepLog(index))

    def read(self, record: Record) -> None:
        match record:
            case ResponseSaved(step=index):
                log = self.log(index)
                log.response, log.spent = record.response, record.usage
            case CallStarted(step=index):
                self.check_call(index, record.call_id, record.name)
                self.log(index).started[record.call_id] = record.name
                self.called.add(record.name)
            case ResultSaved(step=index):
                self.check_call(index, record.result.call_id, record.result.name)
                self.log(index).saved[record.result.call_id] = record.result
            case StepClosed(index=index):
                self.log(index).closed = self.counters = record
            case PhaseDataSaved():
                self.data = record.data
            case InstructionsSaved():
                self.instructions = record.instructions
            case CallsHeld(step=index):
                for pending in record.pending:
                    self.check_call(index, pending.call_id, pending.tool)
                self._held(self.log(index), record)
            case DecisionsSaved(step=index):
                self._decided(self.log(index), record)

    def check_call(self, index: int, call_id: str, name: str) -> None:
        """A record about a call must name a call of its step's saved response, by its tool:
        a journal that says otherwise was altered or is corrupt, and is not replayed."""
        log = self.logs.get(index)
        if log is None or log.response is None:
            return  # nothing to contradict (records written by hand, e.g. a store's own tests)
        calls = log.response.message.tool_calls
        called = next((call.name for call in calls if call.id == call_id), None)
        if called != name:
            found = "no such call" if called is None else f"a call of {called!r}"
            raise UnreadableRunError(
                f"the journal contradicts itself: a record names call {call_id!r} of step "
                f"{index} as a call of {name!r}, but that step's saved response has {found}"
            )

    def _held(self, log: _StepLog, record: CallsHeld) -> None:
        """Calls held; one held again after a decision (its arguments changed since) waits
        for a new decision."""
        for pending in record.pending:
            log.held[pending.call_id] = pending
            log.decided.pop(pending.call_id, None)
            log.decided_on.pop(pending.call_id, None)

    def _decided(self, log: _StepLog, record: DecisionsSaved) -> None:
        for given in record.decisions:
            log.decided[given.call_id] = given.decision
            if given.arguments is not None:
                log.decided_on[given.call_id] = given.arguments
            self.stand(given)

    def stand(self, given: GivenDecision) -> None:
        """Keep an "always" decision for its tool's later calls."""
        standing = standing_of(given)
        if standing is not None:
            self.standing[given.tool] = standing
            if standing.scope is DecisionScope.SESSION:
                self.session_wide[given.tool] = given


def replay(records: Sequence[Record]) -> Replayed:
    """Read a run's journal, in order; the last step is open unless closed with every result."""
    if not records or not isinstance(records[0], RunCreated):
        raise UnreadableRunError("a stored run's journal must begin with RunCreated")
    reading = _Reading(records[0].instructions)
    for given in records[0].standing:
        reading.stand(given)
    for position, record in enumerate(records[1:], start=2):
        try:
            reading.read(record)
        except UnreadableRunError as error:  # say which record: its number in the journal
            raise UnreadableRunError(
                f"record {position} ({type(record).__name__}) of run {records[0].run_id!r}: "
                f"{error.message}"
            ) from None
    ordered = [reading.logs[index] for index in sorted(reading.logs)]
    last = ordered[-1] if ordered else None
    open_log = last if last is not None and not last.complete() else None
    closed = tuple(log for log in ordered if log is not open_log)
    if open_log is not None and open_log.response is not None:
        reading.called.update(call.name for call in open_log.response.message.tool_calls)
    ended = records[-1] if isinstance(records[-1], RunEnded) else None
    if ended is not None and last is not None:
        last.settled = {result.call_id: result for result in ended.settled}
    pending = () if open_log is None else open_log.pending()
    stored = _stored(
        tuple(records), ordered, reading.counters, reading.data, ended, pending=pending
    )
    return Replayed(
        stored,
        closed,
        open_log,
        _counters(reading.counters, closed, open_log),
        frozenset(reading.called),
        reading.instructions,
        reading.standing,
        frozenset(_call_ids(ordered)),
        tuple(reading.session_wide.values()),
    )


def _counters(
    last: StepClosed | None, closed: tuple[_StepLog, ...], open_log: _StepLog | None
) -> StepClosed | None:
    """The counters a resumed run starts from: those of the last closed step, not those the
    reopened step's end wrote (its calls are counted again when it goes on); `setup_usage`
    is the run's in either case."""
    if open_log is None or open_log.closed is None or last is None:
        return last
    before = closed[-1].closed if closed else None
    if before is None:
        return StepClosed(0, 0.0, 0.0, Usage(), setup_usage=last.setup_usage)
    return before


def _call_ids(logs: list[_StepLog]) -> list[str]:
    return [
        call.id
        for log in logs
        if log.response is not None
        for call in log.response.message.tool_calls
    ]


def _stored(
    records: tuple[Record, ...],
    logs: list[_StepLog],
    counters: StepClosed | None,
    data: dict[str, Any],
    ended: RunEnded | None,
    *,
    pending: tuple[PendingCall, ...],
) -> StoredRun:
    created = records[0]
    assert isinstance(created, RunCreated)
    messages: list[Message] = [*created.history, created.input_message()]
    steps = []
    usage = Usage() if counters is None else counters.setup_usage
    for log in logs:
        messages.extend(log.messages() if log.complete() or log.settled else _partial(log))
        step = log.step()
        steps.append(step)
        usage = usage + step.usage
    status = status_after(records)
    return StoredRun(
        created.run_id,
        status,
        created,
        tuple(messages),
        tuple(steps),
        usage if ended is None else ended.usage,
        records,
        data,
        ended,
        pending,
    )


def _partial(log: _StepLog) -> list[Message]:
    """An open step as far as it got: the response and the results saved so far."""
    head: list[Message] = [] if log.response is None else [log.response.message]
    tail: list[ToolMessage] = [result.to_message() for result in log.results()]
    return [*head, *tail]


def resume_state(replayed: Replayed, prefix: Sequence[Message], now: float) -> RunState:
    """The state a resumed run continues from: `prefix` (a session's earlier turns), the run's
    closed steps, and its open step (response in the transcript, saved results recovered)."""
    stored, counters = replayed.stored, replayed.counters
    created = stored.created
    messages: list[Message] = [*prefix, *created.history, created.input_message()]
    steps: list[Step] = []
    usage = Usage() if counters is None else counters.setup_usage
    for log in replayed.closed:
        messages.extend(log.messages())
        steps.append(log.step())
        usage = usage + steps[-1].usage
    state = RunState(created.run_id, messages, replayed.instructions, steps, started_at=now)
    state.repairs.extend(created.repairs)
    state.phase_data.update(stored.phase_data)
    state.iteration = max((step.index for step in steps), default=0)
    if counters is not None:
        state.tool_calls_made, state.tools_used = counters.tool_calls_made, [*counters.tools_used]
        state.last_call_key, state.repeat_count = counters.last_call_key, counters.repeat_count
        state.setup_usage = counters.setup_usage
    state.usage = usage
    state.standing.update(replayed.standing)
    _reopen(state, replayed.open, now)
    return state


def _reopen(state: RunState, log: _StepLog | None, now: float) -> None:
    """Put the open step back as the next step to run, its response already in the transcript."""
    if log is None or log.response is None:
        return
    state.messages.append(log.response.message)
    recovered = Recovered(dict(log.saved), frozenset(log.started))
    state.pending.extend(log.pending())
    state.decisions.update(log.decided)
    state.decided_on.update(log.decided_on)
    spent = sum((result.usage for result in log.saved.values()), log.spent)  # sub-runs' too
    draft = StepDraft(log.index, now, log.response, usage=spent, recovered=recovered)
    state.resume_step = draft
    state.iteration = log.index
    state.usage = state.usage + spent

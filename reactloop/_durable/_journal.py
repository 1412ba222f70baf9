"""The journal a run writes at its phase boundaries, so that it can be resumed.

Phases never see the store: they await the run's journal (`run.journal`), which is a no-op
`NullJournal` when the loop has no store. Records that may wait (a step's end, changed phase
data) are held and written with the next record that must not wait (a model response, a tool
call starting, a tool result, the run's end), each write one transaction.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from reactloop._core import (
    CallsHeld,
    CallStarted,
    DecisionsSaved,
    GivenDecision,
    InstructionsSaved,
    ModelResponse,
    PendingCall,
    PhaseDataSaved,
    Record,
    ResponseSaved,
    ResultSaved,
    RunEnded,
    RunResult,
    RunState,
    Step,
    StepClosed,
    ToolCall,
    ToolResult,
    Usage,
    ended_record,
)
from reactloop._durable._codec import json_snapshot, value_json
from reactloop._errors import ContractError
from reactloop._stored_errors import LeaseLostError, StoreError
from reactloop._unicode import dumps

if TYPE_CHECKING:
    from reactloop._core import LeasingStore, RunStore


class NullJournal:
    """The journal of a run without a store: every method does nothing."""

    async def check_lease(self) -> None:
        """Before a model call: the run may still be driven here (see `Journal.check_lease`)."""

    async def response(self, state: RunState, response: ModelResponse, spent: Usage) -> None:
        """The model's response for the current step was accepted."""

    def hold_response(self, state: RunState, response: ModelResponse, spent: Usage) -> None:
        """The model's response, to be written with the next record (see `Journal`)."""

    async def call_started(self, state: RunState, call: ToolCall) -> None:
        """A tool call is about to run."""

    async def tool_result(self, state: RunState, result: ToolResult) -> None:
        """A tool call returned: committed before anything acts on the result."""

    async def calls_held(self, state: RunState, pending: tuple[PendingCall, ...]) -> None:
        """These calls of the current step wait for decisions (the run pauses)."""

    async def decisions(self, state: RunState, given: tuple[GivenDecision, ...]) -> None:
        """Decisions given on resume, before anything acts on them."""

    def step_closed(self, state: RunState, step: Step, settled: Sequence[ToolResult] = ()) -> None:
        """A step ended (written with the next record); `settled` are results its end gave."""

    async def run_ended(
        self, state: RunState, result: RunResult, settled: Sequence[ToolResult] = ()
    ) -> None:
        """The run ended with `result`; `settled` are the results its end gave open calls."""

    def release(self) -> None:
        """The run is over in this process (frees its session for the next turn)."""

    @property
    def ended(self) -> bool:
        """Whether this journal wrote the run's end."""
        return False

    def __enter__(self) -> None:
        """`with run.journal:` around a run's whole life in this process."""

    def __exit__(self, *exc_info: object) -> None:
        self.release()


NULL_JOURNAL = NullJournal()
_EMPTY = json_snapshot({})


class Journal(NullJournal):
    """Writes a run's records to its store as they happen: append-only, one transaction each."""

    def __init__(
        self,
        store: RunStore,
        state: RunState,
        release: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.run_id = state.run_id
        self._instructions = state.instructions
        self._held: list[Record] = []
        self._saved: dict[str, ToolResult] = {}  # this step's results as written
        self._phase_data = _EMPTY
        self._release = release
        self._ended = False
        self.lease_until = math.inf  # monotonic time the lease surely lasts (a shared store's)
        self.lost: LeaseLostError | None = None  # set once a write was refused: nothing more

    async def check_lease(self) -> None:
        """Before a model call on a shared store: if the lease may have lapsed since it was
        last renewed (the process stalled), renew it now; `LeaseLostError` if it is gone."""
        if self.lost is not None:
            raise self.lost
        if time.monotonic() < self.lease_until:
            return
        store: LeasingStore = self.store  # type: ignore[assignment]  # only leases set a bound
        if not await store.renew_lease(self.run_id):
            self.lost = LeaseLostError(self.run_id, store.worker_id, None)
            raise self.lost
        self.lease_until = time.monotonic() + store.lease_seconds / 2

    async def _write(self, state: RunState, record: Record, *, data: bool = True) -> None:
        if self.lost is not None:
            raise self.lost
        records = self._held
        self._held = []
        records.extend(self._changes(state, data))
        records.append(record)
        try:
            await self.store.append(self.run_id, records)
        except LeaseLostError as lost:
            self.lost = lost
            raise
        except StoreError as error:  # say what was not saved, so nobody has to guess
            raise StoreError(
                f"{_what(record)} of run {self.run_id} could not be saved: {error.message}"
            ) from error

    def _changes(self, state: RunState, data: bool) -> list[Record]:
        """The phase data and instructions that changed since they were last journaled (phase
        data that cannot be saved raises its `ContractError`), to go before the next record."""
        changes: list[Record] = []
        if data and (state.phase_data or self._phase_data != _EMPTY):
            snapshot = json_snapshot(state.phase_data)
            if snapshot != self._phase_data:
                changes.append(PhaseDataSaved(_copy(state.phase_data)))
                self._phase_data = snapshot
        if state.instructions != self._instructions:
            self._instructions = state.instructions
            changes.append(InstructionsSaved(state.instructions))
        return changes

    async def response(self, state: RunState, response: ModelResponse, spent: Usage) -> None:
        """Write the accepted response of the current step."""
        await self._write(state, ResponseSaved(_step(state), response, spent))

    def hold_response(self, state: RunState, response: ModelResponse, spent: Usage) -> None:
        """Hold the accepted response for the next write (its first call's start, the calls
        held, the run's end), when the loop lets nothing act on it before then: one commit per
        tool step saved (see `response_may_wait`). What changed before it (phase data,
        instructions) is held before it, as a write would have put it; phase data that cannot be
        saved fails here, as the write would have (a `ContractError`)."""
        if self.lost is not None:
            raise self.lost
        self._held.extend(self._changes(state, data=True))
        self._held.append(ResponseSaved(_step(state), response, spent))

    async def call_started(self, state: RunState, call: ToolCall) -> None:
        """Write that a call starts, before its tool is invoked."""
        await self._write(state, CallStarted(_step(state), call.id, call.name))

    async def tool_result(self, state: RunState, result: ToolResult) -> None:
        """Write one tool result as soon as its tool returns."""
        self._saved[result.call_id] = result
        try:
            await self._write(state, ResultSaved(_step(state), result))
        except LeaseLostError as lost:  # kept out of the journal: say which result
            self.lost = LeaseLostError(lost.run_id, lost.worker_id, lost.holder, [result.call_id])
            raise self.lost from None

    async def calls_held(self, state: RunState, pending: tuple[PendingCall, ...]) -> None:
        """Write the held calls of the current step."""
        await self._write(state, CallsHeld(_step(state), pending))

    async def decisions(self, state: RunState, given: tuple[GivenDecision, ...]) -> None:
        """Write the decisions given on resume, before any of them is acted on."""
        if given:
            await self._write(state, DecisionsSaved(_step_of_resume(state), given))

    def recall(self, results: Mapping[str, ToolResult]) -> None:
        """Results of the current step saved before a resume: its end need not repeat them."""
        self._saved.update(results)

    def step_closed(self, state: RunState, step: Step, settled: Sequence[ToolResult] = ()) -> None:
        """Hold the step's end (timing, final results that differ, counters) for the next write.

        Results the run's end gave calls left open (`settled`) go with `RunEnded`, not here, so a
        resumed run still sees those calls as unanswered.
        """
        saved, self._saved = self._saved, {}
        given = {result.call_id for result in settled}
        final = tuple(
            r for r in step.tool_results if saved.get(r.call_id) != r and r.call_id not in given
        )
        key = state.last_call_key
        self._held.append(
            StepClosed(
                step.index,
                step.started_at,
                step.duration,
                step.usage,
                final,
                state.tool_calls_made,
                tuple(state.tools_used),
                None if key is None else (key[0], key[1]),
                state.repeat_count,
                state.setup_usage,
                step.prefix_breaks,
            )
        )

    async def run_ended(
        self, state: RunState, result: RunResult, settled: Sequence[ToolResult] = ()
    ) -> None:
        """Write the run's end, with the step end still held (and the phase data, unless it
        cannot be saved: the run has then already failed with that `ContractError`)."""
        if self.lost is not None:
            return  # the run is another worker's now: its end is not this one's to write
        ended = ended_record(result, time.time(), settled, value_json)
        try:
            json_snapshot(state.phase_data)
        except ContractError:
            await self._write(state, ended, data=False)
        else:
            await self._write(state, ended)
        self._ended = True

    @property
    def ended(self) -> bool:
        """Whether this journal wrote the run's end (which also freed a lease)."""
        return self._ended

    def release(self) -> None:
        """Call the release given at creation (the session lock's), once."""
        release, self._release = self._release, None
        if release is not None:
            release()


def _what(record: Record) -> str:
    """The record a failed write would have saved, as a person would name it."""
    match record:
        case ResultSaved(result=result):
            return f"the result of call {result.call_id} ({result.name})"
        case CallStarted(call_id=call_id, name=name):
            return f"the start of call {call_id} ({name})"
        case ResponseSaved(step=step):
            return f"the model's response of step {step}"
        case RunEnded(stop_reason=reason):
            return f"the end of the run ({reason.value})"
        case _:
            return f"the {type(record).__name__} record"


def _step(state: RunState) -> int:
    return 0 if state.current is None else state.current.index


def _step_of_resume(state: RunState) -> int:
    """The step a resumed run continues (its held calls are that step's)."""
    draft = state.resume_step or state.current
    return 0 if draft is None else draft.index


def _copy(data: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of JSON-like data, so a later change in the run does not alter the record."""
    copied: dict[str, Any] = orjson.loads(dumps(data, where="phase data"))
    return copied

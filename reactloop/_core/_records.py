"""What a run store holds: the journal's records (frozen attrs classes), a run's status, and the
stored run a store gives back. A record is written once and never changed (append-only).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from attrs import field, frozen

from reactloop._core._approvals import GivenDecision, PendingCall
from reactloop._core._decisions import StopReason
from reactloop._core._messages import Message, ModelResponse, Usage, UserMessage
from reactloop._core._parts import ContentPart
from reactloop._core._repair import RepairNote
from reactloop._core._state import RunResult, Step, ToolResult
from reactloop._errors import ErrorCode

SCHEMA_VERSION = 1
"""The version of the record encoding (journals, state tokens, exports); a reader refuses a newer
one. New record types and fields with defaults keep it: older data still reads the same."""

STORE_SCHEMA_VERSION = 3
"""The version of the database layout of `SqliteStore` and `PostgresStore` (2: run leases with a
fence; 3: content parts' bytes kept once by digest, adr/0028); a store upgrades an older
database in place and refuses a newer one."""


class RunStatus(enum.StrEnum):
    """Where a stored run stands; every status but FINISHED can be resumed."""

    RUNNING = "running"  # started, not ended: in progress, or its process died or was cancelled
    FINISHED = "finished"  # ended for good: resuming it returns its stored result
    INTERRUPTED = "interrupted"  # ended early on request or when its stream was left
    FAILED = "failed"  # ended with an error (model down, run timeout, broken contract, ...)
    PAUSED = "paused"  # waits for decisions on held calls (approvals, external results)
    PARKED = "parked"  # set aside by a worker that could not resume it (`RunParked` says why)


@frozen
class RunCreated:
    """A run began: its input and what it needs to be rebuilt. Never deps, never secrets.

    `history` is the history given to `run()` (after repair); a session's earlier turns are not
    copied here, they are the session's other runs. `created_at` is wall-clock time (epoch s).
    """

    run_id: str
    input: str
    instructions: str | None
    tool_names: tuple[str, ...]
    created_at: float
    history: tuple[Message, ...] = ()
    repairs: tuple[RepairNote, ...] = ()
    user_id: str | None = None
    session_id: str | None = None
    standing: tuple[GivenDecision, ...] = ()  # session-wide "always" decisions it inherited
    input_parts: tuple[ContentPart, ...] = ()  # the input's parts, when it was not only text

    def input_message(self) -> UserMessage:
        """The user's message the run started from."""
        return UserMessage(parts=self.input_parts) if self.input_parts else UserMessage(self.input)


@frozen
class ResponseSaved:
    """The model's response of step `step`, as accepted (after hooks), and what the call spent."""

    step: int
    response: ModelResponse
    usage: Usage


@frozen
class CallStarted:
    """A tool call of step `step` is about to run (written before the tool is invoked)."""

    step: int
    call_id: str
    name: str


@frozen
class ResultSaved:
    """A tool call's result, as its tool returned it: committed before anything acts on it."""

    step: int
    result: ToolResult


@frozen
class StepClosed:
    """Step `index` ended: its timing and usage, the final results that differ from the saved
    ones (replaced by hooks, refusals, nudges), and the run's counters at that point."""

    index: int
    started_at: float
    duration: float
    usage: Usage
    final_results: tuple[ToolResult, ...] = ()
    tool_calls_made: int = 0
    tools_used: tuple[str, ...] = ()
    last_call_key: tuple[str, str] | None = None
    repeat_count: int = 0
    setup_usage: Usage = Usage()
    prefix_breaks: tuple[str, ...] = ()  # why its request broke the prompt prefix (Step's)


@frozen
class CallsHeld:
    """Calls of step `step` held for a decision (approval or an external result): the run
    pauses at the end of the step."""

    step: int
    pending: tuple[PendingCall, ...]


@frozen
class DecisionsSaved:
    """Decisions given on resume for held calls of step `step`, written before any runs."""

    step: int
    decisions: tuple[GivenDecision, ...]


@frozen
class PhaseDataSaved:
    """The run's custom phase data (`RunState.phase_data`) as it stood at a phase boundary."""

    data: dict[str, Any] = field(factory=dict)


@frozen
class InstructionsSaved:
    """The run's instructions as a phase changed them (e.g. a planning phase adding its plan)."""

    instructions: str | None


@frozen
class RunEnded:
    """The run ended: why, with what output and usage; `error_code` when it failed.

    `settled` are the error results the end gave calls left open ("not run", "cut short"): part of
    the final transcript, and ignored when the run is resumed (its open calls go on then).
    """

    stop_reason: StopReason
    stop_detail: str
    output: str | None
    usage: Usage
    ended_at: float
    error_code: ErrorCode | None = None
    error_message: str | None = None
    user_message: str | None = None
    settled: tuple[ToolResult, ...] = ()
    output_json: str | None = None  # a structured output's value, as JSON (`output` is None)


@frozen
class SubRunLinked:
    """This run is an agent tool's sub-run: the parent run `parent_run_id` called the tool `tool`
    as `call_id` (the parent's journal holds the call's result with this run's id)."""

    parent_run_id: str
    call_id: str
    tool: str


@frozen
class RunParked:
    """A worker could not resume the run (a fault that recurs on every try: a tool the loop
    lacks, a journal it cannot read, a configuration or contract error) and set it aside:
    workers no longer claim it until it is unparked (`unpark_run`) or resumed by id.

    `reason` is the error's message, `error_type` its class name, `error_code` its code (a
    reactloop error's); `worker_id` the worker that parked it; `parked_at` wall-clock time.
    """

    reason: str
    parked_at: float
    error_code: ErrorCode | None = None
    error_type: str | None = None
    worker_id: str | None = None


@frozen
class RunUnparked:
    """A parked run was handed back (`unpark_run`, or resumed by id): running again, and
    claimable by workers once no worker holds it."""

    unparked_at: float


Record: TypeAlias = (
    RunCreated
    | ResponseSaved
    | CallStarted
    | ResultSaved
    | StepClosed
    | PhaseDataSaved
    | InstructionsSaved
    | RunEnded
    | CallsHeld
    | DecisionsSaved
    | SubRunLinked
    | RunParked
    | RunUnparked
)
RECORD_TYPES: tuple[type, ...] = (
    RunCreated,
    ResponseSaved,
    CallStarted,
    ResultSaved,
    StepClosed,
    PhaseDataSaved,
    InstructionsSaved,
    RunEnded,
    CallsHeld,
    DecisionsSaved,
    SubRunLinked,
    RunParked,
    RunUnparked,
)

_EARLY = frozenset({StopReason.INTERRUPTED, StopReason.STREAM_CLOSED})


def status_of(ended: RunEnded) -> RunStatus:
    """A failed run is FAILED, a paused one PAUSED, one stopped on request or by its consumer
    INTERRUPTED; the rest
    (completed, a cap, a condition, a hook) FINISHED."""
    if ended.error_code is not None:
        return RunStatus.FAILED
    if ended.stop_reason is StopReason.AWAITING_APPROVAL:
        return RunStatus.PAUSED
    return RunStatus.INTERRUPTED if ended.stop_reason in _EARLY else RunStatus.FINISHED


def status_after(records: tuple[Record, ...] | list[Record]) -> RunStatus:
    """The status a run has once `records` are appended (RUNNING unless they end or park it)."""
    last = records[-1] if records else None
    if isinstance(last, RunParked):
        return RunStatus.PARKED
    return status_of(last) if isinstance(last, RunEnded) else RunStatus.RUNNING


def ended_record(
    result: RunResult[Any],
    ended_at: float,
    settled: Sequence[ToolResult] = (),
    json_text: Callable[[Any], str] = str,
) -> RunEnded:
    """The record of a run's end, from its result (the error itself is not stored: its code and
    message are; a structured output is stored as `json_text` makes it)."""
    error = result.error
    text = result.output if isinstance(result.output, str) else None
    value = None if result.output is None or text is not None else json_text(result.output)
    return RunEnded(
        result.stop_reason,
        result.stop_detail,
        text,
        result.usage,
        ended_at,
        None if error is None else error.code,
        None if error is None else error.message,
        result.user_message,
        tuple(settled),
        value,
    )


@frozen
class RunSummary:
    """One line of `RunStore.list_runs`: a run's id, status, owner and times (epoch seconds;
    `updated_at` is when its status last changed)."""

    run_id: str
    status: RunStatus
    created_at: float
    updated_at: float
    user_id: str | None = None
    session_id: str | None = None


@frozen
class SessionTurn:
    """One run of a session as a new turn reads it (`SessionTurnsStore.session_turns`): its id,
    status and own messages (as `StoredRun.messages`), and the session-wide "always" decisions
    it holds (those it inherited and its own: the newest run holds them all)."""

    run_id: str
    status: RunStatus
    messages: tuple[Message, ...]
    standing: tuple[GivenDecision, ...] = ()


@frozen
class StoredRun:
    """A stored run as its journal rebuilds it: transcript, steps, usage and how it ended.

    `messages` are the run's own (its given history, input and turn; a session's earlier turns
    are in the session's other runs). `records` is the journal itself, in order.
    """

    run_id: str
    status: RunStatus
    created: RunCreated
    messages: tuple[Message, ...]
    steps: tuple[Step, ...]
    usage: Usage
    records: tuple[Record, ...]
    phase_data: dict[str, Any] = field(factory=dict)
    ended: RunEnded | None = None
    pending: tuple[PendingCall, ...] = ()  # held calls waiting for decisions (a paused run)

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the run ended; None while it has not."""
        return None if self.ended is None else self.ended.stop_reason

    @property
    def output(self) -> str | None:
        """The run's final output, if it ended with one."""
        return None if self.ended is None else self.ended.output

    @property
    def parked(self) -> RunParked | None:
        """Why a worker set the run aside, while it is parked; None otherwise."""
        last = self.records[-1] if self.records else None
        return last if isinstance(last, RunParked) else None

    @property
    def parent(self) -> SubRunLinked | None:
        """For an agent tool's sub-run, the parent run and call that ran it; None otherwise."""
        for record in self.records:
            if isinstance(record, SubRunLinked):
                return record
        return None

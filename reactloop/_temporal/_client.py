"""The caller's side of a loop on Temporal: `TemporalLoop` wraps a loop under a stable name and
starts its runs (a session's through the session's workflow, one turn at a time);
`TemporalRun` is a run's handle: its events, decisions, result, interrupt and status, read from
the workflow's journal (the same records a stored run keeps, so the same events and result)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any
from uuid import uuid4

import anyio
import attrs
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from reactloop._core import (
    DECISION_TYPES,
    Approve,
    Decision,
    Deny,
    Event,
    ExternalFailure,
    ExternalResult,
    PendingCall,
    Record,
    RunResult,
    RunStatus,
    UserMessage,
)
from reactloop._durable import replay, structure_records
from reactloop._loop import IfExists, ReActLoop
from reactloop._serve._replay import stored_result
from reactloop._stored_errors import DecisionError, RunExistsError
from reactloop._temporal._channel import (
    Batch,
    EventChannel,
    WorkflowEvents,
    encoded_values,
    queried,
)
from reactloop._temporal._contracts import (
    WORKFLOW_RUN,
    WORKFLOW_SESSION,
    RunInfo,
    RunRequest,
    run_workflow_id,
    session_workflow_id,
)
from reactloop._temporal._errors import RunFailedError, RunNotPausedError
from reactloop._temporal._limits import HistoryLimits, failed
from reactloop._temporal._mirror import mirror_store
from reactloop._temporal._options import ActivityOptions
from reactloop._temporal._payloads import encode, encode_decisions, encode_messages
from reactloop._temporal._served import ServedLoop
from reactloop._temporal._session import SessionStart
from reactloop._temporal._workflow import (
    DECISION_ERROR,
    PENDING,
    STATUS,
    decode_outcome,
    decode_records,
)
from reactloop._unicode import identifier, optional_identifier
from reactloop._validate import boolean, member, text

POLL = 0.05
"""Seconds between two reads of a running run's journal (events) or of a turn not yet started."""

DepsFactory = Callable[[RunInfo], Any]


class TemporalLoop:
    """A loop run on Temporal under a stable `name` (its activities are named after it):
    `deps_factory(RunInfo)` builds a run's deps on the worker (never in history), `activities`
    set the model's and tools' activity options; `mirror` is a store (or a store URL) each
    run's journal is copied to at its pauses and its end (`_mirror`), so the command line, the
    trace page and `ChatServer` read Temporal runs from it. `events` is how callers receive
    a run's events (`EventChannel`; by default the workflow's buffer, read by query);
    `history` when its workflows continue as new (`HistoryLimits`)."""

    def __init__(
        self,
        loop: ReActLoop[Any],
        *,
        name: str,
        deps_factory: DepsFactory | None = None,
        activities: ActivityOptions | None = None,
        mirror: object = None,
        events: EventChannel | None = None,
        history: HistoryLimits | None = None,
    ) -> None:
        self.loop = loop
        self.name = identifier("name", name)
        self.deps_factory = deps_factory
        self.activities = ActivityOptions() if activities is None else activities
        self.mirror = mirror_store(mirror)
        self.events: EventChannel = WorkflowEvents() if events is None else events
        self.history = HistoryLimits() if history is None else history

    def __repr__(self) -> str:
        return f"TemporalLoop({self.name!r})"

    async def start(
        self,
        client: Client,
        text: str | UserMessage | Sequence[Any],
        *,
        task_queue: str,
        run_id: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        if_exists: str = "resume",
        eager_start: bool = False,
    ) -> TemporalRun:
        """Start a run (a session's next turn with `session_id`, queued behind its earlier
        turns) and return its handle; `run_id` is yours or a fresh one. As `loop.run(run_id=)`
        does, an id that names a run already (running, paused or ended) gives that run's
        handle, never a second run; `if_exists="error"` refuses it (`RunExistsError`).
        `eager_start=True` asks the server to hand the run's first workflow task straight back
        to a worker of this process on the same client (Temporal's eager workflow start: one
        hand-off less), if one has a free slot; a session's turn starts as usual."""
        refuse = member("if_exists", if_exists, IfExists) is IfExists.ERROR
        run_id = uuid4().hex if run_id is None else identifier("run_id", run_id)
        request = RunRequest(
            self.name,
            run_id,
            encode_messages([_said(text)]),
            optional_identifier("user_id", user_id),
            optional_identifier("session_id", session_id),
        )
        queue, eager = _queue(task_queue), boolean("eager_start", eager_start)
        try:
            if session_id is None:
                return await self._start_run(client, request, queue, eager)
            return await self._start_turn(client, request, queue)
        except WorkflowAlreadyStartedError:
            if refuse:
                raise RunExistsError(run_id) from None
            return self.get(client, run_id)

    async def _start_run(
        self, client: Client, request: RunRequest, queue: str, eager: bool = False
    ) -> TemporalRun:
        """Start the run's workflow (`eager`: its first task to this process's worker);
        `WorkflowAlreadyStartedError` when its id was ever used (running or closed: one
        workflow per run id, for as long as Temporal keeps it)."""
        started = await client.start_workflow(
            WORKFLOW_RUN,
            encode(request),
            id=self.workflow_id(request.run_id),
            task_queue=queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            request_eager_start=eager,
        )
        return TemporalRun(self, client, request.run_id, started)

    async def _start_turn(self, client: Client, request: RunRequest, queue: str) -> TemporalRun:
        """Queue the turn in its session's workflow (started with it if need be), unless a run
        of that id exists (`WorkflowAlreadyStartedError`); a turn queued twice at once runs once
        (the session workflow skips a turn whose run exists)."""
        run = self.get(client, request.run_id)
        if await run.exists():
            raise WorkflowAlreadyStartedError(run.workflow_id, WORKFLOW_RUN)
        assert request.session_id is not None
        await client.start_workflow(
            WORKFLOW_SESSION,
            encode(SessionStart(self.name, request.session_id)),
            id=session_workflow_id(self.name, request.session_id),
            task_queue=queue,
            start_signal="turn",
            start_signal_args=[encode(request)],
        )
        return run

    async def run(
        self, client: Client, text: str | UserMessage | Sequence[Any], **options: Any
    ) -> RunResult[Any]:
        """Start a run (see `start`) and wait for its result."""
        return await (await self.start(client, text, **options)).result()

    def served(self, client: Client, *, task_queue: str) -> ServedLoop:
        """This loop as `ChatServer(...)` serves it: runs start on `task_queue`, the server
        reads runs from the mirror (which it needs) and streams them from their workflows."""
        return ServedLoop(self, client, task_queue)

    def get(self, client: Client, run_id: str) -> TemporalRun:
        """The handle of a run started before (by any process)."""
        return TemporalRun(self, client, identifier("run_id", run_id))

    def workflow_id(self, run_id: str) -> str:
        """The id of the workflow driving run `run_id`."""
        return run_workflow_id(self.name, run_id)


def _queue(task_queue: object) -> str:
    return text("task_queue", task_queue)


def _said(given: str | UserMessage | Sequence[Any]) -> UserMessage:
    """The user's message a run starts from: a string, a `UserMessage` or a list of parts."""
    if isinstance(given, UserMessage):
        return given
    if isinstance(given, str):
        return UserMessage(given)
    return UserMessage(parts=tuple(given))


def as_decision(value: object) -> Decision:
    """A decision as `resume()` takes it: True approves, False denies, an exception is an
    external call's failure and any other value its result."""
    if isinstance(value, DECISION_TYPES):
        return value  # type: ignore[return-value]
    if isinstance(value, bool):
        return Approve() if value else Deny()
    if isinstance(value, BaseException):
        return ExternalFailure(str(value) or type(value).__name__)
    return ExternalResult(value)


class TemporalRun:
    """A run driven by a Temporal workflow: read its events and result, decide its held calls,
    interrupt it; any process with a client can hold one (`TemporalLoop.get`)."""

    def __init__(
        self,
        loop: TemporalLoop,
        client: Client,
        run_id: str,
        handle: WorkflowHandle[Any, Any] | None = None,
    ) -> None:
        self.loop = loop
        self.client = client
        self.run_id = run_id
        self.workflow_id = loop.workflow_id(run_id)
        # the handle `start_workflow` gave, kept: a time-skipping test server's client skips
        # time only while one of its own handles awaits a result
        self._started = handle
        self.seen = 0  # how many of the run's events this handle's `events()` gave

    def __repr__(self) -> str:
        return f"TemporalRun({self.loop.name!r}, {self.run_id!r})"

    def _handle(self) -> WorkflowHandle[Any, Any]:
        if self._started is not None:
            return self._started
        return self.client.get_workflow_handle(self.workflow_id)

    async def exists(self) -> bool:
        """Whether the run's workflow was started (it may have ended since)."""
        try:
            await self._handle().describe()
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
            return False
        return True

    async def _describe(self) -> Any:
        """The workflow's description, waiting for a session's turn to start its workflow."""
        while True:
            try:
                return await self._handle().describe()
            except RPCError as error:
                if error.status is not RPCStatusCode.NOT_FOUND:
                    raise
            await anyio.sleep(POLL)

    async def records(self, after: int = 0) -> tuple[tuple[Record, ...], bool]:
        """The run's journal records after the first `after`, and whether the run stands at an
        end (paused or over) as they show it; from the result once the workflow closed."""
        described = await self._describe()
        if described.status is not WorkflowExecutionStatus.RUNNING:
            return (await self._journal())[after:], True
        data = await self._handle().query("records", after, result_type=bytes)
        memo = await described.memo()
        return decode_records(data), memo.get(STATUS) == "paused"

    def events(self, after: int | None = None) -> AsyncIterator[Event]:
        """The run's events as `loop.stream()` gives them, as they come, up to where the run
        stands (its pause or end). From the `after`-th event (counting from 0); by default
        after those this handle's earlier `events()` gave, so after a decision the next call
        goes on with the resumed run; `after=0` reads the run from its start, like a replay."""
        start = self.seen if after is None else after
        return self.loop.events.follow(self, start)

    async def event_batch(self, after: int) -> Batch:
        """The run's events after the first `after` as the workflow keeps them (encoded), from
        its result once it closed (no worker needed), else by the query "events"."""
        described = await self._describe()
        closed = described.status is not WorkflowExecutionStatus.RUNNING
        if closed:
            records, events = await self._outcome()
            if events is not None:
                return Batch(encoded_values(events)[after:], True, True, _given(records))
        answer = await self._handle().query("events", after, result_type=bytes)
        values, paused, more = queried(answer)
        journal = _given(records) if closed else self._journal_so_far
        return Batch(values, paused or closed, closed, journal, more)

    async def _journal_so_far(self) -> tuple[Record, ...]:
        return (await self.records())[0]

    async def _outcome(self) -> tuple[tuple[Record, ...], bytes | None]:
        await self._describe()
        try:
            data: bytes = await self._handle().result()
        except WorkflowFailureError as error:
            raise failed(self.run_id, error.cause) or RunFailedError(
                self.run_id, str(error.cause or error)
            ) from error
        return decode_outcome(data)

    async def _journal(self) -> tuple[Record, ...]:
        return (await self._outcome())[0]

    async def result(self) -> RunResult[Any]:
        """The run's result once it ended (waiting through its pauses), as `loop.run()` gives."""
        return self.result_of(await self._journal())

    def result_of(self, records: Sequence[Record]) -> RunResult[Any]:
        """The result the run's journal `records` stand for (up to its last end in them)."""
        stored = replay(records).stored
        result = stored_result(stored)
        output = self.loop.loop.config.output
        ended = stored.ended
        if output is not None and ended is not None and ended.output_json is not None:
            result = attrs.evolve(result, output=output.from_json(result.output))
        return result

    async def decide(self, decisions: Mapping[str, Any]) -> None:
        """Decide the run's held calls (`{call_id: Approve()}`): checked by the workflow as
        `resume()` checks them; a refused one is a `DecisionError` and nothing is kept."""
        given = {call_id: as_decision(value) for call_id, value in decisions.items()}
        await self._describe()
        try:
            await self._handle().execute_update("decide", encode_decisions(given))
        except WorkflowUpdateFailedError as error:
            raise _refused(self.run_id, given, error) from None

    async def interrupt(self, message: str | None = None) -> None:
        """Stop the run as `RunHandle.interrupt` does; `message` becomes its output if given."""
        await self._describe()
        await self._handle().signal("interrupt", message)

    async def pending(self) -> tuple[PendingCall, ...]:
        """The calls the run holds for decisions (none unless it is paused); read from the
        workflow's memo, so no worker needs to be up."""
        memo = await (await self._describe()).memo()
        held = memo.get(PENDING)
        if not held:
            return ()
        (record,) = structure_records(held)
        return tuple(getattr(record, "pending", ()))

    async def status(self) -> RunStatus:
        """Where the run stands: running, paused, or how it ended."""
        described = await self._describe()
        if described.status is WorkflowExecutionStatus.RUNNING:
            memo = await described.memo()
            return RunStatus.PAUSED if memo.get(STATUS) == "paused" else RunStatus.RUNNING
        if described.status is not WorkflowExecutionStatus.COMPLETED:
            return RunStatus.FAILED
        return replay(await self._journal()).stored.status


def _given(records: tuple[Record, ...]) -> Callable[[], Awaitable[tuple[Record, ...]]]:
    async def journal() -> tuple[Record, ...]:
        return records

    return journal


def _refused(run_id: str, given: Mapping[str, Decision], error: Exception) -> Exception:
    """The caller's error for decisions the workflow refused."""
    cause = getattr(error, "cause", None)
    if not isinstance(cause, ApplicationError):
        return error
    if cause.type != DECISION_ERROR:
        return RunNotPausedError(run_id, "holds no calls")
    call_id, rule = cause.details[0], cause.details[1]
    refused = DecisionError(call_id, given.get(call_id), rule)
    refused.args = (cause.message,)
    refused.message = cause.message
    return refused

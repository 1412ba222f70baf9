"""`RunWorkflow`: one run of a loop as a Temporal workflow. It drives the real loop (a clone
whose model and tools are activities, `_proxies.workflow_loop`) on an in-memory store whose
journal it keeps: the query "records" reads it as the run goes, the workflow's result is all of
it. A paused run waits in the workflow (a durable timer for the earliest deadline) for the
update "decide", whose validator runs reactloop's own checks; the signal "interrupt" stops it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import attrs
import orjson
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from reactloop._approval import check_decisions
from reactloop._core import CallsHeld, PendingCall, Record, RunCreated, RunResult, UserMessage
from reactloop._durable import (
    MemoryStore,
    dump_json,
    replay,
    structure_records,
    unstructure_records,
)
from reactloop._loop import ReActLoop, RunStream
from reactloop._serve._replay import stored_result
from reactloop._stored_errors import DecisionError
from reactloop._temporal._contracts import (
    WORKFLOW_RUN,
    MirrorBatch,
    RunRequest,
    mirror_activity,
)
from reactloop._temporal._errors import HistoryLimitError, PayloadTooLargeError, UnknownLoopError
from reactloop._temporal._events import encode_events, unstructure_event
from reactloop._temporal._limits import Carried, carry, failure_of, uncarry, within
from reactloop._temporal._payloads import decode, decode_decisions, decode_messages, encode
from reactloop._temporal._proxies import workflow_loop

if TYPE_CHECKING:
    from reactloop._temporal._client import TemporalLoop

DECISION_ERROR = "reactloop.DecisionError"  # the ApplicationError type of a refused decision
NOT_PAUSED = "reactloop.RunNotPaused"  # decisions given to a run that holds no calls
STATUS = "reactloop.status"  # memo keys: the run's status and the calls it holds
PENDING = "reactloop.pending"

MIRROR_TIMEOUT = timedelta(seconds=60)
MIRROR_RETRY = RetryPolicy(maximum_attempts=5)
"""A copy to the mirror is idempotent, so retried; one that fails every attempt is left for
the next copy (the run goes on: the mirror is a view of it, not its truth)."""

EVENTS_IN_RESULT = 1024 * 1024
"""The most bytes of events the workflow's result keeps beside the journal (Temporal refuses
a result over 2 MB); a run with more leaves them to the query "events" once it closed."""
EVENTS_PER_QUERY = 1000
"""The most events one answer to the query "events" holds (a caller reads on for the rest)."""

LOOPS: dict[str, TemporalLoop] = {}
"""The loops this process's workers serve, by name (filled by `temporal_worker`)."""


def registered(name: str) -> TemporalLoop:
    """The loop of that name this process's worker serves."""
    found = LOOPS.get(name)
    if found is None:
        raise UnknownLoopError(name, list(LOOPS))
    return found


def encode_records(records: Sequence[Record]) -> bytes:
    """Journal records as the workflow hands them out (its query and its result)."""
    return dump_json(unstructure_records(records))


def decode_records(data: bytes) -> tuple[Record, ...]:
    """The records `encode_records` wrote."""
    return structure_records(orjson.loads(data))


def encode_outcome(records: Sequence[Record], events: Sequence[Any]) -> bytes:
    """The workflow's result: the run's whole journal and its events (`_events`' values), so
    a closed run's are read with no worker up; events over `EVENTS_IN_RESULT` bytes are left
    out (None), so they never push the result past Temporal's payload limit."""
    kept = list(events) if len(encode_events(events)) <= EVENTS_IN_RESULT else None
    return dump_json({"records": unstructure_records(records), "events": kept})


def decode_outcome(data: bytes) -> tuple[tuple[Record, ...], bytes | None]:
    """The journal `encode_outcome` wrote, and its events (encoded, for `_events`; None when
    the result left them out: the query "events" reads them then)."""
    outcome = orjson.loads(data)
    events = outcome.get("events")
    return structure_records(outcome["records"]), None if events is None else encode_events(events)


def events_answer(events: Sequence[Any], after: int, paused: bool) -> bytes:
    """The answer to the query "events": at most `EVENTS_PER_QUERY` events after the first
    `after`, whether more follow them, and whether the run is paused after the last one."""
    given = events[after : after + EVENTS_PER_QUERY]
    more = after + len(given) < len(events)
    return dump_json({"events": list(given), "more": more, "paused": paused and not more})


class KeptStore(MemoryStore):
    """The workflow's run store: a `MemoryStore` that also keeps its one run's records as
    written, so a query (which cannot await) reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[Record] = []
        self.mirrored = 0  # how many of them the loop's mirror holds

    async def create_run(self, created: RunCreated) -> None:
        await super().create_run(created)
        self.records.append(created)

    async def append(self, run_id: str, records: Sequence[Record]) -> None:
        await super().append(run_id, records)
        self.records.extend(records)


def _on_store(loop: ReActLoop[Any], store: KeptStore) -> ReActLoop[Any]:
    """`loop` journaling to `store` (the way `ReActLoop.with_output` makes a variant)."""
    other: ReActLoop[Any] = object.__new__(ReActLoop)
    other.__dict__.update(loop.__dict__, _owns_model=False)
    other.config = attrs.evolve(loop.config, store=store)
    return other


def _said(data: bytes) -> UserMessage:
    """The run's input message from its encoded form."""
    (said,) = decode_messages(data)
    assert isinstance(said, UserMessage)
    return said


@workflow.defn(name=WORKFLOW_RUN, sandboxed=False)
class RunWorkflow:
    """Drives one run to its end, waiting in between for decisions on the calls it holds."""

    @workflow.init
    def __init__(self, data: bytes) -> None:
        """Everything the handlers check, from the input: a decision can reach a continued
        execution in its first workflow task, where the validator runs before `run`."""
        self._request = request = decode(data, RunRequest)
        self._store = KeptStore()
        self._run_id, self._session = request.run_id, request.session_id
        named = registered(request.loop)
        self._mirror = None if named.mirror is None else named.name
        proxied = workflow_loop(named.loop, named.name, named.activities, request.session_id)
        self._clone = _on_store(proxied, self._store)
        self._tools = self._clone.config.tools
        self._limit = self._clone.config.max_result_chars
        self._history, self._budget = named.history, named.activities.max_payload_bytes
        self._carried = None if request.carried is None else uncarry(request.carried)
        self._held: tuple[PendingCall, ...] = ()
        self._known: frozenset[str] = frozenset()
        if self._carried is not None:
            journal = replay(structure_records(self._carried.records))
            self._held, self._known = tuple(stored_result(journal.stored).pending), journal.call_ids
        self._decisions: dict[str, Any] = {}
        self._decided = False
        self._live: Any = None  # the run being driven (a handle or stream with `interrupt`)
        self._interrupt: tuple[str | None] | None = None
        self._events: list[Any] = []  # the run's events as it emitted them (`_events` values)
        self._base = 0  # its history's length when this execution started

    @workflow.run
    async def run(self, data: bytes) -> bytes:
        """The run's whole journal and its events, encoded, once it ended (`data`, its
        `RunRequest`, was read by `__init__`)."""
        self._base = workflow.info().get_current_history_length()
        try:
            return await self._driven(self._clone, self._request)
        except (PayloadTooLargeError, HistoryLimitError) as error:
            message, kind, details = failure_of(error)
            raise ApplicationError(message, *details, type=kind, non_retryable=True) from None

    async def _driven(self, clone: ReActLoop[Any], request: RunRequest) -> bytes:
        """Drive the run through its pauses to its end (continuing as new at a pause when the
        history is long); its outcome, within the payload budget."""
        if self._carried is None:
            result = await self._first(clone, request)
        else:
            result = await self._carried_over(self._carried)
        while result.paused and self._interrupt is None:
            if await self._wait(result):
                self._continue_as_new(request)
            result = await self._resume(clone)
        await self._mirrored()
        workflow.upsert_memo({STATUS: "ended", PENDING: None})
        outcome = encode_outcome(self._store.records, self._events)
        return within(outcome, self._budget, "a run's journal, its workflow's result", self._run_id)

    async def _carried_over(self, carried: Carried) -> RunResult[Any]:
        """The paused run an earlier execution handed this one (`_continue_as_new`): its
        journal back in the store, its events in the buffer, its result as it paused."""
        records = structure_records(carried.records)
        created = records[0]
        assert isinstance(created, RunCreated), "a journal starts with its RunCreated record"
        await self._store.create_run(created)
        await self._store.append(self._run_id, records[1:])
        self._store.mirrored, self._events = carried.mirrored, carried.events
        return stored_result(replay(records).stored)

    def _continue_as_new(self, request: RunRequest) -> None:
        """Hand the paused run to a new execution of this workflow (same id: callers follow
        it): its journal, events and mirror position, within the payload budget."""
        records = unstructure_records(self._store.records)
        carried = carry(Carried(records, self._events, self._store.mirrored))
        data = encode(attrs.evolve(request, history=None, carried=carried))
        what = "the journal and events a run carries into its next workflow execution"
        workflow.continue_as_new(within(data, self._budget, what, self._run_id))

    def _long(self) -> bool:
        """Whether the history is long enough to continue as new (never a fresh execution's:
        one that continued as new waits until its own history grows)."""
        info = workflow.info()
        length = info.get_current_history_length()
        return length > self._base and self._history.long(
            length, info.is_continue_as_new_suggested()
        )

    def _bounded(self) -> None:
        """Fail the run (`HistoryLimitError`) when its history reached the loop's limit while
        it drives between pauses, where it cannot continue as new."""
        length, limit = workflow.info().get_current_history_length(), self._history.fail_after
        if length >= limit:
            raise HistoryLimitError(length, self._run_id, limit)

    async def _first(self, clone: ReActLoop[Any], request: RunRequest) -> RunResult[Any]:
        history = () if request.history is None else decode_messages(request.history)
        context = {"run_id": request.run_id, "user_id": request.user_id}
        async with clone.stream(_said(request.text), history=history, **context) as events:
            return await self._drive(events)

    async def _resume(self, clone: ReActLoop[Any]) -> RunResult[Any]:
        decisions, self._decisions, self._decided = self._decisions, {}, False
        self._held = ()
        workflow.upsert_memo({STATUS: "running", PENDING: None})
        async with clone.resume_stream(self._run_id, decisions=decisions) as events:
            return await self._drive(events)

    async def _drive(self, events: RunStream[Any]) -> RunResult[Any]:
        """Drive the run to its end or pause, keeping each event it emits for the caller (a
        `RunFinished` as the journal's length then: its result is the journal's)."""
        self._live = events
        self._interrupted()
        try:
            async for event in events:
                self._events.append(unstructure_event(event, len(self._store.records)))
                self._bounded()
            result: RunResult[Any] = await events.result()
        finally:
            self._live = None
        return result

    async def _wait(self, result: RunResult[Any]) -> bool:
        """Hold the paused run until decisions arrive, or its earliest deadline passes (then
        it resumes with none: reactloop's expiry denies the calls past their deadline); True
        when, undecided, its history grew long enough to continue as new instead."""
        await self._mirrored()  # before the memo says paused: a paused run's mirror is whole
        self._held = tuple(result.pending)
        self._known = replay(self._store.records).call_ids
        held = CallsHeld(0, self._held)
        workflow.upsert_memo({STATUS: "paused", PENDING: unstructure_records([held])})
        deadlines = [p.expires_at for p in self._held if p.expires_at is not None]
        timeout = None
        if deadlines:
            timeout = timedelta(seconds=max(0.0, min(deadlines) - workflow.now().timestamp()))
        try:
            await workflow.wait_condition(
                lambda: self._decided or self._interrupt is not None or self._long(),
                timeout=timeout,
            )
        except TimeoutError:
            return False
        return await self._undecided()

    async def _undecided(self) -> bool:
        """Whether the run still waits for decisions once every handler finished (so none
        is lost when it continues as new)."""
        if self._decided or self._interrupt is not None:
            return False
        await workflow.wait_condition(workflow.all_handlers_finished)
        return not self._decided and self._interrupt is None

    async def _mirrored(self) -> None:
        """Copy the journal's records the mirror lacks to it (one activity; none without a
        mirror or new records). A copy that fails is left to the next one."""
        store, name = self._store, self._mirror
        if name is None or store.mirrored == len(store.records):
            return
        upto = len(store.records)
        new = encode_records(store.records[store.mirrored : upto])
        batch = MirrorBatch(name, self._run_id, store.mirrored, new, self._session)
        try:
            await workflow.execute_activity(
                mirror_activity(name),
                encode(batch),
                start_to_close_timeout=MIRROR_TIMEOUT,
                retry_policy=MIRROR_RETRY,
                summary="mirror",
            )
        except ActivityError as failure:
            workflow.logger.warning("run %s: the mirror copy failed: %s", self._run_id, failure)
            return
        store.mirrored = upto

    def _interrupted(self) -> None:
        """Pass an interrupt asked for to the run being driven."""
        if self._interrupt is not None and self._live is not None:
            self._live.interrupt(self._interrupt[0])

    @workflow.query(name="records")
    def records(self, after: int) -> bytes:
        """The journal's records after the first `after` (all of them for 0)."""
        return encode_records(self._store.records[after:])

    @workflow.query(name="events")
    def events(self, after: int) -> bytes:
        """The run's events after the first `after` (`_events` decodes them), and whether
        the run is paused (it holds calls and takes decisions now)."""
        return events_answer(self._events, after, bool(self._held) and not self._decided)

    @workflow.signal(name="interrupt")
    def interrupt(self, message: str | None) -> None:
        """Stop the run (`RunHandle.interrupt`): `message` becomes its output if given."""
        self._interrupt = (message,)
        self._interrupted()

    @workflow.update(name="decide")
    def decide(self, data: bytes) -> None:
        """Decisions for held calls, checked by the validator before they are accepted."""
        self._decisions.update(decode_decisions(data))
        self._decided = True

    @decide.validator
    def check(self, data: bytes) -> None:
        """Refuse decisions reactloop's `resume()` would refuse, before they enter history."""
        if not self._held or self._decided:
            raise ApplicationError("the run holds no calls", type=NOT_PAUSED, non_retryable=True)
        try:
            check_decisions(
                decode_decisions(data), self._held, self._known, self._tools, self._limit
            )
        except DecisionError as error:
            raise ApplicationError(
                error.message, error.call_id, error.rule, type=DECISION_ERROR, non_retryable=True
            ) from None

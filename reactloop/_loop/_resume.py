"""Durable runs: a new run's journal and session turns, and a stored run rebuilt to resume.

This is the glue between the loop and its store; phases only ever see `run.journal`.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

import orjson
from attrs import frozen

from reactloop._approval import (
    check_decisions,
    decisions_mapping,
    expired,
    journal_store,
    store_of_token,
)
from reactloop._core import (
    DecisionLike,
    GivenDecision,
    Message,
    RunContext,
    RunCreated,
    RunEnded,
    RunFinished,
    RunResult,
    RunStatus,
    RunStore,
    RunUnparked,
    StoredRun,
    UserMessage,
    repair_history,
    standing_of,
)
from reactloop._durable import Journal, Replayed, acquire, let_go, replay, resume_state
from reactloop._errors import ConfigurationError, ReactLoopError
from reactloop._loop._run import LoopConfig, Run
from reactloop._loop._sessions import SessionRead, read_session
from reactloop._stored_errors import MissingToolError, RunInProgressError, SessionBusyError
from reactloop._unicode import identifier
from reactloop._validate import reject_unknown

_busy: weakref.WeakKeyDictionary[RunStore, set[str]] = weakref.WeakKeyDictionary()
"""Sessions and runs in progress, per store (in this process)."""

Release = Callable[[], None]


def _claim(store: RunStore, key: str, busy_error: ReactLoopError) -> Release:
    busy = _busy.setdefault(store, set())
    if key in busy:
        raise busy_error
    busy.add(key)
    return lambda: busy.discard(key)


def claim_session(store: RunStore, session_id: str) -> Release:
    """Mark the session busy; `SessionBusyError` if a run of it is in progress already."""
    return _claim(store, f"session:{session_id}", SessionBusyError(session_id))


def claim_run(store: RunStore, run_id: str) -> Release:
    """Mark the run as driven here; `RunInProgressError` if it is already."""
    return _claim(store, f"run:{run_id}", RunInProgressError(run_id))


def _both(first: Release, second: Release | None) -> Release:
    def release() -> None:
        first()
        if second is not None:
            second()

    return release


@frozen
class Session:
    """The history a new run starts from, and how to free its session when the run is over."""

    history: tuple[Message, ...]
    release: Release | None = None
    standing: tuple[GivenDecision, ...] = ()  # the session's "always" decisions


async def enter_session(
    config: LoopConfig, history: tuple[Message, ...], context: Mapping[str, Any]
) -> Session:
    """With a store and a session id, the session's earlier turns are the history."""
    store, session_id = config.store, context.get("session_id")
    if store is None or session_id is None:
        return Session(history)
    if history:
        rule = "empty when session_id is given to a loop with a store (the session is the history)"
        raise ConfigurationError.invalid("history", history, rule)
    release = claim_session(store, session_id)
    try:
        read = await read_session(store, session_id, config.context_window)
        if read is None:
            turns = tuple(await store.session_history(session_id))
            standing = await _session_standing(store, session_id, config.holds_calls)
        else:
            turns, standing = read.history, _standing_of(read, session_id, config.holds_calls)
    except BaseException:
        release()
        raise
    return Session(turns, release, standing)


def _standing_of(
    read: SessionRead, session_id: str, holds_calls: bool
) -> tuple[GivenDecision, ...]:
    """`_session_standing` from the newest run a bounded read gave."""
    newest = read.newest
    if newest is not None and newest.status is RunStatus.PAUSED:
        raise SessionBusyError(session_id, newest.run_id)
    return read.standing if holds_calls else ()


async def _session_standing(
    store: RunStore, session_id: str, holds_calls: bool
) -> tuple[GivenDecision, ...]:
    """The session's "always" decisions (read when the loop may hold calls): each run carries
    those it inherited and adds its own, so the newest run holds them all. A session whose
    newest run is paused takes no new turn until that run is resumed (`SessionBusyError`)."""
    newest = await store.list_runs(session_id=session_id, limit=1)
    if not newest:
        return ()
    if newest[0].status is RunStatus.PAUSED:
        raise SessionBusyError(session_id, newest[0].run_id)
    if not holds_calls:
        return ()
    return replay((await store.load(newest[0].run_id)).records).session_wide


async def open_journal(run: Run, session: Session) -> None:
    """Record the new run in the store and give it a journal (nothing without a store)."""
    store, state = journal_store(run.config), run.state
    if store is None:
        return
    own_history = () if session.release is not None else tuple(state.messages[:-1])
    said = state.messages[-1]  # the run's input comes last
    said = said if isinstance(said, UserMessage) else UserMessage("")
    created = RunCreated(
        state.run_id,
        said.text,
        state.instructions,
        tuple(run.config.tools),
        time.time(),
        own_history,
        () if session.release is not None else tuple(state.repairs),
        run.context.user_id,
        run.context.session_id,
        session.standing,
        () if said.is_plain else said.parts,
    )
    state.standing.update((given.tool, given.decision) for given in session.standing)
    await store.create_run(created)
    run.journal = Journal(store, state, _both(claim_run(store, state.run_id), session.release))


@frozen
class Resumed:
    """A stored run ready to go on (`result` None), or a finished one and its stored result;
    `replayed` is its journal as read."""

    run: Run
    replayed: Replayed
    result: RunResult[Any] | None = None

    async def replay_result(self, run: Run, departure: object = None) -> RunResult:
        """What a stream of a finished run shows: its end, with the stored result."""
        assert self.result is not None
        await run.emit(RunFinished(self.result))
        return self.result


class ResumeOptions(TypedDict, total=False):
    """What `resume()` takes besides a run id: a paused run's signed `state` token instead of
    the id, `decisions` for its held calls, and `deps` (given again: never stored)."""

    state: str | None
    decisions: Mapping[str, DecisionLike]
    deps: Any


async def resume_any(config: LoopConfig, run_id: object, options: Mapping[str, Any]) -> Resumed:
    """`resume()`'s arguments: a run id, or a paused run's state token (not both)."""
    reject_unknown("resume()", options, ("state", "decisions", "deps"))
    state, given = options.get("state"), decisions_mapping(options.get("decisions"))
    context = {"deps": options["deps"]} if "deps" in options else {}
    if (run_id is None) == (state is None):
        rule = "given alone: resume(run_id) for a stored run, or resume(state=token)"
        raise ConfigurationError.invalid("run_id" if run_id is not None else "state", run_id, rule)
    if state is None:
        return await resume_run(config, run_id, context, given)
    store, token_run = await store_of_token(config, state)
    return await resume_run(config, token_run, context, given, store)


class NotClaimableError(Exception):
    """A run a worker round listed was no longer running once its lease was taken (another
    worker ended or parked it meanwhile): the round leaves it alone."""


async def resume_run(
    config: LoopConfig,
    run_id: object,
    context: Mapping[str, Any],
    decisions: Mapping[str, Any] | None = None,
    store: RunStore | None = None,
    *,
    claiming: bool = False,
) -> Resumed:
    """Rebuild a stored run for `resume()`: checks, one driver (in this process, and across
    workers by the run's lease, taken before the journal is read), session, state, and the
    decisions for its held calls (checked and journaled before anything runs). `store` is
    the loop's unless given (a paused run's state token brings its own). A worker round
    `claiming` the run goes on only with a run still running (else `NotClaimableError`); a
    resume by id also continues a parked run (journaling `RunUnparked` first)."""
    store = store or config.store
    if store is None:
        rule = "a run store (ReActLoop(..., store=SqliteStore('runs.db'))) to resume runs"
        raise ConfigurationError.invalid("store", None, rule)
    reject_unknown("resume()", context, ("deps",))
    run_id = identifier("run_id", run_id)
    release = claim_run(store, run_id)
    try:
        await acquire(store, run_id)
        try:
            resumed = await _resumed(config, store, run_id, context, release, claiming=claiming)
            await _decided(config, resumed, decisions or {})
        except BaseException:
            await let_go(store, run_id)
            raise
    except BaseException:
        release()
        raise
    if resumed.result is not None:
        release()
        await let_go(store, run_id)
    return resumed


async def _decided(config: LoopConfig, resumed: Resumed, decisions: Mapping[str, Any]) -> None:
    """Check the decisions against the run's held calls, add denials for expired ones, and
    journal them before the run goes on."""
    replayed, state = resumed.replayed, resumed.run.state
    pending = () if resumed.result is not None else replayed.stored.pending
    given = check_decisions(
        decisions, pending, replayed.call_ids, config.tools, config.max_result_chars
    )
    decided = {item.call_id for item in given}
    given += expired(pending, decided, config.approval.wall_clock())
    if not given:
        return
    for item in given:
        state.decisions[item.call_id] = item.decision
        if item.arguments is not None:
            state.decided_on[item.call_id] = item.arguments
        standing = standing_of(item)
        if standing is not None:
            state.standing[item.tool] = standing
    await resumed.run.journal.decisions(state, tuple(given))


async def _resumed(
    config: LoopConfig,
    store: RunStore,
    run_id: str,
    context: Mapping[str, Any],
    release: Release,
    *,
    claiming: bool = False,
) -> Resumed:
    """The stored run: its result if it finished, else the run to continue (a parked one
    unparked once nothing found stops it)."""
    replayed = replay((await store.load(run_id)).records)
    stored = replayed.stored
    if claiming and stored.status is not RunStatus.RUNNING:
        raise NotClaimableError(run_id)
    if stored.status is RunStatus.FINISHED:
        run = _rebuilt(config, store, replayed, (), context, release=None)
        return Resumed(run, replayed, stored_result(stored, run))
    missing = replayed.called - set(config.tools)
    if missing and config.toolsets is None:  # a toolset's tools are known once it is listed
        raise MissingToolError(run_id, sorted(missing), list(config.tools))
    if stored.status is RunStatus.PARKED:
        await store.append(run_id, [RunUnparked(time.time())])
    return await _continued(config, store, replayed, context, release)


async def _continued(
    config: LoopConfig,
    store: RunStore,
    replayed: Replayed,
    context: Mapping[str, Any],
    release: Release,
) -> Resumed:
    """The run to continue, with its session's earlier turns (the session claimed too)."""
    created = replayed.stored.created
    if created.session_id is None:
        return Resumed(_rebuilt(config, store, replayed, (), context, release=release), replayed)
    session = claim_session(store, created.session_id)
    release = _both(release, session)
    try:
        turns = await _earlier_turns(config, store, created.session_id, created.run_id)
    except BaseException:
        session()
        raise
    prefix = repair_history(turns).messages
    return Resumed(_rebuilt(config, store, replayed, prefix, context, release=release), replayed)


async def _earlier_turns(
    config: LoopConfig, store: RunStore, session_id: str, run_id: str
) -> tuple[Message, ...]:
    """The session's turns before run `run_id`, as far as its context window keeps them."""
    read = await read_session(store, session_id, config.context_window, before=run_id)
    if read is not None:
        return read.history
    return tuple(await store.session_history(session_id, before=run_id))


def _rebuilt(
    config: LoopConfig,
    store: RunStore,
    replayed: Replayed,
    prefix: Sequence[Message],
    context: Mapping[str, Any],
    *,
    release: Release | None,
) -> Run:
    created = replayed.stored.created
    state = resume_state(replayed, prefix, config.clock())
    run_context = RunContext(
        created.run_id, context.get("deps"), created.user_id, created.session_id
    )
    window = config.context_window.tracker() if config.context_window is not None else None
    run = Run(state, config, run_context, window=window, skip_start=bool(replayed.stored.steps))
    journal = run.journal = Journal(store, state, release)
    draft = state.resume_step
    if draft is not None and draft.recovered is not None:
        journal.recall(draft.recovered.results)
    return run


def _stored_output(ended: RunEnded, run: Run) -> Any:
    """The stored output: text, or a structured value rebuilt as the loop's output type."""
    if ended.output_json is None:
        return ended.output
    value = orjson.loads(ended.output_json)
    output = run.config.output
    return value if output is None else output.from_json(value)


def stored_result(stored: StoredRun, run: Run) -> RunResult[Any]:
    """The result of a finished stored run, as its journal recorded it."""
    ended = stored.ended
    assert ended is not None
    return RunResult(
        run_id=stored.run_id,
        output=_stored_output(ended, run),
        stop_reason=ended.stop_reason,
        stop_detail=ended.stop_detail,
        messages=stored.messages,
        steps=stored.steps,
        usage=ended.usage,
        tools_used=tuple(run.state.tools_used),
        duration=max(0.0, ended.ended_at - stored.created.created_at),
        user_message=ended.user_message,
        repairs=tuple(run.state.repairs),
        setup_usage=run.state.setup_usage,
        phase_data=dict(stored.phase_data),
        instructions=run.state.instructions,
    )

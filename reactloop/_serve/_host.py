"""The run host: runs live in the server's task group, not in the request that started them, so
a client may leave, reconnect, or answer a held call from another request (or another worker,
through the store) and each run is driven once.

Protocol-neutral: the HTTP layer reads requests into `ChatTurn`s and streams the `LiveRun`s this
returns; nothing here knows HTTP or a wire protocol.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from attrs import evolve

from reactloop._core import (
    Event,
    LeasingStore,
    Message,
    RunFinished,
    RunStatus,
    RunStore,
    StopReason,
    StoredRun,
)
from reactloop._errors import ConfigurationError, ReactLoopError
from reactloop._serve._access import asked_ids, authorized, not_pending, rejected
from reactloop._serve._contracts import AccessRequest, Action, ChatTurn, RunBackend, ServedStream
from reactloop._serve._errors import (
    MalformedRequestError,
    RequestRejectedError,
    TooManyRunsError,
    UnknownRunError,
)
from reactloop._serve._held import Held, HeldRuns, Target
from reactloop._serve._live import LiveRun
from reactloop._serve._options import DisconnectPolicy, ServeOptions
from reactloop._serve._replay import (
    JournalReader,
    before_pause,
    caught_up,
    follow_store,
    newest_of_session,
    replayed,
    stored_run,
)
from reactloop._stored_errors import (
    LeaseHeldError,
    RunInProgressError,
)

LOGGER = logging.getLogger("reactloop.serve")

Opener = Callable[[], AbstractAsyncContextManager[ServedStream]]
"""How a run's stream is opened: `loop.stream(...)` or `loop.resume_stream(...)`."""

RESUMABLE = frozenset(
    {
        StopReason.AWAITING_APPROVAL,
        StopReason.INTERRUPTED,
        StopReason.STREAM_CLOSED,
    }
)
"""How a run may stop here and go on elsewhere (resumed by another worker)."""

Where = tuple[str | None, str | None, str | None, Mapping[str, str]]  # session, run, owner, headers

NOT_RUNNING = (
    "RunHost.running() is not entered: runs need the server's task group (enter "
    "`async with host.running():`, which the ASGI lifespan does)"
)


class RunHost:
    """Drives a loop's runs for a server: new turns, approvals, reconnects, cancels, with the
    access checks and limits of `options`. Enter `running()` for the task group runs live in.
    """

    def __init__(self, loop: RunBackend, options: ServeOptions | None = None) -> None:
        self.loop = loop
        self.options = options if options is not None else ServeOptions()
        self.store: RunStore | None = loop.config.store
        default = DisconnectPolicy.KEEP_RUNNING if self.store else DisconnectPolicy.INTERRUPT
        self.on_disconnect = self.options.on_disconnect or default
        self._tasks: TaskGroup | None = None
        self._runs: dict[str, LiveRun] = {}  # each run's newest LiveRun in this process
        self._following: dict[str, tuple[LiveRun, anyio.CancelScope]] = {}
        self._sessions: dict[str, str] = {}  # each session's newest run started here
        self._driving: dict[str, set[LiveRun]] = {}  # by the user who started the driving
        self._ended: deque[LiveRun] = deque()  # in the order they ended, for eviction
        self._held = HeldRuns()  # paused runs' tokens, without a store

    @asynccontextmanager
    async def running(self) -> AsyncIterator[RunHost]:
        """The task group runs live in; leaving it cancels the runs still going."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            try:
                yield self
            finally:
                self._tasks = None
                tasks.cancel_scope.cancel()

    # -- the API the HTTP layer calls --------------------------------------------------------

    async def submit(self, turn: ChatTurn, user: str, headers: Mapping[str, str]) -> LiveRun:
        """Answer a turn: resume the paused run its decisions are for, or start a new run (or
        attach to the run its `run_id` names, if that run exists: a retried request)."""
        self._evict()
        asked_ids(run_id=turn.run_id, session_id=turn.session_id)
        if turn.decisions:
            return await self._decide(turn, user, headers)
        return await self._start(turn, user, headers)

    async def find(self, run_id: str, user: str, headers: Mapping[str, str]) -> LiveRun | None:
        """The run to stream: live here, else replayed from the store (and followed while
        another worker drives it); None when no run has that id."""
        self._evict()
        asked_ids(run_id=run_id)
        live = self._runs.get(run_id) or self._followed(run_id)
        if live is None or await self._went_on(live):
            return await self._from_store(run_id, user, headers)
        await self._allow(user, Action.READ, live.session_id, live.run_id, live.owner, headers)
        return live

    async def _went_on(self, live: LiveRun) -> bool:
        """True when a run paused or interrupted here was taken on by another worker since."""
        result = live.result
        if not live.done or self.store is None or result is None:
            return False
        if result.stop_reason not in RESUMABLE:
            return False
        stored = await self._load(live.run_id)
        if stored is None:
            return False
        moved = stored.status is RunStatus.RUNNING or stored.stop_reason is not result.stop_reason
        return moved or len(stored.steps) != len(result.steps)

    async def session_run(
        self, session_id: str, user: str, headers: Mapping[str, str]
    ) -> LiveRun | None:
        """The session's newest run while it is still streaming (here or on another worker);
        None when there is none."""
        self._evict()
        asked_ids(session_id=session_id)
        run_id = self._sessions.get(session_id)
        live = None if run_id is None else self._runs.get(run_id)
        if live is not None and not live.done:
            await self._allow(user, Action.READ, session_id, run_id, live.owner, headers)
            return live
        if self.store is None:
            return None
        newest = await self.store.list_runs(session_id=session_id, limit=1)
        if not newest or newest[0].status is not RunStatus.RUNNING:
            return None
        found = await self.find(newest[0].run_id, user, headers)
        return found if found is not None and not found.done else None

    async def session_messages(
        self, session_id: str, user: str, headers: Mapping[str, str]
    ) -> tuple[Message, ...]:
        """The session's stored messages (its turns so far); empty without a store."""
        asked_ids(session_id=session_id)
        if self.store is None:
            return ()
        owner = await self._session_owner(session_id)
        await self._allow(user, Action.READ, session_id, None, owner, headers)
        return tuple(await self.store.session_history(session_id))

    async def cancel(self, run_id: str, user: str, headers: Mapping[str, str]) -> None:
        """Stop a run this process drives at its next safe point (its stream goes on to its
        end); a run that has ended is left as it is. `UnknownRunError` for no such run; a 409
        for a run another worker drives (a cancel reaches only the worker driving the run)."""
        self._evict()
        asked_ids(run_id=run_id)
        live = self._runs.get(run_id)
        stored = None if live is not None else await self._load(run_id)
        if live is not None:
            owner, session_id = live.owner, live.session_id
        elif stored is not None:
            owner, session_id = stored.created.user_id, stored.created.session_id
        else:
            raise UnknownRunError(f"run {run_id!r} is not known", rule="an existing run id")
        await self._allow(user, Action.CANCEL, session_id, run_id, owner, headers)
        if live is not None:
            live.interrupt()
        elif stored is not None and stored.status is RunStatus.RUNNING:
            rule = "a cancel sent to the worker that drives the run (or a run that has stopped)"
            message = f"run {run_id!r} is driven by another worker: it cannot be stopped from here"
            raise RequestRejectedError(message, rule=rule, status=409)

    def attach(self, live: LiveRun) -> None:
        """A client streams `live`."""
        live.subscribers += 1

    def abandoned(self, live: LiveRun) -> None:
        """A request for `live` ended before it could stream it (its response failed first): as
        a client that attached and went away."""
        self.attach(live)
        self.detach(live, disconnected=True)

    def detach(self, live: LiveRun, *, disconnected: bool) -> None:
        """A client stopped streaming `live` (`disconnected`: it went away before the end). When
        the last one leaves on a disconnect, `on_disconnect` INTERRUPT stops the run; a replay
        nobody streams any more stops reading the store."""
        live.subscribers = max(0, live.subscribers - 1)
        if live.subscribers or live.done:
            return
        following = self._following.get(live.run_id)
        if following is not None and following[0] is live:
            del self._following[live.run_id]
            following[1].cancel()
        elif disconnected and self.on_disconnect is DisconnectPolicy.INTERRUPT:
            live.interrupt()

    # -- new turns ----------------------------------------------------------------------------

    async def _start(self, turn: ChatTurn, user: str, headers: Mapping[str, str]) -> LiveRun:
        """A new run of the turn, or the existing run its `run_id` names (a retried request)."""
        if not turn.content:
            rule = "a turn with content (the user's message) or decisions for held calls"
            raise MalformedRequestError("the turn has no content and no decisions", rule=rule)
        owner = await self._session_owner(turn.session_id)
        await self._allow(user, Action.START, turn.session_id, turn.run_id, owner, headers)
        if turn.run_id is not None:
            existing = await self.find(turn.run_id, user, headers)
            if existing is not None:
                return existing
            await self._not_held(turn.run_id, user, headers)
        run_id = turn.run_id or os.urandom(16).hex()
        live = self._runs.get(run_id)  # started meanwhile by a request like this one
        if live is not None:
            return live
        self._not_paused(turn.session_id)
        live = self._reserve(run_id, turn.session_id, user, user)
        history = turn.history if self.store is None else ()

        def opener() -> AbstractAsyncContextManager[ServedStream]:
            return self.loop.stream(
                list(turn.content),
                run_id=run_id,
                session_id=turn.session_id,
                user_id=user,
                history=history,
            )

        return await self._launch(live, opener, user, headers)

    async def _not_held(self, run_id: str, user: str, headers: Mapping[str, str]) -> None:
        """A run id a paused run holds (no store, its events evicted) starts nothing: another
        user's is a 403, one's own a 409 (its held calls are answered to go on), so a chosen
        id never takes over a paused run's held token."""
        target = self._held.target(run_id) if self.store is None else None
        if target is None:
            return
        await self._allow(user, Action.READ, target.session_id, run_id, target.owner, headers)
        rule = "a new run id (this one names a paused run: answer its held calls to go on)"
        message = f"run {run_id!r} exists and waits on its held calls"
        raise RequestRejectedError(message, rule=rule, status=409)

    def _not_paused(self, session_id: str | None) -> None:
        """Without a store, a session whose newest run is paused takes no new turn (a store's
        rule too): its held calls are answered first, so a thread's answers (AG-UI's resume
        names only the thread) always reach the run that holds them."""
        if self.store is not None or session_id is None:
            return
        newest = self._sessions.get(session_id) or self._held.newest(session_id)
        target = None if newest is None else self._held.target(newest)
        if target is not None and target.pending:
            rule = "one turn at a time per session: wait for its run, or answer its held calls"
            message = f"session {session_id!r} has a paused run ({newest}) waiting for decisions"
            raise RequestRejectedError(message, rule=rule, status=409)

    def _reserve(
        self, run_id: str, session_id: str | None, owner: str | None, user: str
    ) -> LiveRun:
        """The LiveRun of a run about to be driven here, registered at once (no await between
        the check that it is not here and this), so a concurrent request attaches to it."""
        streaming = len(self._driving.get(user, ()))
        limit = self.options.max_runs_per_user
        if streaming >= limit:
            rule = f"at most {limit} runs streaming at once per user (max_runs_per_user)"
            raise TooManyRunsError(f"user {user!r} has {streaming} runs streaming", rule=rule)
        live = LiveRun(run_id, session_id=session_id, owner=owner)
        self._driving.setdefault(user, set()).add(live)
        self._runs[run_id] = live
        if session_id is not None:
            self._sessions[session_id] = run_id
        return live

    async def _launch(
        self,
        live: LiveRun,
        opener: Opener,
        user: str,
        headers: Mapping[str, str],
        since: int = 0,
    ) -> LiveRun:
        """Drive `live`'s run in the task group; errors raised before its stream opened come out
        here as what the request did wrong. A run another worker drives is followed instead
        (`since`: the journal's length when the request was checked; it grows past it)."""
        try:
            await self._group().start(self._drive, live, opener, user)
        except (RunInProgressError, LeaseHeldError):
            self._forget(live)
            found = await self._from_store(live.run_id, user, headers, since=since)
            if found is None:
                raise
            return found
        except BaseException as error:
            self._forget(live)
            refusal = rejected(error)
            if refusal is None:
                raise
            raise refusal from error
        return live

    async def _drive(
        self,
        live: LiveRun,
        opener: Opener,
        user: str,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Feed `live` its run's events; errors before the stream opened go to `_launch`."""
        started = False
        try:
            async with opener() as events:
                live.stream = events
                task_status.started()
                started = True
                async for event in events:
                    if isinstance(event, RunFinished) and len(live.events) == live.resumed_at:
                        await caught_up(self.store, live)
                    live.append(self._noted(live, event))
        except Exception as error:
            if not started:  # the request's error; one that attached meanwhile reads it
                live.error = rejected(error) or error
                raise
            LOGGER.exception("run %s failed while streaming", live.run_id)
            live.end(self.options.clock(), error)
        finally:
            self._settle(live, user)

    def _noted(self, live: LiveRun, event: Event) -> Event:
        """The event as clients see it: a paused run's state token is kept here, never sent."""
        if not isinstance(event, RunFinished):
            return event
        result = event.result
        if self.store is None:
            self._held.ended(live.run_id, live.owner, live.session_id, result)
        return RunFinished(evolve(result, state=None)) if result.state is not None else event

    def _settle(self, live: LiveRun, user: str) -> None:
        """The run's driver is done: the LiveRun ends and waits `keep_events_seconds`."""
        live.end(self.options.clock())
        driving = self._driving.get(user)
        if driving is not None:
            driving.discard(live)
            if not driving:
                del self._driving[user]
        if self._runs.get(live.run_id) is live:
            self._ended.append(live)

    def _forget(self, live: LiveRun) -> None:
        """A run that never started: no trace of it stays."""
        if self._runs.get(live.run_id) is live:
            del self._runs[live.run_id]
        live.end(self.options.clock())

    # -- decisions for held calls --------------------------------------------------------------

    async def _decide(self, turn: ChatTurn, user: str, headers: Mapping[str, str]) -> LiveRun:
        """Resume the paused run the decisions are for; a repeat of decisions already applied
        gives the run as it is (each approved call runs once)."""
        target = await self._target(turn)
        await self._allow(
            user, Action.APPROVE, target.session_id, target.run_id, target.owner, headers
        )
        if turn.session_id is not None and target.session_id != turn.session_id:
            why = f"the run is of another session than {turn.session_id!r}"
            raise not_pending(target.run_id, frozenset(turn.decisions), why)
        asked = frozenset(turn.decisions)
        live = self._runs.get(target.run_id)
        if live is not None and asked <= live.decided:
            return live  # the same answer again, while (or after) it is applied
        if live is not None and not live.done:
            raise not_pending(target.run_id, asked, "the run is streaming, not paused")
        unknown = asked - target.pending - target.settled
        if unknown:
            raise not_pending(target.run_id, unknown, "the run does not hold these calls")
        if not asked & target.pending:
            return await self._as_is(target.run_id, user, headers)
        return await self._resume(target, turn, user, headers)

    async def _target(self, turn: ChatTurn) -> Target:
        """The run the decisions are for (its id, else the session's newest) and its calls."""
        run_id = turn.run_id
        if run_id is None and turn.session_id is not None:
            run_id = await self._newest_run(turn.session_id)
        if run_id is None:
            rule = "decisions for a known run (its run id, or a session that has a paused run)"
            raise UnknownRunError("the decisions name no run this server knows", rule=rule)
        if self.store is None:
            live = self._runs.get(run_id)
            target = self._held.target(run_id)
            if target is None and live is not None:  # streaming, never paused: holds nothing
                target = Target(run_id, live.owner, live.session_id, frozenset(), frozenset())
        else:
            stored = await self._load(run_id)
            target = None if stored is None else Target.of_stored(stored)
        if target is None:
            raise UnknownRunError(f"run {run_id!r} is not known", rule="an existing run id")
        return target

    async def _as_is(self, run_id: str, user: str, headers: Mapping[str, str]) -> LiveRun:
        """The run a repeated answer is for, as it stands: live here, or (another worker
        resumed it) from the store."""
        if self.store is None:
            live = self._runs.get(run_id)
        else:
            live = await self._from_store(run_id, user, headers)
        if live is None:
            raise not_pending(run_id, frozenset(), "its calls were decided already")
        return live

    async def _resume(
        self, target: Target, turn: ChatTurn, user: str, headers: Mapping[str, str]
    ) -> LiveRun:
        """Drive the run on with the decisions (without a store, from the token held here,
        taken before any await so a concurrent answer cannot resume it a second time)."""
        decisions = dict(turn.decisions)
        held: Held | None = None
        if self.store is None:
            held = self._held.take(target.run_id)
            if held is None:  # another request took it since: it resumes the run
                return await self._as_is(target.run_id, user, headers)

        def opener() -> AbstractAsyncContextManager[ServedStream]:
            if held is not None:
                return self.loop.resume_stream(state=held.token, decisions=decisions)
            return self.loop.resume_stream(target.run_id, decisions=decisions)

        reader = JournalReader()
        earlier = self._earlier(target, reader)
        try:
            live = self._reserve(target.run_id, target.session_id, target.owner, user)
            live.decided = frozenset(decisions)
            live.resume_after(earlier, turn.client_run_id, reader)
            return await self._launch(live, opener, user, headers, target.records)
        except BaseException:
            if held is not None:
                self._held.put_back(held)
            raise

    def _earlier(self, target: Target, reader: JournalReader) -> list[Event]:
        """The paused run's events before its pause, which its resumed stream starts with: from
        its journal (read by `reader`), or (no store) from its stream here."""
        if target.stored is not None:
            return before_pause(reader.read(target.stored))
        previous = self._runs.get(target.run_id)
        return before_pause(previous.events) if previous is not None else []

    # -- runs of the store -------------------------------------------------------------------

    async def _from_store(
        self, run_id: str, user: str, headers: Mapping[str, str], *, since: int = 0
    ) -> LiveRun | None:
        """A stored run replayed, and followed while it runs, or until its journal grows past
        `since` records and it stops (one follower per run here)."""
        stored = await self._load(run_id)
        if stored is None:
            return None
        created = stored.created
        await self._allow(user, Action.READ, created.session_id, run_id, created.user_id, headers)
        following = self._followed(run_id)
        if following is not None:
            return following
        if not since and stored.status is RunStatus.RUNNING:
            taken = await self._take_over(stored, user, headers)
            if taken is not None:
                return taken
        reader = JournalReader()
        expecting = len(stored.records) <= since
        live = replayed(stored, reader, hold_end=expecting)
        if not expecting and stored.status is not RunStatus.RUNNING:
            live.end(self.options.clock())
            return live
        scope = anyio.CancelScope()
        self._following[run_id] = (live, scope)
        self._group().start_soon(self._follow, live, reader, scope, since)
        return live

    async def _take_over(
        self, stored: StoredRun, user: str, headers: Mapping[str, str]
    ) -> LiveRun | None:
        """A running run no live worker holds (its worker died: the store's lease is free),
        resumed here so its clients get the rest; its lease decides, so a run another worker
        drives (or takes first) is followed instead. None when this worker cannot drive it."""
        run_id, created = stored.run_id, stored.created
        current = self._runs.get(run_id)
        if current is not None and not current.done:
            return current  # taken over here meanwhile, by a request like this one
        if not isinstance(self.store, LeasingStore):
            return None
        try:
            live = self._reserve(run_id, created.session_id, created.user_id, user)
        except TooManyRunsError:
            return None
        reader = JournalReader()
        live.resume_after(reader.read(stored), None, reader)

        def opener() -> AbstractAsyncContextManager[ServedStream]:
            return self.loop.resume_stream(run_id)

        try:
            return await self._launch(live, opener, user, headers, len(stored.records))
        except ReactLoopError as error:
            LOGGER.warning("run %s cannot be taken over here: %s", run_id, error)
            return None

    async def _follow(
        self, live: LiveRun, reader: JournalReader, scope: anyio.CancelScope, since: int
    ) -> None:
        """Follow a run another worker drives (`follow_store`) until it stops or no one reads."""
        assert self.store is not None
        try:
            with scope:
                await follow_store(
                    self.store,
                    live,
                    reader,
                    interval=self.options.follow_interval,
                    clock=self.options.clock,
                    since=since,
                )
        except Exception:
            LOGGER.exception("following run %s in the store failed", live.run_id)
        finally:
            live.end(self.options.clock())
            if self._following.get(live.run_id, (None,))[0] is live:
                del self._following[live.run_id]

    def _followed(self, run_id: str) -> LiveRun | None:
        return self._following.get(run_id, (None,))[0]

    async def _load(self, run_id: str) -> Any:
        """The stored run, or None (no store, or no such run)."""
        return None if self.store is None else await stored_run(self.store, run_id)

    async def _newest_run(self, session_id: str) -> str | None:
        if self.store is None:
            return self._sessions.get(session_id) or self._held.newest(session_id)
        newest = await newest_of_session(self.store, session_id)
        return None if newest is None else newest.run_id

    async def _session_owner(self, session_id: str | None) -> str | None:
        """Who a session belongs to: the user of its newest run (None for a new session)."""
        if session_id is None:
            return None
        if self.store is None:
            run_id = self._sessions.get(session_id)
            live = None if run_id is None else self._runs.get(run_id)
            return live.owner if live is not None else self._held.owner_of_session(session_id)
        newest = await newest_of_session(self.store, session_id)
        return None if newest is None else newest.user_id

    # -- access, limits, housekeeping --------------------------------------------------------

    async def _allow(self, user: str, action: Action, *where: *Where) -> None:
        """`ForbiddenError` unless the `authorize` hook lets `user` do `action` (`Where`)."""
        await authorized(self.options, AccessRequest(user, action, *where))

    def _group(self) -> TaskGroup:
        if self._tasks is None:
            raise ConfigurationError(NOT_RUNNING, option="RunHost.running", rule=NOT_RUNNING)
        return self._tasks

    def _evict(self) -> None:
        """Drop finished runs kept past `keep_events_seconds` (by `options.clock`), oldest
        first: done lazily on access, so no task sleeps for it."""
        horizon = self.options.clock() - self.options.keep_events_seconds
        ended = self._ended
        while ended and (ended[0].finished_at or 0.0) <= horizon:
            live = ended.popleft()
            if self._runs.get(live.run_id) is not live:
                continue
            del self._runs[live.run_id]
            self._held.forget(live.run_id)
            session_id = live.session_id
            if session_id is not None and self._sessions.get(session_id) == live.run_id:
                del self._sessions[session_id]

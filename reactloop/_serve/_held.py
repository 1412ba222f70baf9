"""Which calls a paused run holds, as the host checks decisions against them: from the store's
journal, or (a loop without a store) from what this process saw, with the run's state token kept
here and never sent to a client."""

from __future__ import annotations

from typing import Any

from attrs import evolve, field, frozen

from reactloop._core import CallsHeld, RunResult, RunStatus, StoredRun


@frozen
class Target:
    """A run decisions may be for: whose it is, the calls it holds now (`pending`) and those it
    held before and were decided (`settled`: a repeated answer for one is ignored)."""

    run_id: str
    owner: str | None
    session_id: str | None
    pending: frozenset[str]
    settled: frozenset[str]
    records: int = 0  # the journal's length when it was read (0 without a store)
    stored: StoredRun | None = field(default=None, eq=False, repr=False)  # that journal

    @classmethod
    def of_stored(cls, stored: StoredRun) -> Target:
        """The target as the run's journal has it."""
        held = frozenset(
            pending.call_id
            for record in stored.records
            if isinstance(record, CallsHeld)
            for pending in record.pending
        )
        paused = stored.status is RunStatus.PAUSED
        pending = frozenset(p.call_id for p in stored.pending) if paused else frozenset()
        created = stored.created
        settled = held - pending
        return cls(
            stored.run_id,
            created.user_id,
            created.session_id,
            pending,
            settled,
            len(stored.records),
            stored,
        )


@frozen
class Held:
    """A run without a store, as this process saw it end: its token while it is paused and not
    being resumed (None otherwise), the calls it holds and those decided before."""

    run_id: str
    owner: str | None
    session_id: str | None
    token: str | None
    pending: frozenset[str]
    settled: frozenset[str]


class HeldRuns:
    """The paused runs of a loop without a store, by run id (and each session's newest)."""

    def __init__(self) -> None:
        self._runs: dict[str, Held] = {}
        self._sessions: dict[str, str] = {}

    def ended(
        self, run_id: str, owner: str | None, session: str | None, result: RunResult[Any]
    ) -> None:
        """A run this process drove ended: paused (its token kept), or for good."""
        before = self._runs.get(run_id)
        settled = frozenset() if before is None else before.settled | before.pending
        pending = (
            frozenset(call.call_id for call in result.pending) if result.paused else frozenset()
        )
        token = result.state if result.paused else None
        self._runs[run_id] = Held(run_id, owner, session, token, pending, settled - pending)
        if session is not None:
            self._sessions[session] = run_id

    def target(self, run_id: str) -> Target | None:
        """The run's calls: none pending while its token is taken (being resumed) or it ended."""
        held = self._runs.get(run_id)
        if held is None:
            return None
        if held.token is None:
            settled = held.settled | held.pending
            return Target(run_id, held.owner, held.session_id, frozenset(), settled)
        return Target(run_id, held.owner, held.session_id, held.pending, held.settled)

    def take(self, run_id: str) -> Held | None:
        """The paused run with its token, which no one else can take until it is put back."""
        held = self._runs.get(run_id)
        if held is None or held.token is None:
            return None
        self._runs[run_id] = evolve(held, token=None)
        return held

    def put_back(self, held: Held) -> None:
        """A resume that never started: the token is the run's again."""
        self._runs[held.run_id] = held

    def newest(self, session_id: str) -> str | None:
        """The session's newest run this process saw end."""
        return self._sessions.get(session_id)

    def owner_of_session(self, session_id: str) -> str | None:
        """Who the session's newest run belongs to (None when none ended here)."""
        run_id = self._sessions.get(session_id)
        held = None if run_id is None else self._runs.get(run_id)
        return None if held is None else held.owner

    def forget(self, run_id: str) -> None:
        """Drop a run that ended for good (no token left to keep)."""
        held = self._runs.get(run_id)
        if held is not None and held.token is None:
            del self._runs[run_id]
            if held.session_id is not None and self._sessions.get(held.session_id) == run_id:
                del self._sessions[held.session_id]

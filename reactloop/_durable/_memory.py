"""`MemoryStore`: the run store contract in process memory, for tests and short-lived programs.

Records are kept encoded, exactly as a database would hold them, so a test on `MemoryStore`
proves the same round trip as one on `SqliteStore`; content parts' bytes are kept apart, each
distinct content once across runs (adr/0028), and forgotten with the last run that holds them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from attrs import define, field

from reactloop._core import (
    Message,
    Record,
    RunCreated,
    RunStatus,
    RunSummary,
    SessionTurn,
    StoredRun,
    status_after,
)
from reactloop._durable._codec import decode, encode_apart
from reactloop._durable._replay import replay
from reactloop._durable._turns import turn_of
from reactloop._stored_errors import RunExistsError, RunNotFoundError
from reactloop._unicode import checked_ids
from reactloop._validate import integer


@define
class _Entry:
    created: RunCreated
    status: RunStatus
    updated_at: float
    records: list[bytes] = field(factory=list)
    blobs: set[str] = field(factory=set)  # the digests its records refer to
    turn: tuple[int, SessionTurn] | None = None  # decoded as a session turn, at this many records

    def summary(self) -> RunSummary:
        created = self.created
        return RunSummary(
            created.run_id,
            self.status,
            created.created_at,
            self.updated_at,
            created.user_id,
            created.session_id,
        )


class MemoryStore:
    """Runs kept in this process's memory (lost when it exits); same contract as `SqliteStore`."""

    def __init__(self) -> None:
        self._runs: dict[str, _Entry] = {}
        self._blobs: dict[str, bytes] = {}  # content parts' bytes by digest, each once
        self._sessions: dict[str, list[str]] = {}  # each session's run ids, oldest first

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._runs)} runs)"

    async def create_run(self, created: RunCreated) -> None:
        """Record a new run and its `RunCreated` record; `RunExistsError` for an id in use."""
        checked_ids(run_id=created.run_id, user_id=created.user_id, session_id=created.session_id)
        if created.run_id in self._runs:
            raise RunExistsError(created.run_id)
        body, blobs = encode_apart(created)
        entry = _Entry(created, RunStatus.RUNNING, time.time(), [body])
        self._keep(entry, blobs)
        self._runs[created.run_id] = entry
        if created.session_id is not None:
            self._sessions.setdefault(created.session_id, []).append(created.run_id)

    async def append(self, run_id: str, records: Sequence[Record]) -> None:
        """Append `records` to the run's journal, all or none."""
        checked_ids(run_id=run_id)
        entry = self._entry(run_id)
        encoded = [encode_apart(record) for record in records]
        entry.records.extend(body for body, _ in encoded)
        for _, blobs in encoded:
            self._keep(entry, blobs)
        status = status_after(list(records))
        if status is not entry.status:
            entry.status, entry.updated_at = status, time.time()

    async def load(self, run_id: str) -> StoredRun:
        """The stored run rebuilt from its journal; `RunNotFoundError` for an unknown id."""
        checked_ids(run_id=run_id)
        return replay([decode(data, self._blobs) for data in self._entry(run_id).records]).stored

    async def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 100,
    ) -> list[RunSummary]:
        """Runs matching every filter given, newest first, at most `limit`."""
        checked_ids(session_id=session_id, user_id=user_id)
        found = [
            entry.summary()
            for entry in reversed(self._runs.values())
            if (status is None or entry.status == status)
            and (session_id is None or entry.created.session_id == session_id)
            and (user_id is None or entry.created.user_id == user_id)
            and (since is None or entry.created.created_at >= since)
            and (until is None or entry.created.created_at < until)
        ]
        return found[:limit]

    async def delete_run(self, run_id: str) -> bool:
        """Forget a run; False if there was none with that id."""
        checked_ids(run_id=run_id)
        entry = self._runs.pop(run_id, None)
        self._forget_blobs([] if entry is None else [entry])
        session = None if entry is None else entry.created.session_id
        if session is not None:
            self._sessions[session].remove(run_id)
        return entry is not None

    async def delete_session(self, session_id: str) -> int:
        """Forget every run of a session; how many there were."""
        checked_ids(session_id=session_id)
        doomed = self._sessions.pop(session_id, [])
        self._forget_blobs([self._runs.pop(key) for key in doomed])
        return len(doomed)

    async def session_history(self, session_id: str, *, before: str | None = None) -> list[Message]:
        """The session's turns in order (every run's own messages), up to run `before`."""
        checked_ids(session_id=session_id, before=before)
        messages: list[Message] = []
        ids, stop = self._session_ids(session_id, before)
        for key in ids[:stop]:
            messages.extend((await self.load(key)).messages)
        return messages

    async def session_turns(
        self,
        session_id: str,
        *,
        before: str | None = None,
        limit: int = 100,
        oldest: bool = False,
    ) -> list[SessionTurn]:
        """A page of the session's runs before run `before`: the newest `limit`, newest first
        (the oldest, oldest first, with `oldest=True`)."""
        checked_ids(session_id=session_id, before=before)
        integer("limit", limit)
        ids, stop = self._session_ids(session_id, before)
        page = ids[: min(limit, stop)] if oldest else ids[max(0, stop - limit) : stop][::-1]
        return [self._turn(key) for key in page]

    def _session_ids(self, session_id: str, before: str | None) -> tuple[list[str], int]:
        """The session's run ids, oldest first, and how many come before run `before` (all if
        it is none of the store's; a run of another session counts by when it was created).
        Searched from the newest end: a page read from there costs what it reads."""
        ids = self._sessions.get(session_id, [])
        if before is None or before not in self._runs:
            return ids, len(ids)
        for position in range(len(ids) - 1, -1, -1):
            if ids[position] == before:
                return ids, position
        order = {key: index for index, key in enumerate(self._runs)}
        return ids, sum(1 for key in ids if order[key] < order[before])

    def _turn(self, run_id: str) -> SessionTurn:
        """The run as a session turn, decoded again only when its journal grew since."""
        entry = self._runs[run_id]
        if entry.turn is None or entry.turn[0] != len(entry.records):
            entry.turn = (len(entry.records), turn_of(entry.records, self._blobs))
        return entry.turn[1]

    async def aclose(self) -> None:
        """Nothing to release."""

    def _keep(self, entry: _Entry, blobs: dict[str, bytes]) -> None:
        """Keep a record's blobs (a content already kept is not kept twice)."""
        for digest, data in blobs.items():
            self._blobs.setdefault(digest, data)
        entry.blobs.update(blobs)

    def _forget_blobs(self, gone: list[_Entry]) -> None:
        """Forget the blobs of deleted runs that no remaining run refers to."""
        doomed = set().union(*(entry.blobs for entry in gone))
        for entry in self._runs.values():
            doomed -= entry.blobs
        for digest in doomed:
            del self._blobs[digest]

    def _entry(self, run_id: str) -> _Entry:
        entry = self._runs.get(run_id)
        if entry is None:
            raise RunNotFoundError(run_id)
        return entry

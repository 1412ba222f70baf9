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
    StoredRun,
    status_after,
)
from reactloop._durable._codec import decode, encode_apart
from reactloop._durable._replay import replay
from reactloop._stored_errors import RunExistsError, RunNotFoundError
from reactloop._unicode import checked_ids


@define
class _Entry:
    created: RunCreated
    status: RunStatus
    updated_at: float
    records: list[bytes] = field(factory=list)
    blobs: set[str] = field(factory=set)  # the digests its records refer to

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
        return entry is not None

    async def delete_session(self, session_id: str) -> int:
        """Forget every run of a session; how many there were."""
        checked_ids(session_id=session_id)
        doomed = [key for key, e in self._runs.items() if e.created.session_id == session_id]
        self._forget_blobs([self._runs.pop(key) for key in doomed])
        return len(doomed)

    async def session_history(self, session_id: str, *, before: str | None = None) -> list[Message]:
        """The session's turns in order (every run's own messages), up to run `before`."""
        checked_ids(session_id=session_id, before=before)
        messages: list[Message] = []
        for key, entry in list(self._runs.items()):
            if key == before:
                break
            if entry.created.session_id == session_id:
                messages.extend((await self.load(key)).messages)
        return messages

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

"""Paused runs without a store: their journal is kept in memory and handed out as a signed state
token (`RunResult.state`), and a token given back to `resume(state=...)` becomes a store again.

With a store, a token is checked against the stored run: only the token of its current pause is
accepted, so an old token cannot be replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from reactloop._approval._sealing import ENV_VAR, open_token, seal, unseal
from reactloop._core import (
    Message,
    Record,
    RunCreated,
    RunResult,
    RunStore,
    RunSummary,
    StopReason,
    StoredRun,
)
from reactloop._durable import Journal, replay
from reactloop._errors import ConfigurationError
from reactloop._stored_errors import RunNotFoundError, StateTokenError, StateTokenReason

if TYPE_CHECKING:
    from reactloop._loop import LoopConfig, Run


class KeptRecords:
    """The journal of one storeless run that may pause, kept as the record objects themselves
    (records are frozen: nothing is encoded until a token is sealed). A `RunStore` for that run
    alone: it lists nothing and has no sessions."""

    def __init__(self) -> None:
        self._records: dict[str, list[Record]] = {}

    async def create_run(self, created: RunCreated) -> None:
        """Start the run's journal."""
        self._records[created.run_id] = [created]

    async def append(self, run_id: str, records: Sequence[Record]) -> None:
        """Add records to the run's journal."""
        self._journal(run_id).extend(records)

    async def load(self, run_id: str) -> StoredRun:
        """The run as its journal rebuilds it."""
        return replay(self._journal(run_id)).stored

    async def list_runs(self, **filters: Any) -> list[RunSummary]:
        """Nothing: a kept journal is not a store to browse."""
        return []

    async def delete_run(self, run_id: str) -> bool:
        """Forget the run."""
        return self._records.pop(run_id, None) is not None

    async def delete_session(self, session_id: str) -> int:
        """No sessions here."""
        return 0

    async def session_history(self, session_id: str, *, before: str | None = None) -> list[Message]:
        """No sessions here."""
        return []

    async def aclose(self) -> None:
        """Nothing to release."""

    def _journal(self, run_id: str) -> list[Record]:
        journal = self._records.get(run_id)
        if journal is None:
            raise RunNotFoundError(run_id)
        return journal


def journal_store(config: LoopConfig) -> RunStore | None:
    """Where a new run's journal goes: the loop's store; without one, kept in memory when the run
    may pause (its token is sealed from that journal); else nowhere."""
    if config.store is not None:
        return config.store
    return KeptRecords() if config.holds_calls else None


async def with_state(run: Run, result: RunResult) -> RunResult:
    """A paused run's result with its signed state token (when the loop holds a key)."""
    keys, journal = run.config.state_keys, run.journal
    if result.stop_reason is not StopReason.AWAITING_APPROVAL or keys is None:
        return result
    if not isinstance(journal, Journal):
        return result
    records = (await journal.store.load(journal.run_id)).records
    at, cap = run.config.approval.wall_clock(), run.config.max_state_token_bytes
    kept = run.config.store is not None  # the token is checked against the stored run
    token = seal(records, keys, issued_at=at, max_bytes=cap, by_reference=kept)
    return attrs.evolve(result, state=token)


async def store_of_token(config: LoopConfig, token: object) -> tuple[RunStore, str]:
    """The store and run id to resume a token's run from: the loop's store, if the token is its
    run's current pause; else a memory store holding the token's journal."""
    keys = config.state_keys
    if keys is None:
        rule = f"given to resume from a state token (state_key=..., or {ENV_VAR})"
        raise ConfigurationError.invalid("state_key", None, rule)
    if config.store is not None:
        opened = open_token(token, keys, max_bytes=config.max_state_token_bytes)
        stored = await config.store.load(opened.run_id)
        if not opened.matches(stored.records):
            detail = "the run went on after this token was issued (resume it by id)"
            raise StateTokenError(StateTokenReason.STALE, detail)
        return config.store, opened.run_id
    sealed = unseal(token, keys, max_bytes=config.max_state_token_bytes)
    run_id = sealed.run_id
    store = KeptRecords()
    await store.create_run(sealed.created)
    await store.append(run_id, sealed.records[1:])
    return store, run_id

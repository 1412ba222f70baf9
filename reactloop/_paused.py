"""Paused runs without a store: their journal is kept in memory and handed out as a signed state
token (`RunResult.state`), and a token given back to `resume(state=...)` becomes a store again.

With a store, a token is checked against the stored run: only the token of its current pause is
accepted, so an old token cannot be replayed.
"""

from __future__ import annotations

import attrs

from reactloop._contracts import RunStore
from reactloop._decisions import StopReason
from reactloop._errors import ConfigurationError, StateTokenError, StateTokenReason
from reactloop._journal import Journal
from reactloop._run import LoopConfig, Run
from reactloop._sealing import ENV_VAR, seal, unseal
from reactloop._state import RunResult
from reactloop._stores._memory import MemoryStore


def journal_store(config: LoopConfig) -> RunStore | None:
    """Where a new run's journal goes: the loop's store; without one, memory when the run may
    pause (its token is made from that journal); else nowhere."""
    if config.store is not None:
        return config.store
    return MemoryStore() if config.holds_calls else None


async def with_state(run: Run, result: RunResult) -> RunResult:
    """A paused run's result with its signed state token (when the loop holds a key)."""
    keys, journal = run.config.state_keys, run.journal
    if result.stop_reason is not StopReason.AWAITING_APPROVAL or keys is None:
        return result
    if not isinstance(journal, Journal):
        return result
    records = (await journal.store.load(journal.run_id)).records
    token = seal(records, keys, issued_at=run.config.approval.wall_clock())
    return attrs.evolve(result, state=token)


async def store_of_token(config: LoopConfig, token: object) -> tuple[RunStore, str]:
    """The store and run id to resume a token's run from: the loop's store, if the token is its
    run's current pause; else a memory store holding the token's journal."""
    keys = config.state_keys
    if keys is None:
        rule = f"given to resume from a state token (state_key=..., or {ENV_VAR})"
        raise ConfigurationError.invalid("state_key", None, rule)
    sealed = unseal(token, keys)
    run_id = sealed.run_id
    if config.store is not None:
        stored = await config.store.load(run_id)
        if stored.records != sealed.records:
            detail = "the run went on after this token was issued (resume it by id)"
            raise StateTokenError(StateTokenReason.STALE, detail)
        return config.store, run_id
    store = MemoryStore()
    await store.create_run(sealed.created)
    await store.append(run_id, sealed.records[1:])
    return store, run_id

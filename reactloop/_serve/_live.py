"""One run's events as the server holds them for its clients: appended once, read by any number
of followers, each from the start or after the last event it saw (a reconnect)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import anyio

from reactloop._core import Event, RunFinished, RunResult

if TYPE_CHECKING:
    from reactloop._serve._contracts import ServedStream


class LiveRun:
    """A run's events in order (`events`, seq is 1-based: event n is `events[n - 1]`), and who
    it belongs to. `epoch` is random per object, so an SSE event id `{epoch}-{seq}` from another
    LiveRun (another process, an evicted run, a resumed run's earlier stream) never matches.

    Appending is a list append; followers wait on one `anyio.Event` made only when someone waits
    and replaced on the next append, so a run nobody waits on pays nothing for its followers.
    `done` is set once no event will follow; `error` when the run ended without its
    `RunFinished` (an unexpected failure of its driver).

    A run resumed here (after a pause, or taken over from a worker that died) starts with its
    earlier events (`resumed_at` of them, without a pause's end), so a client reconnecting to
    it from the start gets the whole run; a request whose answers resumed it (whose protocol
    id for its stream is `resumed_by`) and its reconnects stream only what follows them.
    """

    def __init__(
        self,
        run_id: str,
        *,
        session_id: str | None = None,
        owner: str | None = None,
        epoch: str | None = None,
    ) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.owner = owner
        self.epoch = epoch if epoch is not None else secrets.token_hex(8)
        self.events: list[Event] = []
        self.done = False
        self.error: Exception | None = None
        self.finished_at: float | None = None
        self.subscribers = 0
        self.decided: frozenset[str] = frozenset()  # the call ids this stream resumed with
        self.resumed_at = 0  # the earlier events it starts with (a resumed run)
        self.resumed_by: str | None = None  # the resuming request's id for its stream
        self.reader: Any = None  # the journal reader of its stored events (`_replay`)
        self.stream: ServedStream | None = None  # the run's stream, while this process drives
        self._changed: anyio.Event | None = None

    def __repr__(self) -> str:
        state = "done" if self.done else "live"
        return f"LiveRun({self.run_id!r}, {len(self.events)} events, {state})"

    def resume_after(
        self, earlier: list[Event], resumed_by: str | None, reader: Any = None
    ) -> None:
        """Start with the run's `earlier` events (before any of its own): its stretch before
        the pause it resumes from, which a reconnect from the start replays. `reader` is the
        journal reader they came from (`_replay.JournalReader`), kept to read what the run did
        next if it turns out to have ended elsewhere first."""
        self.events.extend(earlier)
        self.resumed_at, self.resumed_by, self.reader = len(earlier), resumed_by, reader

    def append(self, event: Event) -> None:
        """Add the next event and wake the followers waiting for it."""
        self.events.append(event)
        changed = self._changed
        if changed is not None:
            self._changed = None
            changed.set()

    def end(self, at: float, error: Exception | None = None) -> None:
        """No event follows (`at`: the host's clock, for eviction); wakes every follower."""
        if self.done:
            return
        self.done, self.finished_at = True, at
        self.error = error or self.error
        self.stream = None
        changed = self._changed
        if changed is not None:
            self._changed = None
            changed.set()

    def interrupt(self) -> bool:
        """Stop the run at its next safe point, if this process drives it; False otherwise."""
        if self.done or self.stream is None:
            return False
        self.stream.interrupt()
        return True

    @property
    def result(self) -> RunResult[Any] | None:
        """The run's result once its `RunFinished` arrived; None before (or without one)."""
        last = self.events[-1] if self.events else None
        return last.result if isinstance(last, RunFinished) else None

    async def follow(self, after: int = 0) -> AsyncGenerator[tuple[int, Event], None]:
        """`(seq, event)` for each event after seq `after`, waiting for new ones until the run is
        done. Events already held are yielded without waiting (a late follower catches up)."""
        seq = max(0, after)
        events = self.events
        while True:
            while seq < len(events):
                seq += 1
                yield seq, events[seq - 1]
            if self.done:
                return
            changed = self._changed
            if changed is None:
                changed = self._changed = anyio.Event()
            await changed.wait()

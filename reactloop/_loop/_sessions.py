"""A session's earlier turns as a new turn reads them: with a context window, only what the
window can keep (adr/0034).

A session's runs are read newest first, a page at a time, until their messages' tokens exceed
the largest budget the window can give a request (its size less the reserved output: the
instructions and tools only ever lower it) at a point where a turn begins and every tool result
read has its call read too. Any request of the turn is then over budget, so trimming drops every
older message whatever it is: the window keeps the same messages as with the whole history. The
session's leading system messages, which trimming never drops, are read too. Without a window,
or with a store that cannot read a page (`SessionTurnsStore`), the whole history is read.
"""

from __future__ import annotations

from collections import Counter

from attrs import define, field, frozen

from reactloop._core import (
    AssistantMessage,
    GivenDecision,
    Message,
    RunStore,
    SessionTurn,
    SessionTurnsStore,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from reactloop._policies import ContextWindow

FIRST_PAGE = 8  # runs in the first page; the next ones are sized by what is still missing
LARGEST_PAGE = 256


@frozen
class SessionRead:
    """The turns a new turn starts from, and the session's newest run (None: no runs yet)."""

    history: tuple[Message, ...]
    newest: SessionTurn | None

    @property
    def standing(self) -> tuple[GivenDecision, ...]:
        """The session's "always" decisions: the newest run holds them all."""
        return () if self.newest is None else self.newest.standing


@define
class _Tail:
    """The newest turns read so far (newest first), their tokens, and the call ids of results
    read whose call was not read yet."""

    bound: int
    window: ContextWindow
    turns: list[SessionTurn] = field(factory=list)
    tokens: int = 0
    unanswered: Counter[str] = field(factory=Counter)

    def add(self, turn: SessionTurn) -> bool:
        """Add the next older turn; True when what is read is enough (see the module)."""
        self.turns.append(turn)
        estimator = self.window.estimator  # stored text is valid Unicode (no store takes a
        for message in reversed(turn.messages):  # lone surrogate): the run's repair is a no-op
            self.tokens += estimator.count_message(message)
            if isinstance(message, ToolMessage):
                self.unanswered[message.call_id] += 1
            elif isinstance(message, AssistantMessage):
                self._answer(message)
        starts_turn = bool(turn.messages) and isinstance(turn.messages[0], UserMessage)
        return self.tokens > self.bound and starts_turn and not self.unanswered

    def next_page(self) -> int:
        """How many more turns to read: enough to fill the window at the average size of the
        turns read so far, and two more, but at most as many as were read (a store decodes
        all a page holds: reading more than the window keeps is wasted work)."""
        average = max(1, self.tokens // len(self.turns))
        missing = max(0, self.bound - self.tokens) // average + 2
        return min(missing, len(self.turns), LARGEST_PAGE)

    def _answer(self, message: AssistantMessage) -> None:
        """The message's calls answer results read after it (a call with none is open)."""
        for call in message.tool_calls:
            if self.unanswered[call.id] > 0:
                self.unanswered[call.id] -= 1
                if not self.unanswered[call.id]:
                    del self.unanswered[call.id]

    def messages(self, leading: tuple[Message, ...] = ()) -> tuple[Message, ...]:
        """The turns read, oldest first, after `leading`."""
        return (*leading, *(m for turn in reversed(self.turns) for m in turn.messages))


async def read_session(
    store: RunStore, session_id: str, window: ContextWindow | None, before: str | None = None
) -> SessionRead | None:
    """The session's runs before run `before` that `window` can keep; None when it must be read
    whole (no window, or a store without `session_turns`)."""
    if window is None or not isinstance(store, SessionTurnsStore):
        return None
    tail = _Tail(window.max_tokens - window.reserved_output, window)
    cursor, limit = before, FIRST_PAGE
    while True:
        page = await store.session_turns(session_id, before=cursor, limit=limit)
        for turn in page:
            if tail.add(turn):
                leading = await _leading(store, session_id)
                return SessionRead(tail.messages(leading), tail.turns[0])
        if len(page) < limit:
            return SessionRead(tail.messages(), tail.turns[0] if tail.turns else None)
        cursor, limit = page[-1].run_id, tail.next_page()


async def _leading(store: SessionTurnsStore, session_id: str) -> tuple[Message, ...]:
    """The system messages the session begins with (trimming never drops them). Its first run
    is never the oldest one read when the read stops early: a run that begins with a system
    message does not begin a turn, so the read never stops at it."""
    first = await store.session_turns(session_id, limit=1, oldest=True)
    messages = first[0].messages if first else ()
    count = 0
    while count < len(messages) and isinstance(messages[count], SystemMessage):
        count += 1
    return messages[:count]

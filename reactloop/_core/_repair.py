"""Tool-call pairing, and repairing a stored history whose calls and results no longer pair up.

Providers reject a request in which a tool result has no call before it, or a call has no result
(the "poisoned conversation"). `pair_calls` finds such breaks; `repair_history` fixes them once,
when a run starts from stored messages, and reports each fix as a typed `RepairNote`.
"""

from __future__ import annotations

import enum
import logging
from collections import deque
from collections.abc import Sequence

from attrs import frozen

from reactloop._core._messages import AssistantMessage, Message, ToolCall, ToolMessage

logger = logging.getLogger("reactloop")

INTERRUPTED_RESULT = (
    "interrupted: this tool call never returned a result (the run stopped between the call and "
    "its result); it may or may not have taken effect"
)


class CallInterrupted(Exception):
    """Raised by a tool whose call was cut off where it ran (the remote worker that ran it was
    lost mid-call, and it is not idempotent): the call's result is `INTERRUPTED_RESULT`, as for
    a resumed run's interrupted call, instead of an error naming this exception."""


@frozen
class OpenCall:
    """A tool call with no result after it; `index` is its assistant message's position."""

    index: int
    call: ToolCall


@frozen
class Pairing:
    """How a message list's calls and results pair up.

    `links` holds (call message index, result message index) for each answered call; `orphans`
    the indices of results no earlier call awaits (no such call, or already answered); `open` the
    calls no later result answers, in order. A call id used twice needs two results.
    """

    links: tuple[tuple[int, int], ...]
    orphans: tuple[int, ...]
    open: tuple[OpenCall, ...]

    @property
    def complete(self) -> bool:
        """True when every result has its call and every call its result."""
        return not self.orphans and not self.open


def pair_calls(messages: Sequence[Message]) -> Pairing:
    """Match each tool result to the earliest still-unanswered earlier call with its id."""
    calls: list[OpenCall] = []
    waiting: dict[str, deque[int]] = {}
    answered: set[int] = set()
    links: list[tuple[int, int]] = []
    orphans: list[int] = []
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                waiting.setdefault(call.id, deque()).append(len(calls))
                calls.append(OpenCall(index, call))
        elif isinstance(message, ToolMessage):
            queue = waiting.get(message.call_id)
            if queue:
                position = queue.popleft()
                answered.add(position)
                links.append((calls[position].index, index))
            else:
                orphans.append(index)
    still_open = (call for position, call in enumerate(calls) if position not in answered)
    return Pairing(tuple(links), tuple(orphans), tuple(still_open))


class RepairKind(enum.StrEnum):
    """What a repair did."""

    INTERRUPTED_CALL = "interrupted_call"
    ORPHAN_RESULT = "orphan_result"
    INVALID_UNICODE = "invalid_unicode"


@frozen
class RepairNote:
    """One fix made to a stored history; `index` is the offending message's input position.

    `INVALID_UNICODE`: text that was not valid Unicode was repaired as it entered the run
    (adr/0022); `index` is its message's position in the transcript (-1: the instructions), and
    `call_id` and `tool_name` name the tool call for a tool result (empty otherwise).
    """

    kind: RepairKind
    call_id: str
    tool_name: str
    index: int

    def describe(self) -> str:
        """A sentence saying what was wrong and what was done."""
        what = f"tool call {self.tool_name!r} ({self.call_id}) at message {self.index}"
        if self.kind is RepairKind.INVALID_UNICODE:
            return f"{self._place()} was not valid Unicode: lone surrogates replaced by U+FFFD"
        if self.kind is RepairKind.INTERRUPTED_CALL:
            return f"{what} had no result: added an error result saying it was interrupted"
        return f"result of {what} had no call before it: dropped it"

    def _place(self) -> str:
        if self.call_id:
            where = what_call(self.tool_name, self.call_id)
            return f"the result of {where} at message {self.index}"
        return "the instructions" if self.index < 0 else f"the text of message {self.index}"


def what_call(tool_name: str, call_id: str) -> str:
    """A tool call as notes name it."""
    return f"tool call {tool_name!r} ({call_id})"


@frozen
class RepairedHistory:
    """A pair-complete history and the notes of every fix that made it so (empty: no change)."""

    messages: tuple[Message, ...]
    notes: tuple[RepairNote, ...] = ()

    @property
    def changed(self) -> bool:
        """True when the history needed a fix."""
        return bool(self.notes)


def interrupted_result(call: ToolCall) -> ToolMessage:
    """The error result standing in for a call whose result was never recorded."""
    return ToolMessage(call.id, call.name, INTERRUPTED_RESULT, is_error=True)


def _results_end(messages: Sequence[Message], index: int) -> int:
    """The position of the last tool result in the block right after message `index`."""
    end = index
    while end + 1 < len(messages) and isinstance(messages[end + 1], ToolMessage):
        end += 1
    return end


def _orphan_note(messages: Sequence[Message], index: int) -> RepairNote:
    message = messages[index]
    assert isinstance(message, ToolMessage)
    return RepairNote(RepairKind.ORPHAN_RESULT, message.call_id, message.name, index)


_NO_HISTORY = RepairedHistory(())


def repair_history(messages: Sequence[Message]) -> RepairedHistory:
    """Drop results with no call, and answer each call with no result by an error result.

    A synthesized result goes after the results that follow its call, in call order, so a call's
    results stay together. Every fix is logged as a warning on the "reactloop" logger.
    """
    if not messages:
        return _NO_HISTORY
    pairing = pair_calls(messages)
    if pairing.complete:
        return RepairedHistory(tuple(messages))
    dropped = set(pairing.orphans)
    added: dict[int, list[ToolMessage]] = {}
    for open_call in pairing.open:
        at = _results_end(messages, open_call.index)
        added.setdefault(at, []).append(interrupted_result(open_call.call))
    repaired: list[Message] = []
    for index, message in enumerate(messages):
        if index not in dropped:
            repaired.append(message)
        repaired.extend(added.get(index, ()))
    notes = sorted(
        [_orphan_note(messages, index) for index in pairing.orphans]
        + [
            RepairNote(RepairKind.INTERRUPTED_CALL, item.call.id, item.call.name, item.index)
            for item in pairing.open
        ],
        key=lambda note: note.index,
    )
    for note in notes:
        logger.warning("repaired stored history: %s", note.describe())
    return RepairedHistory(tuple(repaired), tuple(notes))

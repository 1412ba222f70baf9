"""An interrupt during a model call: the call is cut short at once (its HTTP request cancelled),
and the text it had streamed so far is kept as the run's last, partial, answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import anyio
import anyio.lowlevel
from attrs import Factory, define

from reactloop._core import AssistantMessage, Stop, StopReason, is_blank

if TYPE_CHECKING:
    from reactloop._loop import Run

T = TypeVar("T")

PARTIAL_ANSWER = "interrupted on request during the model's answer: its last message is partial"
"""The `stop_detail` of a run whose answer an interrupt cut short after some text had streamed."""

CUT_CALL = "interrupted on request during a model call"
"""The `stop_detail` of a run interrupted during a model call that had streamed no text."""


@define
class Heard:
    """The text the current attempt of a model call has streamed (a retry starts it anew)."""

    pieces: list[str] = Factory(list)

    def add(self, text: str) -> None:
        """One more piece of streamed text."""
        self.pieces.append(text)

    def clear(self) -> None:
        """Forget the attempt's text: the call is retried from scratch."""
        self.pieces.clear()

    @property
    def text(self) -> str:
        """The text streamed so far."""
        return "".join(self.pieces)


async def interruptible(run: Run, call: Callable[[], Awaitable[T]]) -> T | None:
    """`call()`, or None when the run's interrupt cut it short (at once, if one was requested
    before it began). Only the interrupt's own cancellation ends here: one from outside goes on.
    The reasoning phase calls the model through this only when the run is `interruptible` or an
    interrupt was asked: a plain `run()` pays no cancel scope per call, and an interrupt its own
    hooks request from another task is taken at the next safe point."""
    with anyio.CancelScope() as scope:
        run.model_calls.add(scope)
        if run.interrupt is not None:
            scope.cancel()
        try:
            return await call()
        finally:
            run.model_calls.discard(scope)
    await anyio.lowlevel.checkpoint_if_cancelled()
    return None


def cut_short(run: Run, heard: str) -> Stop:
    """The stop of a run whose model call an interrupt cut short. The text that had streamed, if
    any, becomes the transcript's last assistant message (not a step's response, not journaled:
    a resume asks the model again) and so the output, unless the interrupt gave a message."""
    message = None if run.interrupt is None else run.interrupt.message
    if is_blank(heard):
        return Stop(StopReason.INTERRUPTED, CUT_CALL, output=message)
    run.state.messages.append(AssistantMessage(heard))
    return Stop(StopReason.INTERRUPTED, PARTIAL_ANSWER, output=message)

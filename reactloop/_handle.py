"""Handles on a running run: interrupt it from another task, await its result, read its events."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
from anyio.abc import ObjectReceiveStream

from reactloop._events import Event
from reactloop._run import Run
from reactloop._state import RunResult


class RunHandle:
    """A run started with `ReActLoop.start`: interrupt it, or wait for its result."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._done = anyio.Event()
        self._result: RunResult | None = None

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._run.state.run_id

    def interrupt(self, message: str | None = None) -> None:
        """Ask the run to stop at its next safe point; `message` becomes the output if given."""
        self._run.request_interrupt(message)

    def _finish(self, result: RunResult) -> None:
        self._result = result
        self._done.set()

    async def result(self) -> RunResult:
        """Wait for the run to end and return its result."""
        await self._done.wait()
        assert self._result is not None
        return self._result


class RunStream:
    """The events of a streamed run, in order; `interrupt()` asks the run to stop early."""

    def __init__(self, run: Run, receive: ObjectReceiveStream[Event]) -> None:
        self._run = run
        self._receive = receive

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._run.state.run_id

    def interrupt(self, message: str | None = None) -> None:
        """Ask the run to stop at its next safe point; later events still arrive."""
        self._run.request_interrupt(message)

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._receive.__aiter__()

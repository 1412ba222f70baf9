"""Handles on a running run: interrupt it from another task, await its result, read its events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Generic

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from reactloop._core import Event, OutputT, RunResult, unwrap_single_error
from reactloop._core import reraise as _reraise
from reactloop._errors import NoResultError
from reactloop._loop._lifecycle import Departure
from reactloop._loop._run import Run
from reactloop._tools import interrupt_run

STREAM_BUFFER = 256
"""Events a stream holds for a consumer that reads slower than the run produces."""

CLOSE_GRACE = 5.0
"""Seconds the end-of-run hooks of a stream get once its consumer has left the block early."""

Drive = Callable[[Run, Departure | None], Awaitable[RunResult[Any]]]


class RunHandle(Generic[OutputT]):
    """A run started with `ReActLoop.start`: interrupt it, or wait for its result."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self._done = anyio.Event()
        self._result: RunResult[Any] | None = None

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._run.state.run_id

    def interrupt(self, message: str | None = None) -> None:
        """Stop the run: a model call in flight at once (its streamed text kept, partial), a tool
        call in flight once it returns, else at the next safe point; `message` becomes the output
        if given. Sub-runs its agent tools are running are interrupted too."""
        interrupt_run(self._run, message)

    def _finish(self, result: RunResult[Any] | None) -> None:
        """Record the result (None: the run was cancelled or aborted) and wake the waiters."""
        if result is not None:
            self._result = result
        self._done.set()

    async def result(self) -> RunResult[OutputT]:
        """Wait for the run to end and return its result; `NoResultError` if it never ended."""
        await self._done.wait()
        if self._result is None:
            raise NoResultError(self.run_id)
        return self._result


class RunStream(Generic[OutputT]):
    """The events of a streamed run, in order; `result()` gives the run's `RunResult`."""

    def __init__(self, run: Run, receive: MemoryObjectReceiveStream[Event]) -> None:
        self._run = run
        self._receive = receive
        self._departure = Departure()
        self._result: RunResult[Any] | None = None
        self._ended = anyio.Event()

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._run.state.run_id

    def interrupt(self, message: str | None = None) -> None:
        """Stop the run (and the sub-runs its agent tools are running) as `RunHandle.interrupt`
        does: a model call in flight at once, a tool call once it returns; later events still
        arrive."""
        interrupt_run(self._run, message)

    def __aiter__(self) -> AsyncIterator[Event]:
        """The events in order, ending with the run; after the block, nothing more (at once)."""
        return _NOTHING if self._ended.is_set() else self._receive

    async def result(self) -> RunResult[OutputT]:
        """The run's result.

        Inside the block: waits for the run to end, discarding the events not yet read. After the
        block: at once; a partial result with `stop_reason=STREAM_CLOSED` if the block was left
        before the run ended; `NoResultError` if the run was cancelled or aborted.
        """
        if self._result is None and not self._ended.is_set():
            await self._drain()
            if self._result is None:  # the run failed: wait for its error to end the block
                await self._ended.wait()
        if self._result is None:
            raise NoResultError(self.run_id)
        return self._result

    async def _produce(self, drive: Drive, send: MemoryObjectSendStream[Event]) -> None:
        with send:
            self._result = await drive(self._run, self._departure)

    async def _leave(self) -> None:
        """The consumer left the block: end a run still going, discard unread events."""
        self._departure.leave(self._run, CLOSE_GRACE)
        await self._drain()

    async def _drain(self) -> None:
        """Read and discard events until the run closes its end (unblocks a waiting send).

        Another task may be draining too, or the block may close the stream meanwhile: either
        just ends the drain.
        """
        while True:
            try:
                await self._receive.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return


class _Exhausted:
    """An event iterator with nothing left: what a stream gives once its block has ended."""

    def __aiter__(self) -> _Exhausted:
        return self

    async def __anext__(self) -> Event:
        raise StopAsyncIteration


_NOTHING = _Exhausted()


@asynccontextmanager
async def open_handle(run: Run, drive: Drive) -> AsyncIterator[RunHandle[Any]]:
    """Drive `run` in the background of the block; leaving the block waits for the run's end.

    An exception inside the block cancels the run and comes out as itself once the run is gone.
    """
    handle = RunHandle(run)
    run.interruptible = True  # the handle's `interrupt()` cuts a model call short

    async def execute() -> None:
        handle._finish(await drive(run, None))

    left_with: Exception | None = None
    try:
        with unwrap_single_error():
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(execute)
                try:
                    yield handle
                except Exception as error:
                    left_with = error
                    tasks.cancel_scope.cancel()
    finally:
        handle._finish(None)
    if left_with is not None:
        _reraise(left_with)


@asynccontextmanager
async def open_stream(run: Run, drive: Drive) -> AsyncIterator[RunStream[Any]]:
    """Drive `run` in the background of the block, its events flowing to the block.

    Leaving with break, return or an `Exception` is clean: the run ends with `STREAM_CLOSED` (or
    its own end, if it got there first) and the block's exception is raised again only after the
    task group has closed, so it comes out as itself (never grouped or copied). Any other
    `BaseException` (cancellation, KeyboardInterrupt) cancels the run outright and propagates.
    The receiving end closes only after the run is done, so no send ever meets a closed stream.
    """
    send, receive = anyio.create_memory_object_stream[Event](STREAM_BUFFER)
    run.sink = send.send
    run.interruptible = True  # the stream's `interrupt()` cuts a model call short
    stream = RunStream(run, receive)
    left_with: Exception | None = None
    try:
        with receive, unwrap_single_error():
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(stream._produce, drive, send)
                try:
                    yield stream
                except Exception as error:
                    left_with = error
                except BaseException:
                    tasks.cancel_scope.cancel()
                    raise
                await stream._leave()
    finally:
        stream._ended.set()
    if left_with is not None:
        _reraise(left_with)

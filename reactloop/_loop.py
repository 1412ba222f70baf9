"""`ReActLoop`: the thin orchestrator. It sequences phases and matches on their decisions."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import Any, Self, Unpack, assert_never

import anyio

from reactloop._config import LoopOptions, build_config, phase_sequence
from reactloop._contracts import Model, Phase
from reactloop._decisions import (
    PROCEED,
    NextIteration,
    PhaseDecision,
    Proceed,
    Stop,
    StopReason,
    not_a_decision,
)
from reactloop._errors import ReactLoopError, RunTimeoutError
from reactloop._events import (
    Event,
    PhaseFinished,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)
from reactloop._handle import RunHandle, RunStream
from reactloop._lifecycle import check_input, finish_run, start_run
from reactloop._messages import Message, UserMessage
from reactloop._phases import default_phases, default_start_phases
from reactloop._run import LoopConfig, Run
from reactloop._state import RunResult

STREAM_BUFFER = 256


class ReActLoop:
    """A tool-using agent: `start_phases` once, then `phases` each iteration until one stops.

    `options` are listed in `LoopOptions` (tools, instructions, hooks, limits, timeouts, ...).
    The instance holds configuration only; any number of runs may execute on it concurrently.
    """

    def __init__(
        self,
        model: Model | str,
        *,
        phases: Sequence[Phase] | None = None,
        start_phases: Sequence[Phase] | None = None,
        **options: Unpack[LoopOptions],
    ) -> None:
        self.config = build_config(model, **options)
        self._owns_model = isinstance(model, str)
        self.phases = phase_sequence("phases", phases, default_phases)
        self.start_phases = phase_sequence("start_phases", start_phases, default_start_phases)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the model's connections if this loop created the model (from a model string)."""
        close = getattr(self.config.model, "aclose", None)
        if self._owns_model and close is not None:
            await close()

    async def run(self, text: str, *, history: Sequence[Message] = (), **context: Any) -> RunResult:
        """Run to the end and return the result; `context` takes deps, user_id, session_id."""
        run = await start_run(self.config, text, history=history, **context)
        return raise_if_strict(self.config, await self.drive(run))

    @asynccontextmanager
    async def start(
        self, text: str, *, history: Sequence[Message] = (), **context: Any
    ) -> AsyncIterator[RunHandle]:
        """Run in the background of this block: `handle.interrupt()`, `await handle.result()`."""
        run = await start_run(self.config, text, history=history, **context)
        handle = RunHandle(run)

        async def execute() -> None:
            handle._finish(await self.drive(run))

        with unwrap_single_error():
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(execute)
                yield handle

    @asynccontextmanager
    async def stream(
        self, text: str, *, history: Sequence[Message] = (), **context: Any
    ) -> AsyncIterator[RunStream]:
        """The same run, yielding typed events; leaving the block early cancels the run."""
        check_input(text, history, context)  # before the stream exists, so nothing leaks
        send, receive = anyio.create_memory_object_stream[Event](STREAM_BUFFER)
        run = await start_run(self.config, text, history=history, sink=send.send, **context)

        async def produce() -> None:
            async with send:
                await self.drive(run)

        with unwrap_single_error():
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(produce)
                try:
                    async with receive:
                        yield RunStream(run, receive)
                finally:
                    tasks.cancel_scope.cancel()

    async def drive(self, run: Run) -> RunResult:
        """Execute a prepared run to its end: the one code path of `run()` and `stream()`."""
        if run.listening:
            await run.emit(RunStarted(run.state.run_id, _input_of(run)))
        limiter = self.config.run_limiter
        try:
            async with limiter.slot() if limiter is not None else nullcontext():
                stop = await self._iterate_within_timeout(run)
        except ReactLoopError as error:
            stop = Stop(StopReason.ERROR, error.message, error=error)
        result = await finish_run(run, stop)
        if run.listening:
            await run.emit(RunFinished(result))
        return result

    async def _iterate_within_timeout(self, run: Run) -> Stop:
        timeout = self.config.run_timeout
        if timeout is None:
            return await self._iterate(run)
        with anyio.move_on_after(timeout):
            return await self._iterate(run)
        error = RunTimeoutError(timeout)
        return Stop(StopReason.RUN_TIMEOUT, error.message, error=error)

    async def _iterate(self, run: Run) -> Stop:
        decision = await self._sequence(run, self.start_phases)
        while not isinstance(decision, Stop):
            step = run.state.open_step(run.now())
            if run.listening:
                await run.emit(StepStarted(step.index))
            decision = await self._sequence(run, self.phases)
            if not isinstance(decision, Stop):
                await finish_step(run)
        return decision

    async def _sequence(self, run: Run, phases: Sequence[Phase]) -> PhaseDecision:
        listening = run.listening
        for phase in phases:
            decision = await phase(run)
            if listening:
                await run.emit(PhaseFinished(type(phase).__name__, decision))
            if decision is PROCEED:
                continue
            match decision:
                case Proceed():
                    continue
                case NextIteration() | Stop():
                    return decision
                case _:
                    not_a_decision(phase, decision)
                    assert_never(decision)
        return PROCEED


async def finish_step(run: Run) -> None:
    """Close the iteration's step record and report it."""
    step = run.state.close_step(run.now())
    if step is not None and run.listening:
        await run.emit(StepFinished(step))


@contextmanager
def unwrap_single_error() -> Iterator[None]:
    """Let a lone error escape a task group as itself, not inside an exception group."""
    try:
        yield
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


def raise_if_strict(config: LoopConfig, result: RunResult) -> RunResult:
    """In strict mode a failed run raises its error instead of returning it."""
    if config.strict and result.error is not None:
        raise result.error
    return result


def _input_of(run: Run) -> str:
    last = run.state.messages[-1] if run.state.messages else None
    return last.content if isinstance(last, UserMessage) else ""

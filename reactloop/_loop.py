"""`ReActLoop`: the thin orchestrator. It sequences phases and matches on their decisions."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, nullcontext
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
    not_async,
)
from reactloop._durable import ResumeOptions, resume_any
from reactloop._errors import ReactLoopError, RunTimeoutError
from reactloop._events import PhaseFinished, RunStarted, StepFinished, StepStarted
from reactloop._groups import unwrap_single_error
from reactloop._handle import RunHandle, RunStream, open_handle, open_stream
from reactloop._lease import leased
from reactloop._lifecycle import Departure, finish_run, start_run
from reactloop._messages import Message, UserMessage
from reactloop._phases import default_phases, default_start_phases
from reactloop._run import LoopConfig, Run
from reactloop._state import RunResult
from reactloop._validate import checked_arguments


@checked_arguments
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
        """Close the model's connections and the store if this loop created them (from strings)."""
        close = getattr(self.config.model, "aclose", None)
        if self._owns_model and close is not None:
            await close()
        if self.config.owns_store and self.config.store is not None:
            await self.config.store.aclose()

    async def run(self, text: str, *, history: Sequence[Message] = (), **context: Any) -> RunResult:
        """Run to the end and return the result; `context` takes deps, user_id, session_id."""
        run = await start_run(self.config, text, history=history, context=context)
        return await self._complete(run)

    async def resume(
        self, run_id: str | None = None, **options: Unpack[ResumeOptions]
    ) -> RunResult:
        """Continue a stored run by id, or a paused run from its `state=` token, with `decisions=`
        for its held calls and `deps=` (never stored); a finished run gives its stored result."""
        resumed = await resume_any(self.config, run_id, options)
        return resumed.result or await self._complete(resumed.run)

    async def _complete(self, run: Run) -> RunResult:
        with run.journal, unwrap_single_error():
            result = await self.drive(run)
        return raise_if_strict(self.config, result)

    @asynccontextmanager
    async def start(
        self, text: str, *, history: Sequence[Message] = (), **context: Any
    ) -> AsyncIterator[RunHandle]:
        """Run in the background of this block: `handle.interrupt()`, `await handle.result()`."""
        run = await start_run(self.config, text, history=history, context=context)
        with run.journal:
            async with open_handle(run, self.drive) as handle:
                yield handle

    @asynccontextmanager
    async def stream(
        self, text: str, *, history: Sequence[Message] = (), **context: Any
    ) -> AsyncIterator[RunStream]:
        """A new run, yielding typed events; `await events.result()` gives its `RunResult`.

        Leaving the block before the run ended (break, return, an exception) ends the run with
        `StopReason.STREAM_CLOSED`; the block's own exception comes out as itself.
        """
        run = await start_run(self.config, text, history=history, context=context)
        with run.journal:
            async with open_stream(run, self.drive) as events:
                yield events

    @asynccontextmanager
    async def resume_stream(
        self, run_id: str | None = None, **options: Unpack[ResumeOptions]
    ) -> AsyncIterator[RunStream]:
        """`resume()` as a stream of events, like `stream()`; a finished run streams its end."""
        resumed = await resume_any(self.config, run_id, options)
        drive = self.drive if resumed.result is None else resumed.replay_result
        with resumed.run.journal:
            async with open_stream(resumed.run, drive) as events:
                yield events

    async def drive(self, run: Run, departure: Departure | None = None) -> RunResult:
        """Execute a prepared run to its end: the one code path of run(), start() and stream()."""
        async with leased(run):
            if departure is None:
                stop = await self._work(run)
            else:
                stop = await departure.work_or_closed(self._work, run)
            return await finish_run(run, stop, departure)

    async def _work(self, run: Run) -> Stop:
        if run.listening:
            await run.emit(RunStarted(run.state.run_id, _input_of(run)))
        limiter = self.config.run_limiter
        try:
            async with limiter.slot() if limiter is not None else nullcontext():
                return await self._iterate_within_timeout(run)
        except ReactLoopError as error:
            return Stop(StopReason.ERROR, error.message, error=error)

    async def _iterate_within_timeout(self, run: Run) -> Stop:
        timeout = self.config.run_timeout
        if timeout is None:
            return await self._iterate(run)
        with anyio.move_on_after(timeout):
            return await self._iterate(run)
        error = RunTimeoutError(timeout)
        return Stop(StopReason.RUN_TIMEOUT, error.message, error=error)

    async def _iterate(self, run: Run) -> Stop:
        decision = PROCEED if run.skip_start else await self._sequence(run, self.start_phases)
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
            pending = phase(run)
            try:
                decision = await pending
            except TypeError:
                _not_awaitable(phase, pending)
                raise
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


def _not_awaitable(phase: Phase, pending: object) -> None:
    """A phase that is not async breaks its contract (a ContractError, not a raw TypeError)."""
    if not inspect.isawaitable(pending):
        not_async(phase, pending)


async def finish_step(run: Run) -> None:
    """Close the iteration's step record and report it."""
    step = run.state.close_step(run.now())
    if step is not None:
        run.journal.step_closed(run.state, step)
        if run.listening:
            await run.emit(StepFinished(step))


def raise_if_strict(config: LoopConfig, result: RunResult) -> RunResult:
    """In strict mode a failed run raises its error instead of returning it."""
    if config.strict and result.error is not None:
        raise result.error
    return result


def _input_of(run: Run) -> str:
    last = run.state.messages[-1] if run.state.messages else None
    return last.content if isinstance(last, UserMessage) else ""

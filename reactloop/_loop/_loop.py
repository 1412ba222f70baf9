"""`ReActLoop`: the thin orchestrator. It sequences phases and matches on their decisions."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from functools import partial
from typing import Any, TypeVar, Unpack, assert_never, overload

import anyio

from reactloop._core import (
    PROCEED,
    Model,
    NextIteration,
    OutputT,
    Phase,
    PhaseDecision,
    PhaseFinished,
    Proceed,
    RunResult,
    RunStarted,
    StepFinished,
    StepStarted,
    Stop,
    StopReason,
    UserMessage,
    not_a_decision,
    not_async,
)
from reactloop._durable import NULL_JOURNAL, leased
from reactloop._errors import ReactLoopError, RunTimeoutError
from reactloop._loop._config import (
    LoopOptions,
    build_config,
    config_with_output,
    phase_sequence,
)
from reactloop._loop._entry import RunEntryPoints
from reactloop._loop._lifecycle import Departure, finish_run
from reactloop._loop._output_config import check_output_phase
from reactloop._loop._run import Run
from reactloop._phases import default_phases, default_start_phases, response_may_wait
from reactloop._telemetry import RUN_MARKS, MarkedRun, phase_name
from reactloop._tools import run_toolsets
from reactloop._validate import checked_arguments

T = TypeVar("T")


@checked_arguments
class ReActLoop(RunEntryPoints[OutputT]):
    """A tool-using agent: `start_phases` once, then `phases` each iteration until one stops.

    `options` are listed in `LoopOptions`: the everyday ones flat (tools, instructions, hooks,
    max_iterations, store, ...), the rest in groups (`limits=Limits(...)`, `output=`,
    `approval=`, `tool_selection=`; ADR-0024);
    `output_type` makes each run end with a validated value of that type (`RunResult[T]`).
    The instance holds configuration only; any number of runs may execute on it concurrently.
    """

    @overload
    def __init__(
        self,
        model: Model | str,
        *,
        output_type: type[OutputT],
        phases: Sequence[Phase] | None = None,
        start_phases: Sequence[Phase] | None = None,
        **options: Unpack[LoopOptions],
    ) -> None: ...
    @overload
    def __init__(
        self,
        model: Model | str,
        *,
        output_type: object = None,
        phases: Sequence[Phase] | None = None,
        start_phases: Sequence[Phase] | None = None,
        **options: Unpack[LoopOptions],
    ) -> None: ...
    def __init__(
        self,
        model: Model | str,
        *,
        output_type: object = None,
        phases: Sequence[Phase] | None = None,
        start_phases: Sequence[Phase] | None = None,
        **options: Unpack[LoopOptions],
    ) -> None:
        self.config = build_config(model, output_type, **options)
        self._owns_model = isinstance(model, str)
        self.phases = phase_sequence("phases", phases, default_phases)
        self.start_phases = phase_sequence("start_phases", start_phases, default_start_phases)
        check_output_phase(self.config, self.phases)

    @overload
    def with_output(self, output_type: type[T], **options: Any) -> ReActLoop[T]: ...
    @overload
    def with_output(self, output_type: object, **options: Any) -> ReActLoop[Any]: ...
    def with_output(self, output_type: object, **options: Any) -> ReActLoop[Any]:
        """This loop for runs that end with `output_type` (a per-run override of the output);
        `options` take `output=OutputOptions(...)` (the flat `output_*` keys until 0.3)."""
        other: ReActLoop[Any] = object.__new__(ReActLoop)
        other.__dict__.update(self.__dict__, _owns_model=False)
        other.config = config_with_output(self.config, output_type, options)
        check_output_phase(other.config, other.phases)
        return other

    async def drive(self, run: Run, departure: Departure | None = None) -> RunResult[Any]:
        """Execute a prepared run to its end: the one code path of run(), start() and stream()."""
        run.response_waits = response_may_wait(self.phases, self.config.hooks.hooked)
        tracing = self.config.tracing
        if tracing is None:
            return await self._drive(run, departure)
        return await tracing.invoke_agent(run, partial(self._drive, run, departure))

    async def _drive(self, run: Run, departure: Departure | None) -> RunResult[Any]:
        async with leased(run):
            with MarkedRun(run):
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
            if limiter is None:  # no slot to take: no context to enter
                return await self._iterate_within_timeout(run)
            async with limiter.slot():
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
        start, phases = self.start_phases, self.phases
        if self.config.tracing is not None:  # once per run: phase spans, when asked for
            start, phases = self.config.tracing.phases(start), self.config.tracing.phases(phases)
        async with run_toolsets(run):
            decision = PROCEED if run.skip_start else await self._sequence(run, start)
            while not isinstance(decision, Stop):
                step = run.state.open_step(run.now())
                if run.listening:
                    await run.emit(StepStarted(step.index))
                decision = await self._sequence(run, phases)
                if not isinstance(decision, Stop):
                    await finish_step(run)
            return decision

    async def _sequence(self, run: Run, phases: Sequence[Phase]) -> PhaseDecision:
        listening, marks = run.listening, RUN_MARKS.get()
        for phase in phases:
            if marks is not None:
                marks.phase = phase
            pending = phase(run)
            try:
                decision = await pending
            except TypeError:
                _not_awaitable(phase, pending)
                raise
            if listening:
                await run.emit(PhaseFinished(phase_name(phase), decision))
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
        if run.journal is not NULL_JOURNAL:  # no store: no call per step for durability
            run.journal.step_closed(run.state, step)
        if run.listening:
            await run.emit(StepFinished(step))


def _input_of(run: Run) -> str:
    last = run.state.messages[-1] if run.state.messages else None
    return last.text if isinstance(last, UserMessage) else ""

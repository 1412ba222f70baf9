"""When things happened in a run the command line watched: each phase's end, each tool call's
start, read off its events on the run's own clock. A trace page written from a watched run
(`run --html`) draws them as measured, where one from a store can only derive them."""

from __future__ import annotations

from collections.abc import Callable

from attrs import define, field, frozen

from reactloop._core import Event, PhaseFinished, RunStarted, StepStarted, ToolCallStarted


@frozen
class PhaseMark:
    """A phase that ended at `ended_at` (the run's clock) with a decision of this kind."""

    phase: str
    decision: str
    ended_at: float


@define
class Timings:
    """The times a watched run's events carry; step 0 holds the start phases."""

    clock: Callable[[], float]
    started_at: float | None = None
    phases: dict[int, list[PhaseMark]] = field(factory=dict)
    step_starts: dict[int, float] = field(factory=dict)
    tool_starts: dict[str, float] = field(factory=dict)
    step: int = 0

    def observe(self, event: Event) -> None:
        """Note the time of `event` if it marks a phase, a step or a tool call."""
        match event:
            case RunStarted():
                self.started_at = self.clock()
            case StepStarted(index=index):
                self.step = index
                self.step_starts[index] = self.clock()
            case PhaseFinished(phase=phase, decision=decision):
                mark = PhaseMark(phase, type(decision).__name__, self.clock())
                self.phases.setdefault(self.step, []).append(mark)
            case ToolCallStarted(call=call):
                self.tool_starts[call.id] = self.clock()
            case _:
                return

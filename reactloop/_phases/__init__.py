"""The built-in phases (run start, iteration guards, reasoning, hook decisions, tools with the
approval gate, structured output) and the default sequences. Published by `reactloop.phases`."""

from __future__ import annotations

from collections.abc import Sequence

from reactloop._core import Phase
from reactloop._phases._ask import ask_model
from reactloop._phases._execute import Admitted
from reactloop._phases._fallback import traced_model
from reactloop._phases.applier import HookDecisionApplier
from reactloop._phases.guards import IterationGuards
from reactloop._phases.output import OutputPhase
from reactloop._phases.reasoning import ReasoningPhase
from reactloop._phases.start import RunStart
from reactloop._phases.tools import ToolPhase


def default_start_phases() -> list[Phase]:
    """Run once before the first iteration: `RunStart -> HookDecisionApplier`."""
    return [RunStart(), HookDecisionApplier()]


def default_phases() -> list[Phase]:
    """One iteration: `IterationGuards -> ReasoningPhase -> HookDecisionApplier -> OutputPhase ->
    ToolPhase -> HookDecisionApplier` (`OutputPhase` does nothing without an `output_type`)."""
    return [
        IterationGuards(),
        ReasoningPhase(),
        HookDecisionApplier(),
        OutputPhase(),
        ToolPhase(),
        HookDecisionApplier(),
    ]


_BETWEEN = (HookDecisionApplier, OutputPhase)  # act on nothing outside the run


def response_may_wait(phases: Sequence[Phase], hooked: bool) -> bool:
    """Whether a step's response may be committed with its first call's start (or the calls
    held, or the run's end) instead of on its own: only when nothing can act on it between the
    two, i.e. the loop has no hooks and only built-in phases that act on nothing outside the run
    stand between the reasoning phase and the tool phase (adr/0010)."""
    kinds = [type(phase) for phase in phases]
    if hooked or kinds.count(ReasoningPhase) != 1 or ToolPhase not in kinds:
        return False
    start, end = kinds.index(ReasoningPhase), kinds.index(ToolPhase)
    return start < end and all(kind in _BETWEEN for kind in kinds[start + 1 : end])


__all__ = [
    "Admitted",
    "HookDecisionApplier",
    "IterationGuards",
    "OutputPhase",
    "ReasoningPhase",
    "RunStart",
    "ToolPhase",
    "ask_model",
    "default_phases",
    "default_start_phases",
    "response_may_wait",
    "traced_model",
]

"""The built-in phases (run start, iteration guards, reasoning, hook decisions, tools with the
approval gate, structured output) and the default sequences. Published by `reactloop.phases`."""

from __future__ import annotations

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
    "traced_model",
]

"""Writing and composing phases: the `Phase` contract, the `Run` a phase sees, the decisions it
returns, and the built-in phases."""

from reactloop._core import (
    Finishing,
    NextIteration,
    Phase,
    PhaseDecision,
    Proceed,
    RunState,
    Step,
    StepPlan,
    Stop,
    ToolResult,
    publish,
)
from reactloop._loop import LoopOptions, Run
from reactloop._phases import (
    HookDecisionApplier,
    IterationGuards,
    OutputPhase,
    ReasoningPhase,
    RunStart,
    ToolPhase,
    ask_model,
    default_phases,
    default_start_phases,
)
from reactloop._policies import RunLimiter

__all__ = [
    "Finishing",
    "HookDecisionApplier",
    "IterationGuards",
    "LoopOptions",
    "NextIteration",
    "OutputPhase",
    "Phase",
    "PhaseDecision",
    "Proceed",
    "ReasoningPhase",
    "Run",
    "RunLimiter",
    "RunStart",
    "RunState",
    "Step",
    "StepPlan",
    "Stop",
    "ToolPhase",
    "ToolResult",
    "ask_model",
    "default_phases",
    "default_start_phases",
]

publish(__name__, globals())

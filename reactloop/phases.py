"""Writing and composing phases: the `Phase` contract, the `Run` a phase sees, the decisions it
returns, and the built-in phases."""

from reactloop._config import (
    LoopOptions,
)
from reactloop._contracts import (
    Phase,
)
from reactloop._decisions import (
    NextIteration,
    PhaseDecision,
    Proceed,
    Stop,
)
from reactloop._limits import (
    RunLimiter,
)
from reactloop._phases import (
    HookDecisionApplier,
    IterationGuards,
    OutputPhase,
    ReasoningPhase,
    RunStart,
    ToolPhase,
    default_phases,
    default_start_phases,
)
from reactloop._run import (
    Run,
    StepPlan,
)
from reactloop._state import (
    Finishing,
    RunState,
    Step,
    ToolResult,
)

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
    "default_phases",
    "default_start_phases",
]

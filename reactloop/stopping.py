"""When a run stops: stop conditions, the `StopCondition` contract, and cap and repetition
policies."""

from reactloop._contracts import (
    AnyOf,
    CheckPoint,
    StopCondition,
)
from reactloop._decisions import (
    StopSignal,
)
from reactloop._run import (
    CapPolicy,
    RepetitionPolicy,
)
from reactloop._stop import (
    FinalAnswerMarker,
    MaxIterations,
    MaxToolCalls,
    StopWhen,
    TimeBudget,
    TokenBudget,
    ToolCalled,
)

__all__ = [
    "AnyOf",
    "CapPolicy",
    "CheckPoint",
    "FinalAnswerMarker",
    "MaxIterations",
    "MaxToolCalls",
    "RepetitionPolicy",
    "StopCondition",
    "StopSignal",
    "StopWhen",
    "TimeBudget",
    "TokenBudget",
    "ToolCalled",
]

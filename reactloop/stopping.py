"""When a run stops: stop conditions, the `StopCondition` contract, cap and repetition
policies, and the loop's `Limits` (caps, timeouts, concurrency: `limits=Limits(...)`)."""

from reactloop._core import AnyOf, CheckPoint, StopCondition, StopSignal, publish
from reactloop._policies import (
    CapPolicy,
    CostBudget,
    FinalAnswerMarker,
    Limits,
    MaxIterations,
    MaxToolCalls,
    RepetitionPolicy,
    StopWhen,
    TimeBudget,
    TokenBudget,
    ToolCalled,
)

__all__ = [
    "AnyOf",
    "CapPolicy",
    "CheckPoint",
    "CostBudget",
    "FinalAnswerMarker",
    "Limits",
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

publish(__name__, globals())

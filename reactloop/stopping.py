"""When a run stops: stop conditions, the `StopCondition` contract, and cap and repetition
policies."""

from reactloop._core import AnyOf, CheckPoint, StopCondition, StopSignal
from reactloop._policies import (
    CapPolicy,
    FinalAnswerMarker,
    MaxIterations,
    MaxToolCalls,
    RepetitionPolicy,
    StopWhen,
    TimeBudget,
    TokenBudget,
    ToolCalled,
)
from reactloop._public import publish

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

publish(__name__, globals())

"""The context window: budgets, token estimation, and the tracker that trims history."""

from reactloop._core import publish
from reactloop._policies import (
    ContextBudget,
    ContextTracker,
    ContextWindow,
    MessageTokenEstimator,
    TokenEstimator,
    estimate_text_tokens,
)

__all__ = [
    "ContextBudget",
    "ContextTracker",
    "ContextWindow",
    "MessageTokenEstimator",
    "TokenEstimator",
    "estimate_text_tokens",
]

publish(__name__, globals())

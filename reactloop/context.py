"""The context window: budgets, token estimation, and the tracker that trims history."""

from reactloop._context import (
    ContextBudget,
    ContextTracker,
    ContextWindow,
)
from reactloop._tokens import (
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

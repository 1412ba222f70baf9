"""The policies a loop applies while it runs: stop conditions and caps, hooks and their
merging, input guards, retry, the context window and token estimation, run limits.
Published by `reactloop.stopping`, `reactloop.hooks`, `reactloop.context`, `reactloop.models`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._policies._caps import CapPolicy, RepetitionPolicy
from reactloop._policies._context import ContextBudget, ContextTracker, ContextWindow
from reactloop._policies._guards import NON_EMPTY_INPUT, BlockedPatterns, MaxInputLength
from reactloop._policies._hooks import HookSet, Verdict
from reactloop._policies._limits import RunLimiter
from reactloop._policies._options import Limits
from reactloop._policies._prefix import PrefixWatch
from reactloop._policies._retry import (
    RetryNotice,
    RetryPolicy,
    Sleep,
    call_with_retry,
    is_retryable,
    retry_after,
)
from reactloop._policies._stop import (
    CostBudget,
    FinalAnswerMarker,
    MaxIterations,
    MaxToolCalls,
    StopWhen,
    TimeBudget,
    TokenBudget,
    ToolCalled,
)
from reactloop._policies._tokens import MessageTokenEstimator, TokenEstimator, estimate_text_tokens

__all__ = [
    "NON_EMPTY_INPUT",
    "BlockedPatterns",
    "CapPolicy",
    "ContextBudget",
    "ContextTracker",
    "ContextWindow",
    "CostBudget",
    "FinalAnswerMarker",
    "HookSet",
    "Limits",
    "MaxInputLength",
    "MaxIterations",
    "MaxToolCalls",
    "MessageTokenEstimator",
    "PrefixWatch",
    "RepetitionPolicy",
    "RetryNotice",
    "RetryPolicy",
    "RunLimiter",
    "Sleep",
    "StopWhen",
    "TimeBudget",
    "TokenBudget",
    "TokenEstimator",
    "ToolCalled",
    "Verdict",
    "call_with_retry",
    "estimate_text_tokens",
    "is_retryable",
    "retry_after",
]

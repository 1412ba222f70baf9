"""Names that left the top level of `reactloop` (0.0 -> 0.1), and the error that says where.

`from reactloop import X` raises `MovedNameError`, an `ImportError` (an `AttributeError` there
would be replaced by Python's bare "cannot import name"). Any other lookup (`reactloop.X`,
`hasattr`, `getattr(reactloop, "X", None)`) raises `MovedAttributeError`, an `AttributeError`
with the same message: the name behaves like a missing attribute (hasattr is False, getattr's
default is returned) and still says where it went. The caller's frame tells which: it is running
IMPORT_FROM or not.
"""

from __future__ import annotations

import dis
import sys
from types import FrameType

from reactloop._errors import ErrorCode, MovedNameError, ReactLoopError


class MovedAttributeError(ReactLoopError, AttributeError):
    """A moved name looked up as an attribute: a missing attribute that says where it went."""

    code = ErrorCode.CONFIGURATION

    def __init__(self, name: str, rule: str) -> None:
        super().__init__(f"reactloop has no {name!r}: {rule}")
        self.name = name
        self.rule = rule


_IMPORT_FROM = dis.opmap["IMPORT_FROM"]

MOVED: dict[str, str] = {
    "AnyOf": "reactloop.stopping",
    "AuthenticationError": "reactloop.errors",
    "BlockedPatterns": "reactloop.hooks",
    "CheckPoint": "reactloop.stopping",
    "ContextBudget": "reactloop.context",
    "ContextTooLongError": "reactloop.errors",
    "ContextTracker": "reactloop.context",
    "ContractError": "reactloop.errors",
    "DefaultErrorMessages": "reactloop.errors",
    "ErrorCode": "reactloop.errors",
    "ErrorMessageResolver": "reactloop.errors",
    "FinishReason": "reactloop.models",
    "Finishing": "reactloop.phases",
    "ForcedTool": "reactloop.models",
    "GuardRejectedError": "reactloop.errors",
    "HookDecisionApplier": "reactloop.phases",
    "HookError": "reactloop.errors",
    "HookFailed": "reactloop.events",
    "HookFailure": "reactloop.hooks",
    "HookPoint": "reactloop.hooks",
    "InputGuard": "reactloop.hooks",
    "InstructionsRole": "reactloop.providers",
    "InvalidRequestError": "reactloop.errors",
    "InvalidResponseError": "reactloop.errors",
    "IterationGuards": "reactloop.phases",
    "LoopOptions": "reactloop.phases",
    "MaxInputLength": "reactloop.hooks",
    "MaxTokensField": "reactloop.providers",
    "MessageTokenEstimator": "reactloop.context",
    "ModelDelta": "reactloop.models",
    "ModelError": "reactloop.errors",
    "ModelRequest": "reactloop.models",
    "ModelResponse": "reactloop.models",
    "ModelRetrying": "reactloop.events",
    "ModelTimeoutError": "reactloop.errors",
    "MovedNameError": "reactloop.errors",
    "NextIteration": "reactloop.phases",
    "NoResultError": "reactloop.errors",
    "Phase": "reactloop.phases",
    "PhaseDecision": "reactloop.phases",
    "PhaseFinished": "reactloop.events",
    "Proceed": "reactloop.phases",
    "ProviderUnavailableError": "reactloop.errors",
    "RateLimitedError": "reactloop.errors",
    "ReasoningPhase": "reactloop.phases",
    "RepairKind": "reactloop.messages",
    "RepairNote": "reactloop.messages",
    "RepairedHistory": "reactloop.messages",
    "RepetitionPolicy": "reactloop.stopping",
    "ResponseFormat": "reactloop.models",
    "ResponseFormatKind": "reactloop.models",
    "RetryNotice": "reactloop.models",
    "Run": "reactloop.phases",
    "RunFailed": "reactloop.events",
    "RunFinished": "reactloop.events",
    "RunLimitError": "reactloop.errors",
    "RunLimiter": "reactloop.phases",
    "RunStart": "reactloop.phases",
    "RunStarted": "reactloop.events",
    "RunState": "reactloop.phases",
    "RunTimeoutError": "reactloop.errors",
    "ScriptExhaustedError": "reactloop.errors",
    "Step": "reactloop.phases",
    "StepFinished": "reactloop.events",
    "StepPlan": "reactloop.phases",
    "StepStarted": "reactloop.events",
    "Stop": "reactloop.phases",
    "StopCondition": "reactloop.stopping",
    "StopSignal": "reactloop.stopping",
    "TextDelta": "reactloop.models",
    "TextStreamed": "reactloop.events",
    "TokenEstimator": "reactloop.context",
    "ToolArgumentsError": "reactloop.errors",
    "ToolCallDelta": "reactloop.models",
    "ToolCallFinished": "reactloop.events",
    "ToolCallStarted": "reactloop.events",
    "ToolCallStreamed": "reactloop.events",
    "ToolChoice": "reactloop.models",
    "ToolDefinitionError": "reactloop.errors",
    "ToolError": "reactloop.errors",
    "ToolExecutionError": "reactloop.errors",
    "ToolPhase": "reactloop.phases",
    "ToolRefusedError": "reactloop.errors",
    "ToolResult": "reactloop.phases",
    "ToolSpec": "reactloop.models",
    "ToolTimeoutError": "reactloop.errors",
    "UnknownToolError": "reactloop.errors",
    "call_with_retry": "reactloop.models",
    "default_phases": "reactloop.phases",
    "default_start_phases": "reactloop.phases",
    "estimate_text_tokens": "reactloop.context",
    "is_retryable": "reactloop.models",
    "model_from_string": "reactloop.providers",
    "repair_history": "reactloop.messages",
    "user_message": "reactloop.errors",
}

RENAMED: dict[str, tuple[str, str]] = {
    "ErrorEvent": ("RunFailed", "reactloop.events"),
    "TextDeltaEvent": ("TextStreamed", "reactloop.events"),
    "ToolCallDeltaEvent": ("ToolCallStreamed", "reactloop.events"),
    "ToolResultEvent": ("ToolCallFinished", "reactloop.events"),
}


ELSEWHERE: dict[str, str] = {
    name: "reactloop.providers"
    for name in (
        "AzureOpenAIModel", "AzureOpenAIResponsesModel", "FallbackModel", "GeminiModel", "HOSTS",
        "ModelProfile", "OpenAICompatibleHost", "OpenAIResponsesModel", "ReasoningDialect",
    )
}  # fmt: skip
"""Providers never at the top level (beside `AnthropicModel` and `OpenAIModel`, which are), so
`from reactloop import GeminiModel` is a natural guess: it says where they are."""


def moved_name(name: str) -> Exception:
    """The error for `reactloop.<name>`: where a moved or renamed name went, else AttributeError
    (raised by the package's `__getattr__`: two frames up is the code looking the name up)."""
    rule = _where(name)
    if rule is None:
        return AttributeError(f"module 'reactloop' has no attribute {name!r}")
    if _importing(sys._getframe(2)):
        return MovedNameError(name, rule)
    return MovedAttributeError(name, rule)


def _where(name: str) -> str | None:
    if name in MOVED:
        home = MOVED[name]
        return f"it moved to {home}: `from {home} import {name}`"
    if name in ELSEWHERE:
        home = ELSEWHERE[name]
        return f"it is in {home}: `from {home} import {name}`"
    if name == "Continue":
        return "it was removed: a hook returns None to let the run go on"
    if name in RENAMED:
        new, home = RENAMED[name]
        return f"it was renamed {new}: `from {home} import {new}`"
    return None


def _importing(frame: FrameType) -> bool:
    """Whether `frame` is running `from reactloop import ...` (its IMPORT_FROM)."""
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _IMPORT_FROM

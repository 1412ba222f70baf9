"""Names that left the top level of `reactloop` (0.0 -> 0.1), and the error that says where."""

from __future__ import annotations

from reactloop._errors import MovedNameError

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


def moved_name(name: str) -> Exception:
    """The error for `reactloop.<name>`: where a moved or renamed name went, else AttributeError."""
    if name in MOVED:
        home = MOVED[name]
        return MovedNameError(name, f"it moved to {home}: `from {home} import {name}`")
    if name == "Continue":
        return MovedNameError(name, "it was removed: a hook returns None to let the run go on")
    if name in RENAMED:
        new, home = RENAMED[name]
        return MovedNameError(name, f"it was renamed {new}: `from {home} import {new}`")
    return AttributeError(f"module 'reactloop' has no attribute {name!r}")

"""The public surface is pinned: adding or removing a name must be a deliberate change."""

from __future__ import annotations

import reactloop
import reactloop.testing

EXPECTED = {
    "AnthropicModel", "AnyOf", "AssistantMessage", "AuthenticationError", "BlockedPatterns",
    "CapPolicy", "CheckPoint", "ConfigurationError", "ContextBudget", "ContextTooLongError",
    "ContextTracker", "ContextWindow", "Continue", "DefaultErrorMessages", "ErrorCode",
    "ErrorEvent", "ErrorMessageResolver", "Event", "FinalAnswerMarker", "FinishReason",
    "Finishing", "ForcedTool", "FunctionTool", "GuardRejectedError", "Hook", "HookDecisionApplier",
    "HookError", "HookFailed", "HookFailure", "HookPoint", "InputGuard", "InstructionsRole",
    "InvalidRequestError", "InvalidResponseError", "IterationGuards", "LoopOptions",
    "MaxInputLength", "MaxIterations", "MaxTokensField", "MaxToolCalls", "Message",
    "MessageTokenEstimator", "Model", "ModelDelta", "ModelError", "ModelRequest", "ModelResponse",
    "ModelRetrying", "ModelSettings", "ModelTimeoutError", "NextIteration", "OpenAIModel",
    "Override", "Phase", "PhaseDecision", "PhaseFinished", "Proceed", "ProviderUnavailableError",
    "RateLimitedError", "ReActLoop", "ReactLoopError", "ReasoningPhase", "Reject", "RepairKind",
    "RepairNote", "RepairedHistory", "RepetitionPolicy", "ResponseFormat", "ResponseFormatKind",
    "RetryNotice", "RetryPolicy", "Run", "RunContext", "RunFinished", "RunHandle", "RunLimitError",
    "RunLimiter", "RunResult", "RunStart", "RunStarted", "RunState", "RunStream",
    "RunTimeoutError", "ScriptExhaustedError", "Step", "StepFinished", "StepPlan", "StepStarted",
    "Stop", "StopReason", "StopRun", "StopSignal", "StopWhen", "SystemMessage", "TextDelta",
    "TextDeltaEvent", "TimeBudget", "TokenBudget", "TokenEstimator", "Tool", "ToolArgumentsError",
    "ToolCall", "ToolCallDelta", "ToolCallDeltaEvent", "ToolCallStarted", "ToolCalled",
    "ToolChoice", "ToolDefinitionError", "ToolError", "ToolExecutionError", "ToolMessage",
    "ToolPhase", "ToolRefusedError", "ToolResult", "ToolResultEvent", "ToolSpec",
    "ToolTimeoutError", "UnknownToolError", "Usage", "UserMessage", "call_with_retry",
    "default_phases", "default_start_phases", "estimate_text_tokens", "is_retryable",
    "model_from_string", "repair_history", "tool", "user_message",
}  # fmt: skip


def test_all_is_pinned() -> None:
    assert set(reactloop.__all__) == EXPECTED


def test_every_exported_name_exists() -> None:
    missing = [name for name in reactloop.__all__ if not hasattr(reactloop, name)]
    assert missing == []


def test_testing_module_exports_exist() -> None:
    assert all(hasattr(reactloop.testing, name) for name in reactloop.testing.__all__)

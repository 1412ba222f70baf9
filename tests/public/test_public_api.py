"""The public surface is pinned: adding, moving or removing a name must be a deliberate change."""

from __future__ import annotations

import importlib

import pytest

import reactloop
from reactloop._moved import ELSEWHERE
from reactloop.errors import MovedNameError, ReactLoopError

PINNED: dict[str, set[str]] = {
    "reactloop": {
        "AnthropicModel", "ApprovalPolicy", "Approve", "AssistantMessage", "CapPolicy",
        "AudioPart", "DocumentPart", "ImagePart",
        "Deny", "Edit", "ConfigurationError",
        "ContextWindow", "Event", "FinalAnswerMarker", "FunctionTool", "Hook", "Limits",
        "MCPServerHTTP", "MCPServerStdio", "RelevanceSelector",
        "MaxIterations", "MaxToolCalls", "MemoryStore", "SqliteStore", "Message", "Model",
        "ModelSettings", "OpenAIModel",
        "Override", "ReActLoop", "ReactLoopError", "Reject", "RetryPolicy", "RunContext",
        "RunHandle", "RunResult", "RunStream", "StopReason", "StopRun", "StopWhen",
        "SystemMessage", "TimeBudget", "TokenBudget", "Tool", "ToolCall", "ToolCalled",
        "ToolMessage", "Usage", "UserMessage", "tool"
    },
    "reactloop.events": {
        "AgentCall", "NestedEvent", "Event", "HookFailed", "ModelRetrying", "ModelSwitched",
        "PhaseFinished",
        "RunFailed", "RunFinished",
        "OutputStreamed", "RunPaused", "RunStarted", "StepFinished", "StepStarted", "TextStreamed",
        "ReasoningStreamed", "ToolCallFinished", "ToolCallStarted", "ToolCallStreamed",
        "ToolResultDiscarded"
    },
    "reactloop.output": {
        "FINAL_TOOL", "OutputOptions", "OutputPhase", "OutputRetry", "OutputStrategy",
        "OutputValidationError",
        "OutputValidator", "PartialJson", "strip_fences",
    },
    "reactloop.errors": {
        "AgentDepthError", "AgentRunError", "MCPToolError", "ToolsetError",
        "ToolsetConnectionError",
        "OutputValidationError", "PartialJsonError", "StrictSchemaError",
        "CassetteError", "CassetteExhaustedError", "CassetteFormatError",
        "CassetteMismatchError", "RecordedToolError", "UnrecordedCallError",
        "AuthenticationError", "ConfigurationError", "ContextTooLongError", "ContractError",
        "DecisionError", "LeaseHeldError", "LeaseLostError", "DefaultErrorMessages", "ErrorCode",
        "ErrorMessageResolver", "GuardRejectedError", "RunExistsError",
        "HookError", "InvalidRequestError", "InvalidResponseError", "ModelError",
        "MissingToolError", "ModelTimeoutError", "MovedNameError", "NoResultError",
        "ProviderConfigurationError", "ProviderUnavailableError",
        "RateLimitedError", "ReactLoopError", "RunInProgressError", "RunLimitError",
        "RunNotFoundError",
        "RunTimeoutError", "ScriptExhaustedError", "SessionBusyError", "StateTokenError",
        "StateTokenReason", "StoreError", "UnreadableRunError",
        "ToolArgumentsError", "ToolDefinitionError", "ToolError",
        "ToolExecutionError", "ToolRefusedError", "ToolTimeoutError", "UnknownToolError",
        "user_message", "UnsupportedContentError", "ContentTooLargeError",
        "ContentFilteredError", "FilterVerdict",
        "RequestRejectedError", "MalformedRequestError", "RequestTooLargeError",
        "UnauthorizedError", "ForbiddenError", "TooManyRunsError", "NotPendingError",
        "UnknownRunError",
        "TemporalRunError", "TemporalNotInstalledError", "UnknownLoopError", "RunFailedError",
        "RunNotPausedError", "PayloadTooLargeError", "RemoteError", "HistoryLimitError",
    },
    "reactloop.messages": {
        "AssistantMessage", "AssistantPart", "ReasoningPart", "TextPart", "Message", "RepairKind",
        "AudioPart", "ContentPart", "DocumentPart", "ImageDetail", "ImagePart", "CachePoint",
        "RepairNote", "RepairedHistory",
        "SystemMessage", "ToolCall", "ToolMessage", "Usage", "UserMessage", "repair_history"
    },
    "reactloop.models": {
        "FinishReason", "ForcedTool", "Model", "ModelDelta", "ModelRequest", "ModelResponse",
        "ModelSettings", "ResponseFormat", "ResponseFormatKind", "RetryNotice", "RetryPolicy",
        "TextDelta", "ToolCallDelta", "ToolChoice", "ToolSpec", "call_with_retry", "is_retryable",
        "ReasoningDelta", "ReasoningEffort", "ReasoningSettings", "CacheSettings",
    },
    "reactloop.providers": {
        "AnthropicModel", "InstructionsRole", "MaxTokensField", "ModelProfile", "OpenAIModel",
        "OpenAIResponsesModel", "ResponsesConversation", "model_from_string", "model_profile",
        "DEFAULT_SWITCH_ON", "FallbackModel", "GeminiModel",
        "AzureOpenAIModel", "AzureOpenAIResponsesModel",
        "HOSTS", "OpenAICompatibleHost", "ReasoningDialect",
    },
    "reactloop.phases": {
        "Finishing", "HookDecisionApplier", "IterationGuards", "LoopOptions",
        "NextIteration", "OutputPhase", "Phase", "PhaseDecision", "Proceed", "ReasoningPhase",
        "Run",
        "RunLimiter", "RunStart", "RunState", "Step", "StepPlan", "Stop", "ToolPhase",
        "ToolResult", "ask_model", "default_phases", "default_start_phases"
    },
    "reactloop.hooks": {
        "BlockedPatterns", "Hook", "HookFailure", "HookPoint", "InputGuard",
        "MaxInputLength", "Override", "Reject", "StopRun"
    },
    "reactloop.stopping": {
        "AnyOf", "CapPolicy", "CheckPoint", "FinalAnswerMarker", "Limits", "MaxIterations",
        "MaxToolCalls", "RepetitionPolicy", "StopCondition", "StopSignal", "StopWhen",
        "TimeBudget", "TokenBudget", "ToolCalled", "CostBudget",
    },
    "reactloop.costs": {
        "CostOptions", "GenAIPrices", "ModelPrice", "PriceTable", "Prices", "cost_of",
    },
    "reactloop.context": {
        "ContextBudget", "ContextTracker", "ContextWindow", "MessageTokenEstimator",
        "TokenEstimator", "estimate_text_tokens"
    },
    "reactloop.approval": {
        "ApprovalCheck", "ApprovalOptions", "ApprovalPolicy", "Approve", "Decision",
        "DecisionLike", "DecisionScope",
        "Deny",
        "Edit",
        "ExternalFailure", "ExternalResult", "HoldKind", "PendingCall",
    },
    "reactloop.stores": {
        "CallsHeld", "CallStarted", "DecisionsSaved", "InstructionsSaved", "LeasingStore",
        "MemoryStore", "PhaseDataSaved",
        "PostgresStore", "Record", "ResumeOptions", "ResponseSaved", "ResultSaved",
        "RunCreated", "RunEnded",
        "RunStatus", "RunStore", "RunSummary", "SessionTurn", "SessionTurnsStore", "SqliteStore",
        "StepClosed", "StoredRun",
        "SubRunLinked", "RunParked", "RunUnparked", "StoreTimeouts",
        "resume_claimable", "store_from_url", "unpark_run",
    },
    "reactloop.tools": {
        "AgentTool", "FunctionTool", "MCPServerHTTP", "MCPServerStdio", "RelevanceSelector",
        "ServerRestartPolicy", "Tool", "ToolSelection", "ToolSelector", "ToolSource", "Toolset",
        "tool",
    },
    "reactloop.serve": {
        "ANONYMOUS", "AccessRequest", "Action", "Authorize", "ChatServer", "CorsOptions",
        "DisconnectPolicy", "Identify", "ServeOptions",
        "RequestRejectedError", "MalformedRequestError", "RequestTooLargeError",
        "UnauthorizedError", "ForbiddenError", "TooManyRunsError", "NotPendingError",
        "UnknownRunError", "BackendConfig", "RunBackend", "ServedStream",
    },
    "reactloop.temporal": {
        "ActivityOptions", "ModelActivity", "PayloadTooLargeError", "RunFailedError",
        "RunNotPausedError", "TemporalLoop", "TemporalNotInstalledError", "TemporalRun",
        "TemporalRunError", "ToolActivity", "UnknownLoopError", "temporal_worker",
        "temporal_replayer",
        "EventChannel", "RemoteError", "WorkflowEvents", "HistoryLimitError", "HistoryLimits",
    },
    "reactloop.telemetry": {"RunContextFilter", "Telemetry"},
    "reactloop.testing": {
        "Cassette", "RecordingModel", "ReplayModel",
        "FakeClock", "FakeTool", "FakeToolset", "FunctionModel", "ScriptedModel", "call",
        "deltas_of",
        "make_run", "reply", "run_phase",
        # the provider kit (docs/adding-a-provider.md)
        "CONFORMANCE_CHECKS", "CheckSkipped", "ConformanceCheck", "ConformanceError",
        "ConformanceFailure", "ConformanceReport", "ErrorKind", "Features", "ProviderHarness",
        "ScriptedAnswer", "ScriptedError", "ScriptedReasoning", "SentRequest", "WireEnding",
        "WireReply", "WireRequest", "WireServer", "check_provider", "json_reply", "sse_reply",
    },
}  # fmt: skip

THEMED = [name for name in PINNED if name not in ("reactloop", "reactloop.testing")]


@pytest.mark.parametrize("module", PINNED)
def test_all_is_pinned(module: str) -> None:
    assert set(importlib.import_module(module).__all__) == PINNED[module]


@pytest.mark.parametrize("module", PINNED)
def test_every_exported_name_exists(module: str) -> None:
    public = importlib.import_module(module)
    assert [name for name in public.__all__ if not hasattr(public, name)] == []


def test_the_top_level_stays_small() -> None:
    assert len(reactloop.__all__) <= 50


def test_every_top_level_name_has_a_themed_home_or_is_the_loop_itself() -> None:
    themed = set().union(*(PINNED[module] for module in THEMED))
    assert set(reactloop.__all__) - themed == {
        "ReActLoop", "RunContext", "RunHandle", "RunResult", "RunStream", "StopReason",
    }  # fmt: skip


def test_a_name_in_two_places_is_the_same_object() -> None:
    seen: dict[str, object] = {}
    for module in ["reactloop", *THEMED]:
        public = importlib.import_module(module)
        for name in public.__all__:
            assert seen.setdefault(name, getattr(public, name)) is getattr(public, name), name


MOVED = [
    ("TextDelta", "reactloop.models", "from reactloop.models import TextDelta"),
    ("Proceed", "reactloop.phases", "from reactloop.phases import Proceed"),
    ("StopSignal", "reactloop.stopping", "from reactloop.stopping import StopSignal"),
    ("HookError", "reactloop.errors", "from reactloop.errors import HookError"),
    (
        "ToolResultEvent",
        "renamed ToolCallFinished",
        "from reactloop.events import ToolCallFinished",
    ),
    ("TextDeltaEvent", "renamed TextStreamed", "from reactloop.events import TextStreamed"),
    ("ErrorEvent", "renamed RunFailed", "from reactloop.events import RunFailed"),
    ("Continue", "removed", "a hook returns None"),
    ("GeminiModel", "is in reactloop.providers", "from reactloop.providers import GeminiModel"),
    (
        "AzureOpenAIModel",
        "is in reactloop.providers",
        "from reactloop.providers import AzureOpenAIModel",
    ),
]


@pytest.mark.parametrize(("name", "where", "how"), MOVED)
def test_importing_a_moved_name_says_where_it_went(name: str, where: str, how: str) -> None:
    with pytest.raises(ImportError) as caught:
        exec(f"from reactloop import {name}", {})
    assert isinstance(caught.value, MovedNameError) and caught.value.name == name
    assert where in str(caught.value) and how in str(caught.value)


@pytest.mark.parametrize(("name", "where", "how"), MOVED)
def test_a_moved_name_looked_up_as_an_attribute_is_missing_and_says_where_it_went(
    name: str, where: str, how: str
) -> None:
    assert not hasattr(reactloop, name)
    assert getattr(reactloop, name, "default") == "default"
    with pytest.raises(AttributeError) as caught:
        getattr(reactloop, name)
    assert isinstance(caught.value, ReactLoopError) and caught.value.name == name
    assert where in str(caught.value) and how in str(caught.value)


def test_each_provider_said_to_be_elsewhere_is_there_and_not_at_the_top() -> None:
    for name, home in ELSEWHERE.items():
        assert name in importlib.import_module(home).__all__ and name not in reactloop.__all__


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nonsense'"):
        _ = reactloop.Nonsense  # type: ignore[attr-defined]
    assert not hasattr(reactloop, "also_not_there")

"""What a run emits while it runs: `async for event in events` and `match` on the class."""

from reactloop._core import (
    AgentCall,
    Event,
    HookFailed,
    ModelRetrying,
    NestedEvent,
    OutputStreamed,
    PhaseFinished,
    ReasoningStreamed,
    RunFailed,
    RunFinished,
    RunPaused,
    RunStarted,
    StepFinished,
    StepStarted,
    TextStreamed,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStreamed,
    ToolResultDiscarded,
    publish,
)

__all__ = [
    "AgentCall",
    "Event",
    "HookFailed",
    "ModelRetrying",
    "NestedEvent",
    "OutputStreamed",
    "PhaseFinished",
    "ReasoningStreamed",
    "RunFailed",
    "RunFinished",
    "RunPaused",
    "RunStarted",
    "StepFinished",
    "StepStarted",
    "TextStreamed",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolCallStreamed",
    "ToolResultDiscarded",
]

publish(__name__, globals())

"""What a run emits while it runs: `async for event in events` and `match` on the class."""

from reactloop._events import (
    Event,
    HookFailed,
    ModelRetrying,
    OutputStreamed,
    PhaseFinished,
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
)

__all__ = [
    "Event",
    "HookFailed",
    "ModelRetrying",
    "OutputStreamed",
    "PhaseFinished",
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
]

"""The conversation: messages, tool calls, usage, and history repair."""

from reactloop._core import (
    AssistantMessage,
    AssistantPart,
    Message,
    ReasoningPart,
    RepairedHistory,
    RepairKind,
    RepairNote,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    publish,
    repair_history,
)

__all__ = [
    "AssistantMessage",
    "AssistantPart",
    "Message",
    "ReasoningPart",
    "RepairKind",
    "RepairNote",
    "RepairedHistory",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolMessage",
    "Usage",
    "UserMessage",
    "repair_history",
]

publish(__name__, globals())

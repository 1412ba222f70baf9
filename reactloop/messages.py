"""The conversation: messages, tool calls, usage, and history repair."""

from reactloop._core import (
    AssistantMessage,
    Message,
    RepairedHistory,
    RepairKind,
    RepairNote,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    publish,
    repair_history,
)

__all__ = [
    "AssistantMessage",
    "Message",
    "RepairKind",
    "RepairNote",
    "RepairedHistory",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "Usage",
    "UserMessage",
    "repair_history",
]

publish(__name__, globals())

"""The conversation: messages, tool calls, usage, and history repair."""

from reactloop._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from reactloop._repair import (
    RepairedHistory,
    RepairKind,
    RepairNote,
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

"""The conversation: messages and their parts (text, reasoning, images, documents, audio),
tool calls, usage, and history repair."""

from reactloop._core import (
    AssistantMessage,
    AssistantPart,
    AudioPart,
    ContentPart,
    DocumentPart,
    ImageDetail,
    ImagePart,
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
    "AudioPart",
    "ContentPart",
    "DocumentPart",
    "ImageDetail",
    "ImagePart",
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

"""reactloop: a decomposed ReAct loop for tool-using LLM agents.

A thin `ReActLoop` runs small phases (`IterationGuards`, `ReasoningPhase`, `HookDecisionApplier`,
`ToolPhase`) that each return a typed decision; compose your own sequence, insert phases, and test
each one alone with the fakes in `reactloop.testing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop._approval import Approve, Deny, Edit
from reactloop._context import (
    ContextWindow,
)
from reactloop._contracts import (
    Hook,
    Model,
    Tool,
)
from reactloop._decisions import (
    Override,
    Reject,
    StopReason,
    StopRun,
)
from reactloop._errors import (
    ConfigurationError,
    ReactLoopError,
)
from reactloop._events import (
    Event,
)
from reactloop._handle import (
    RunHandle,
    RunStream,
)
from reactloop._loop import (
    ReActLoop,
)
from reactloop._mcp import MCPServerHTTP, MCPServerStdio
from reactloop._messages import (
    AssistantMessage,
    Message,
    ModelSettings,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from reactloop._moved import moved_name
from reactloop._policy import ApprovalPolicy
from reactloop._providers import (
    AnthropicModel,
    OpenAIModel,
)
from reactloop._retry import (
    RetryPolicy,
)
from reactloop._run import (
    CapPolicy,
)
from reactloop._selection import RelevanceSelector
from reactloop._state import (
    RunContext,
    RunResult,
)
from reactloop._stop import (
    FinalAnswerMarker,
    MaxIterations,
    MaxToolCalls,
    StopWhen,
    TimeBudget,
    TokenBudget,
    ToolCalled,
)
from reactloop._stores import MemoryStore, SqliteStore
from reactloop._tool import (
    FunctionTool,
    tool,
)
from reactloop._version import __version__ as __version__

__all__ = [
    "AnthropicModel",
    "ApprovalPolicy",
    "Approve",
    "AssistantMessage",
    "CapPolicy",
    "ConfigurationError",
    "ContextWindow",
    "Deny",
    "Edit",
    "Event",
    "FinalAnswerMarker",
    "FunctionTool",
    "Hook",
    "MCPServerHTTP",
    "MCPServerStdio",
    "MaxIterations",
    "MaxToolCalls",
    "MemoryStore",
    "Message",
    "Model",
    "ModelSettings",
    "OpenAIModel",
    "Override",
    "ReActLoop",
    "ReactLoopError",
    "Reject",
    "RelevanceSelector",
    "RetryPolicy",
    "RunContext",
    "RunHandle",
    "RunResult",
    "RunStream",
    "SqliteStore",
    "StopReason",
    "StopRun",
    "StopWhen",
    "SystemMessage",
    "TimeBudget",
    "TokenBudget",
    "Tool",
    "ToolCall",
    "ToolCalled",
    "ToolMessage",
    "Usage",
    "UserMessage",
    "tool",
]


if not TYPE_CHECKING:  # hidden from type checkers, so an unknown name stays a type error

    def __getattr__(name: str) -> object:
        """Say where a name that left the top level went, instead of a bare AttributeError."""
        raise moved_name(name)

"""reactloop: a decomposed ReAct loop for tool-using LLM agents.

A thin `ReActLoop` runs small phases (`IterationGuards`, `ReasoningPhase`, `HookDecisionApplier`,
`ToolPhase`) that each return a typed decision; compose your own sequence, insert phases, and test
each one alone with the fakes in `reactloop.testing`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from reactloop._approval import ApprovalPolicy
from reactloop._core import (
    Approve,
    AssistantMessage,
    AudioPart,
    Deny,
    DocumentPart,
    Edit,
    Event,
    Hook,
    ImagePart,
    Message,
    Model,
    ModelSettings,
    Override,
    Reject,
    RunContext,
    RunResult,
    StopReason,
    StopRun,
    SystemMessage,
    Tool,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    publish,
)
from reactloop._durable import MemoryStore, SqliteStore
from reactloop._errors import (
    ConfigurationError,
    ReactLoopError,
)
from reactloop._loop import ReActLoop, RunHandle, RunStream
from reactloop._moved import moved_name
from reactloop._policies import (
    CapPolicy,
    ContextWindow,
    FinalAnswerMarker,
    Limits,
    MaxIterations,
    MaxToolCalls,
    RetryPolicy,
    StopWhen,
    TimeBudget,
    TokenBudget,
    ToolCalled,
)
from reactloop._tools import FunctionTool, MCPServerHTTP, MCPServerStdio, RelevanceSelector, tool
from reactloop._version import __version__ as __version__

if TYPE_CHECKING:
    from reactloop._providers import AnthropicModel, OpenAIModel

_PROVIDERS = frozenset({"AnthropicModel", "OpenAIModel"})
"""Top-level names loaded on first use: the providers bring httpx, which a loop over another
`Model` never needs."""

__all__ = [
    "AnthropicModel",
    "ApprovalPolicy",
    "Approve",
    "AssistantMessage",
    "AudioPart",
    "CapPolicy",
    "ConfigurationError",
    "ContextWindow",
    "Deny",
    "DocumentPart",
    "Edit",
    "Event",
    "FinalAnswerMarker",
    "FunctionTool",
    "Hook",
    "ImagePart",
    "Limits",
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


publish(__name__, globals(), first=True)

if not TYPE_CHECKING:  # hidden from type checkers, so an unknown name stays a type error

    def __getattr__(name: str) -> object:
        """Load a provider on first use; say where a name that left the top level went,
        instead of a bare AttributeError."""
        if name not in _PROVIDERS:
            raise moved_name(name)
        found = getattr(importlib.import_module("reactloop._providers"), name)
        publish(__name__, {"__all__": [name], name: found}, first=True)
        globals()[name] = found
        return found

    def __dir__() -> list[str]:
        """The module's names, the providers not loaded yet included."""
        return sorted({*globals(), *_PROVIDERS})

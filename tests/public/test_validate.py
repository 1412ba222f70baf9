"""Every option of every configurable class is checked when it is given.

The tables below hold wrong values for each option of each class; a test checks that they cover
every key of `LoopOptions` and every parameter of each class, so an option added without a
check (and a row here) fails the suite.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
import httpx
import pytest
from attrs import define

from reactloop._approval._options import ApprovalOptions
from reactloop._approval._policy import ApprovalPolicy
from reactloop._cassettes._cassette import Cassette
from reactloop._core._approvals import Approve, Deny, Edit, ExternalFailure, ExternalResult
from reactloop._core._cache import CacheSettings
from reactloop._core._contracts import Hook
from reactloop._core._messages import ToolSpec
from reactloop._core._parts import AudioPart, DocumentPart, ImagePart
from reactloop._core._settings import (
    ModelSettings,
    ReasoningEffort,
    ReasoningSettings,
    ResponseFormat,
    ResponseFormatKind,
)
from reactloop._core._state import Step
from reactloop._durable._leases import StoreTimeouts
from reactloop._durable._stores import MemoryStore, PostgresStore, SqliteStore, store_from_url
from reactloop._errors import ConfigurationError, ErrorCode, show
from reactloop._loop._config import (
    LOOP_PARAMETERS,
    MOVED,
    OPTION_NAMES,
    DeprecatedLoopOptions,
    LoopOptions,
)
from reactloop._loop._loop import ReActLoop
from reactloop._output._options import OutputOptions
from reactloop._output._partial import PartialJson
from reactloop._output._spec import OutputStrategy
from reactloop._phases import default_phases, default_start_phases
from reactloop._policies._caps import CapPolicy, RepetitionPolicy
from reactloop._policies._context import ContextWindow
from reactloop._policies._guards import BlockedPatterns, MaxInputLength
from reactloop._policies._limits import RunLimiter
from reactloop._policies._options import Limits
from reactloop._policies._retry import RetryPolicy
from reactloop._policies._stop import (
    CostBudget,
    FinalAnswerMarker,
    MaxIterations,
    MaxToolCalls,
    StopWhen,
    TimeBudget,
    TokenBudget,
    ToolCalled,
)
from reactloop._policies._tokens import MessageTokenEstimator
from reactloop._providers import (
    HOSTS,
    AnthropicModel,
    AzureOpenAIModel,
    AzureOpenAIResponsesModel,
    FallbackModel,
    GeminiModel,
    ModelProfile,
    OpenAICompatibleHost,
    OpenAIModel,
    OpenAIResponsesModel,
    model_from_string,
)
from reactloop._resolver import DEFAULT_RESOLVER, DefaultErrorMessages
from reactloop._serve._app import ChatServer
from reactloop._serve._options import CorsOptions, ServeOptions
from reactloop._telemetry._settings import Telemetry
from reactloop._tools._mcp._servers import MCPServerHTTP, MCPServerStdio, ServerRestartPolicy
from reactloop._tools._options import ToolSelection
from reactloop._tools._selection import RelevanceSelector
from reactloop._tools._tool import FunctionTool, tool
from reactloop._validate import CHECKED_MARK, checked_arguments
from reactloop.costs import CostOptions, ModelPrice, Prices
from reactloop.errors import ContentFilteredError, FilterVerdict
from reactloop.testing import (
    CONFORMANCE_CHECKS,
    FakeClock,
    FakeTool,
    FakeToolset,
    Features,
    FunctionModel,
    RecordingModel,
    ReplayModel,
    ScriptedAnswer,
    ScriptedModel,
    SentRequest,
    check_provider,
    make_run,
)

NAN, INF = float("nan"), float("inf")
PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)
COUNTS: list[object] = [0, -1, 1.5, True, "3", None, NAN]
"""Wrong values for an int >= 1."""
SECONDS: list[object] = [0, -1, NAN, INF, True, "5", None]
"""Wrong values for a positive, finite number of seconds."""
OPTIONAL_SECONDS: list[object] = [0, -1, -0.5, NAN, INF, -INF, True, "5"]
OPTIONAL_COUNTS: list[object] = [0, -1, 1.5, True, "3", NAN]


class NotAHook:
    """Has nothing of a hook."""


class WordPriorityHook(Hook):
    """A hook whose priority is not a number."""

    priority = "high"  # type: ignore[assignment]


class WrongFailureHook(Hook):
    """A hook whose failure policy is not a HookFailure."""

    on_raise = "ignore"  # type: ignore[assignment]


class SyncMethodHook(Hook):
    """A hook whose point is a plain method: awaiting its None would fail mid-run."""

    def before_run(self, run: Any) -> None:  # type: ignore[override]
        return None


def predicate(steps: Sequence[Step]) -> bool:
    """A valid stop predicate."""
    return len(steps) > 3


@define
class UncheckedTool:
    """A user's own tool class that checks nothing: the loop must check what it offers."""

    name: str
    timeout: object = None
    exclusive: object = False
    idempotent: object = False

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, "a user's tool", {"type": "object"})

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        return {}

    async def invoke(self, arguments: dict[str, Any], context: object) -> object:
        return "ok"


def search(query: str) -> str:
    """A valid tool function."""
    return query


LOOP_BAD: dict[str, list[object]] = {
    "tools": [
        "search",
        search,
        5,
        {"search": search},
        [1],
        [None],
        [FunctionTool],
        [UncheckedTool("slow", timeout=0)],
        [UncheckedTool("slow", timeout=NAN)],
        [UncheckedTool("alone", exclusive=1)],
        [UncheckedTool("retry", idempotent="yes")],
        [UncheckedTool("")],
    ],
    "instructions": [5, b"x", lambda: "x", lambda a, b: "x", ["x"]],
    "hooks": [
        NotAHook(),
        [NotAHook()],
        [Hook],
        "hook",
        [None],
        Hook(),
        [WordPriorityHook()],
        [WrongFailureHook()],
        [SyncMethodHook()],
    ],
    "max_iterations": COUNTS,
    "stop_when": ["x", 5, lambda: True, lambda a, b: True, [MaxIterations(1)], True, ToolCalled],
    "input_guards": [predicate, "guard", [5], [lambda: None], [None]],
    "prepare_step": [5, "step", lambda run: run],
    "settings": [None, {"temperature": 0}, ModelSettings, 0.2],
    "strict": [1, "yes", None, 0],
    "retry": [None, 3, RetryPolicy],
    "sleep": [None, 1, lambda: None],
    "error_messages": [None, {"x": "y"}, lambda: "", "sorry"],
    "context_window": [1000, object(), ContextWindow],
    "cost": [5, Prices({}), CostOptions, {"prices": None}],
    "clock": [5, lambda x: 0.0, "monotonic"],
    "store": [5, "runs.db", "sqlite:///", "sqlit:///runs.db", "postgres", object(), MemoryStore],
    "approval": [5, "always", lambda check: True, ApprovalPolicy, ApprovalOptions, object()],
    "limits": [None, 5, {"max_tool_calls": 1}, Limits, RetryPolicy()],
    "tool_selection": [
        5,
        "relevance",
        RelevanceSelector(),
        ToolSelection,
        lambda run, tools: tools,
    ],
    "output": [None, 5, {"retries": 1}, OutputOptions, OutputStrategy.TOOL],
    "telemetry": [5, "on", True, object(), Telemetry],
}
"""Wrong values for each `LoopOptions` key."""

MOVED_BAD: dict[str, list[object]] = {
    "tool_selector": ["rank", 5, lambda run: [], lambda: [], [lambda run, tools: tools]],
    "max_tools_per_request": OPTIONAL_COUNTS,
    "max_tool_calls": OPTIONAL_COUNTS,
    "on_cap": ["sometimes", 1, None, "FINAL"],
    "tool_timeout": OPTIONAL_SECONDS,
    "max_concurrency": OPTIONAL_COUNTS,
    "max_result_chars": COUNTS,
    "model_timeout": OPTIONAL_SECONDS,
    "run_timeout": OPTIONAL_SECONDS,
    "repetition": [3, {"nudge_after": 1}, RepetitionPolicy, True],
    "max_concurrent_runs": OPTIONAL_COUNTS,
    "run_limiter": [3, object(), RunLimiter],
    "state_key": [5, "short", b"short", [], ["k" * 32, 5], {"k" * 32}, object()],
    "max_state_token_bytes": [0, 1023, -1, 1.5, "1MiB", None, True],
    "output_strategy": ["fast", 5, None, OutputStrategy.NATIVE],
    "output_retries": [-1, 1.5, "2", True, 3],
    "output_validators": [5, [5], "f", [str]],
}
"""Wrong values for each deprecated flat key (checked as before, then a warning)."""

LOOP_DEFAULTS: dict[str, Any] = {
    "tools": (),
    "instructions": None,
    "hooks": (),
    "max_iterations": 10,
    "stop_when": None,
    "input_guards": (),
    "prepare_step": None,
    "settings": ModelSettings(),
    "strict": False,
    "retry": RetryPolicy(),
    "sleep": anyio.sleep,
    "error_messages": DEFAULT_RESOLVER,
    "context_window": None,
    "clock": None,
    "store": None,
    "approval": None,
    "limits": Limits(),
    "tool_selection": None,
    "output": OutputOptions(),
    "telemetry": None,
    "cost": None,
}
"""Each option at its documented default."""

LOOP_OWN_BAD: dict[str, list[object]] = {
    "model": [5, None, "gpt-4", "acme:model", object()],
    "phases": ["phase", [5], [NotAHook()], 5],
    "start_phases": ["phase", [5], [lambda: None]],
    "output_type": [5, "Invoice", object(), {1: "x"}, set[int]],
}
"""Wrong values for ReActLoop's own parameters (beside the options)."""

HTTP_BAD: dict[str, list[object]] = {
    "model": ["", 5, None],
    "api_key": [5, b"key"],
    "base_url": ["api.example.com", "", 5, "ftp://example.com"],
    "provider": ["", 5, None],
    "profile": [{"sampling": False}, "permissive", 5, ModelProfile],
    "idle_timeout": OPTIONAL_SECONDS,
    "http_client": ["client", object(), httpx.AsyncClient],
    "extra_headers": ["x-a: 1", {"x-a": 1}, {1: "a"}, [("x-a", "1")]],
    "extra_body": ["k=5", {1: "a"}, {"model": "m"}, {"messages": []}, {"x": object()}, [("a", 1)]],
}

AZURE_VALID: dict[str, object] = {
    "deployment": "d",
    "api_key": "k",
    "endpoint": "https://r.openai.azure.com",
}
AZURE_BAD: dict[str, list[object]] = {
    **{key: values for key, values in HTTP_BAD.items() if key not in ("model", "base_url")},
    "deployment": ["", 5, None],
    "model": ["", 5],
    "endpoint": ["r.openai.azure.com", "https://r.openai.azure.com/openai/v1", 5, "ftp://r"],
    "api_version": ["2024-10", "latest", 5],
    "token_provider": ["token", 5],
}

MCP_BAD: dict[str, list[object]] = {
    "name": ["", 5],
    "prefix": ["", "a b", 5, "x" * 33],
    "tool_filter": [5, "search", lambda: True],
    "timeout": OPTIONAL_SECONDS,
    "connect_timeout": SECONDS,
    "restart": [3, None, "never", ServerRestartPolicy],
    "requires_approval": ["yes", 1, [5]],
}
"""Wrong values for the options both MCP server kinds take."""

TOOL_BAD: dict[str, list[object]] = {
    "name": ["", "has space", 5, "x" * 65],
    "description": [5, b"text"],
    "timeout": OPTIONAL_SECONDS,
    "exclusive": [1, "yes", None],
    "idempotent": [1, "yes", None],
    "requires_approval": [1, "yes", None, lambda check: True],
    "external": [1, "yes", None],
}

Factory = Callable[..., object]

CLASSES: dict[Factory, tuple[dict[str, object], dict[str, list[object]]]] = {
    MaxIterations: ({"limit": 1}, {"limit": COUNTS}),
    MaxToolCalls: ({"limit": 1}, {"limit": COUNTS}),
    TokenBudget: ({"limit": 1}, {"limit": COUNTS}),
    CostBudget: ({"limit": 1}, {"limit": [0, -1, float("nan"), float("inf"), "1", None, True]}),
    ModelPrice: (
        {"input": 1, "output": 2},
        {
            "input": [-1, "3", None, float("inf"), True],
            "output": [-1, "3", None],
            "cache_read": [-1, "0.3"],
            "cache_write": [-1, "3.75"],
            "cache_write_1h": [-1, "6"],
            "long_context": [5, (1,), (0, ModelPrice(1, 2)), (1000, 5), "long"],
        },
    ),
    Prices: ({"table": {}}, {"table": [5, "gpt-4o", {"gpt-4o": 2.5}, {"": ModelPrice(1, 2)}]}),
    CostOptions: ({"prices": Prices({})}, {"prices": [None, 5, {"gpt-4o": 1}, Prices]}),
    TimeBudget: ({"seconds": 1.0}, {"seconds": SECONDS}),
    StopWhen: (
        {"predicate": predicate},
        {
            "predicate": [None, 5, lambda: True, lambda a, b: True],
            "name": ["", " ", 5, None],
            "cap": [1, "yes", None],
        },
    ),
    FinalAnswerMarker: ({}, {"marker": ["", "  ", 5, None]}),
    ToolCalled: ({"names": "submit"}, {"names": [[], "", [""], [5], 5, None, {"a": "b"}]}),
    MaxInputLength: ({"limit": 10}, {"limit": COUNTS}),
    BlockedPatterns: (
        {"patterns": ["x"]},
        {"patterns": [[], "", "(", [5], 5, None, [b"x"], re.compile(b"x")]},
    ),
    Telemetry: (
        {},
        {
            "tracer_provider": ["global", 5, object()],
            "meter_provider": ["global", 5, object()],
            "phase_spans": ["yes", 1, None],
            "record_content": ["no", 0, None],
            "agent_name": [5, "", b"agent"],
        },
    ),
    RetryPolicy: (
        {},
        {
            "max_retries": [-1, 1.5, True, "2", None],
            "initial_delay": [-0.1, NAN, INF, "1", None],
            "multiplier": [0.5, NAN, INF, True, None],
            "max_delay": [0.1, NAN, INF, "8"],
            "jitter": [-0.1, 1.5, NAN, "0"],
            "max_retry_after": [-1, NAN, INF, "60", None],
        },
    ),
    RepetitionPolicy: (
        {},
        {"nudge_after": [0, -1, 1.5, True, "3", None], "stop_after": [0, 2, 1.5, True, None]},
    ),
    ContextWindow: (
        {"max_tokens": 100_000},
        {
            "max_tokens": COUNTS,
            "reserved_output": [-1, 100_000, 1.5, True, None, "0"],
            "estimator": [None, object(), len],
            "drop_to": [0, -0.5, 1.5, NAN, INF, "0.7", True, None],
        },
    ),
    RunLimiter: ({"max_runs": 1}, {"max_runs": COUNTS, "max_wait": [-1, NAN, INF, "1", True]}),
    Limits: (
        {},
        {
            "max_tool_calls": OPTIONAL_COUNTS,
            "on_cap": ["sometimes", 1, None, "FINAL"],
            "tool_timeout": OPTIONAL_SECONDS,
            "model_timeout": OPTIONAL_SECONDS,
            "run_timeout": OPTIONAL_SECONDS,
            "max_concurrency": OPTIONAL_COUNTS,
            "max_result_chars": COUNTS,
            "max_concurrent_runs": OPTIONAL_COUNTS,
            "run_limiter": [3, object(), RunLimiter],
            "repetition": [3, {"nudge_after": 1}, RepetitionPolicy, True],
        },
    ),
    ToolSelection: (
        {},
        {
            "selector": ["rank", 5, lambda run: [], lambda: [], [lambda run, tools: tools]],
            "max_tools": OPTIONAL_COUNTS,
        },
    ),
    OutputOptions: (
        {},
        {
            "strategy": ["fast", 5, None, "TOOL"],
            "retries": [-1, 1.5, "2", True, None],
            "validators": [5, [5], "f", [str], None],
        },
    ),
    ApprovalOptions: (
        {},
        {
            "policy": [5, "always", lambda check: True, ApprovalPolicy, object()],
            "state_key": [5, "short", b"short", [], ["k" * 32, 5], {"k" * 32}, object()],
            "max_state_token_bytes": [0, 1023, -1, 1.5, "1MiB", None, True],
        },
    ),
    ModelSettings: (
        {},
        {
            "temperature": [-0.1, NAN, INF, "0.2", True],
            "max_output_tokens": [0, -1, 1.5, True, "5"],
            "response_format": ["json", 5, ResponseFormatKind.JSON_OBJECT, ResponseFormat],
            "parallel_tool_calls": [1, "yes", 0],
            "top_p": [-0.1, 1.5, NAN, "0.9", True],
            "stop_sequences": ["END", [""], ["a", 5], 5, None, {"END"}],
            "seed": [1.5, "7", True],
            "service_tier": ["", 5, b"flex"],
            "reasoning": ["high", 5, {"effort": "high"}, ReasoningSettings, ReasoningEffort.HIGH],
            "cache": [True, "5m", {"ttl": "1h"}, CacheSettings],
        },
    ),
    CacheSettings: (
        {},
        {"enabled": [1, "yes", None], "ttl": ["24h", "5", 5, None], "key": ["", 5, b"key"]},
    ),
    ImagePart: (
        {"data": PNG},
        {
            "data": ["iVBORw0KGgo=", 5],
            "url": [5, ""],
            "media_type": ["text/plain", 5, ""],
            "detail": ["ultra", 5],
        },
    ),
    DocumentPart: (
        {"text": "the text"},
        {
            "data": ["JVBERi0=", 5],
            "url": [5, ""],
            "text": [5, b"bytes"],
            "media_type": [5, ""],
            "title": [5, ""],
        },
    ),
    AudioPart: (
        {"data": b"RIFF", "format": "wav"},
        {"data": ["UklGRg==", None, 5], "format": ["aiff", 5, None]},
    ),
    ReasoningSettings: (
        {},
        {
            "effort": ["hard", 5, True, ReasoningEffort],
            "budget_tokens": [0, -1, 1.5, True, "1024"],
            "summary": ["", 5, True],
        },
    ),
    ResponseFormat: (
        {},
        {
            "kind": ["xml", 5, None],
            "name": ["", 5, None],
            "schema": ["{}", [1], 5],
            "strict": [1, None, "yes"],
        },
    ),
    OpenAIModel: (
        {"model": "m", "api_key": "k"},
        {
            **HTTP_BAD,
            "provider": ["", 5],  # None: the host's name, else "openai"
            "instructions_role": ["admin", 5, None],
            "max_tokens_field": ["tokens"],  # None: the host's, else OpenAI's
            "include_usage": [1, "yes"],
            "host": ["nowhere", 5, {"name": "groq"}],
        },
    ),
    OpenAICompatibleHost: (
        {"name": "h"},
        {
            "name": ["", 5, None],
            "base_url": ["ftp://x", "x", 5],
            "url_env": ["", 5],
            "key_env": ["", 5],
            "key_required": [1, None, "yes"],
            "max_tokens_field": ["tokens", None],
            "stream_usage": [1, None],
            "reasoning": ["openai", None],
            "reasoning_efforts": [{"turbo"}, "high", 5],
            "reasoning_back": ["thoughts", 5],
            "reasoning_details": [1, None],
            "usage_cost": ["yes", None],
            "docs": ["https://x", [5], 5],
        },
    ),
    AnthropicModel: ({"model": "m", "api_key": "k"}, {**HTTP_BAD, "max_tokens": COUNTS}),
    Features: (
        {},
        {
            flag: [1, "yes", None]
            for flag in (
                "reasoning",
                "reasoning_text",
                "images",
                "cache_read_tokens",
                "reasoning_tokens",
            )
        },
    ),
    SentRequest: (
        {},
        {
            "texts": ["abc", [5], None],
            "tool_results": [[("call_1",)], [("call_1", 5)], "ab", [5]],
            "reasoning": ["sig", [None], 5],
            "images": [b"png", ["png"], 5],
        },
    ),
    FilterVerdict: (
        {"category": "hate", "filtered": True},
        {"category": [5, None, b"hate"], "filtered": [1, "yes", None], "severity": [5, b"high"]},
    ),
    GeminiModel: (
        {"model": "m", "api_key": "k"},
        {**HTTP_BAD, "extra_body": ["k=5", {1: "a"}, {"contents": []}, {"x": object()}]},
    ),
    FallbackModel: (
        {"models": [ScriptedModel([]), ScriptedModel([])]},
        {
            "models": ["openai:gpt", 5, [ScriptedModel([])], [ScriptedModel([]), 5], None],
            "switch_on": [[ValueError], ["timeout"], [399], [True], 5, "timeout", [None]],
        },
    ),
    AzureOpenAIModel: (
        AZURE_VALID,
        {
            **AZURE_BAD,
            "instructions_role": ["admin", 5, None],
            "max_tokens_field": ["tokens", None],
            "include_usage": [1, None, "yes"],
        },
    ),
    AzureOpenAIResponsesModel: (
        AZURE_VALID,
        {
            **AZURE_BAD,
            "conversation": ["stored", 5, None, True],
            "extra_body": ["k=5", {1: "a"}, {"model": "m"}, {"input": []}, {"x": object()}],
        },
    ),
    OpenAIResponsesModel: (
        {"model": "m", "api_key": "k"},
        {
            **HTTP_BAD,
            "conversation": ["stored", 5, None, True],
            "extra_body": ["k=5", {1: "a"}, {"model": "m"}, {"input": []}, {"x": object()}],
        },
    ),
    ModelProfile: (
        {},
        {
            "sampling": [1, 0, "yes", None],
            "forced_tool_choice": [1, "no"],
            "native_output": [0, None],
            "thinking": ["yes", 1],
            "system_turns": [1, None],
            "reasoning_efforts": [{"turbo"}, "high", 5, {1}],
            "thinking_budget": [1, None],
            "adaptive_thinking": ["yes", 0],
            "cache_retention": [1, "24h"],
            "cache_breakpoints": ["yes", None],
        },
    ),
    DefaultErrorMessages: (
        {},
        {"overrides": [{"rate_limited": "busy"}, {ErrorCode.TIMEOUT: ""}, [("a", "b")], "x"]},
    ),
    MessageTokenEstimator: (
        {},
        {
            "count": [None, 5, lambda: 1],
            "message_overhead": [-1, 1.5, True, None],
            "tool_call_overhead": [-1, 1.5, "3"],
            "vendor": ["claude", None, 3],
        },
    ),
    ApprovalPolicy: (
        {},
        {
            "needs_approval": [5, "yes", lambda: True, lambda a, b: True],
            "expire_after": [0, -1, NAN, INF, "60", True],
            "wall_clock": [None, 5, lambda x: 0.0],
        },
    ),
    Approve: ({}, {"always": [1, "yes", None, "session"]}),
    Deny: ({}, {"reason": ["", " ", 5, None], "always": [1, "yes", None, "run"]}),
    Edit: ({"arguments": {}}, {"arguments": [5, "x=1", None, {1: "a"}, [1]]}),
    ExternalResult: ({"value": "done"}, {"value": []}),
    ExternalFailure: ({"message": "broke"}, {"message": ["", " ", 5, None]}),
    SqliteStore: (
        {"path": "runs.db"},
        {
            "path": [5, None, ""],
            "synchronous": ["OFF", 1, None],
            "commit_on_loop": [1, "yes", None],
            "worker_id": ["", 5, " ", "a\x00b", "w\n1", "w-\udcff", "w" * 257],
            "lease_seconds": [0, -1, NAN, INF, True, "30", 86_401],
            "timeouts": [5, {"call": 1}, 1.0],
        },
    ),
    StoreTimeouts: (
        {},
        {
            "call": [0, -1, NAN, INF, True, "60", None],
            "lock": [0, -1, NAN, INF, True, "10", None],
            "connect": [0, -1, NAN, INF, True, "10", None],
            "reconnect": [0, -1, NAN, INF, True, "30", None],
        },
    ),
    store_from_url: ({"url": "memory://"}, {"url": [5, "runs.db", "sqlite://", "mysql://x/y"]}),
    model_from_string: (
        {"spec": "openai-compatible:m@http://127.0.0.1:1/v1"},
        {"spec": [5, None, "gpt-4", "acme:m", ""]},
    ),
    tool: ({}, {**TOOL_BAD, "fn": [5, "search", FunctionTool]}),
    FunctionTool.from_function: (
        {"fn": search},
        {**TOOL_BAD, "fn": [5, "search", None], "presets": ["x", 5]},
    ),
    ServerRestartPolicy: ({}, {"max_restarts": [-1, 1.5, True, "2", None]}),
    MCPServerStdio: (
        {"command": "server"},
        {
            "command": ["", 5, None, ["server"]],
            "args": ["--flag", 5, [5], None],
            "env": [5, {"A": 1}, {1: "a"}, ["A=1"]],
            "cwd": [5, b"/tmp", ""],
            "stderr": ["quiet", 5, None, True],
            **MCP_BAD,
        },
    ),
    MCPServerHTTP: (
        {"url": "http://127.0.0.1:1/mcp"},
        {
            "url": ["", 5, "ftp://x/mcp", "127.0.0.1:1", None],
            "headers": [5, {"A": 1}, {1: "a"}, ["A: 1"]],
            **MCP_BAD,
        },
    ),
    RelevanceSelector: (
        {},
        {
            "always": ["search", [5], [""], 5, None],
            "recent_messages": [-1, 1.5, True, "4", None],
            "tool_results": ["yes", 1, None],
        },
    ),
    PostgresStore: (
        {"url": "postgresql://127.0.0.1:1/db"},
        {
            "url": ["", 5, None, "sqlite:///runs.db", "runs.db"],
            "worker_id": ["", 5, " ", "a\x00b", "w\n1", "w-\udcff", "w" * 257],
            "lease_seconds": [0, -1, NAN, INF, True, "30", 86_401],
            "timeouts": [5, {"call": 1}, 1.0],
            "connections": [0, -1, True, 2.0, "8", None],
        },
    ),
    PartialJson: ({}, {"growing_strings": ["yes", 1, None], "fences": ["no", 0, None]}),
    FakeClock: ({}, {"now": [-1, NAN, INF, "0", True, None]}),
    FakeTool: (
        {"name": "search"},
        {
            "name": ["", "a b", 5, None],
            "result": [],  # any value: what the tool returns
            "raises": [5, "boom", ValueError],
            "gate": [5, True, anyio.Event],
            "timeout": OPTIONAL_SECONDS,
            "exclusive": ["yes", 1],
            "parameters": [5, "object", [1]],
            "idempotent": ["yes", 1],
            "requires_approval": ["yes", 1],
            "external": ["yes", 1],
            "calls": [5, (), None],
            "running": [-1, 1.5, "0", None],
            "peak_running": [-1, 1.5, "0", None],
        },
    ),
    FakeToolset: (
        {"name": "kit", "tools": []},
        {
            "name": ["", 5, None],
            "tools": [5, "search", [5], [search]],
            "fail_on_connect": [5, "boom", OSError],
            "requires_approval": ["yes", 1, None],
            "connects": [-1, 1.5, "0", None],
            "closes": [-1, 1.5, "0", None],
            "listings": [-1, 1.5, "0", None],
        },
    ),
    FunctionModel: ({"fn": lambda request: "hi"}, {"fn": [5, None, lambda: "hi", "reply"]}),
    RecordingModel: ({"model": ScriptedModel([])}, {"model": [5, None, ScriptedModel]}),
    ReplayModel: (
        {"cassette": Cassette("hi", ())},
        {"cassette": [5, None, "cassette.json"], "check_requests": ["yes", 1, None]},
    ),
    ScriptedModel: ({"script": []}, {"script": [5, "hi", None, [5], [None]]}),
    make_run: (
        {},
        {
            "model": [5, "gpt-4"],
            "messages": ["hi", [5], 5, ["hi"]],
            "events": ["x", (), 5],
            "deps": [],  # any value: the user's own dependencies
            "open_step": [1, None, "yes"],
            "output_type": [5, "Invoice", object()],
            "options": [],  # the loop options: see LOOP_BAD
        },
    ),
    ServeOptions: (
        {},
        {
            "identify": ["user", 5, lambda: "ann"],
            "authorize": [True, "owner", lambda: True],
            "max_body_bytes": [0, -1, 1.5, True, "3", None, NAN, "1mb"],
            "body_timeout": [0, -1, NAN, INF, True, "30", None],
            "max_runs_per_user": [0, -1, 1.5, True, "3", None],
            "cors": [{"allow_origins": ["*"]}, "*", ("*",)],
            "on_disconnect": ["keep", 1, True, "KEEP"],
            "keep_events_seconds": [-1, NAN, INF, True, "300", None],
            "follow_interval": [0, -1, NAN, INF, True, "0.5", None],
            "clock": [None, 5, lambda now: now],
        },
    ),
    ChatServer: (
        {"loop": ReActLoop(ScriptedModel([]))},
        {
            "loop": [None, "module:loop", ScriptedModel([])],
            "options": [{"max_runs_per_user": 2}, CorsOptions(), 5],
        },
    ),
    CorsOptions: (
        {},
        {
            "allow_origins": ["https://app.example.com", [5], [""], None],
            "allow_credentials": [1, "yes", None],
            "allow_headers": ["content-type", [5], None],
            "max_age": [-1, 1.5, True, "600", None],
        },
    ),
}
"""For each class (or function): valid required arguments, and wrong values per parameter."""

CASES = [
    pytest.param(
        factory, option, value, id=f"{getattr(factory, '__qualname__', factory)}-{option}-{index}"
    )
    for factory, (_, table) in CLASSES.items()
    for option, values in table.items()
    for index, value in enumerate(values)
]


def construct(factory: Factory, valid: Mapping[str, object], option: str, value: object) -> None:
    """Call `factory` with the valid arguments and `option` set to `value`."""
    if factory is tool and option == "fn":
        tool(value)  # type: ignore[call-overload]
        return
    if factory is tool:
        decorate = tool(**{option: value})  # type: ignore[call-overload]
        decorate(search)
        return
    factory(**{**valid, option: value})


def contains(container: object, item: object) -> bool:
    """Whether `item` is `container` or one of its items (the offending item of a sequence)."""
    if container is item:
        return True
    if isinstance(container, Mapping):
        return any(v is item or k is item for k, v in container.items())
    if isinstance(container, list | tuple):
        return any(contains(member, item) for member in container)
    return isinstance(container, str) and isinstance(item, str) and item in container


def _holds_attribute(container: object, attribute: str, item: object) -> bool:
    """Whether an item of `container` has `attribute` set to `item` (a tool's timeout, ...)."""
    members = container if isinstance(container, list | tuple) else [container]
    return any(getattr(member, attribute, None) in (item,) for member in members)


def assert_names(error: ConfigurationError, option: str, value: object) -> None:
    """The error names the option and the value (or the offending item), in words and fields."""
    message = str(error)
    assert option.rsplit(".", 1)[-1] in message, message
    if option == "state_key":  # a key is a secret: its kind and size are shown, never the key
        assert "never shown" in message and (not isinstance(value, str) or value not in message)
        return
    assert show(error.value) in message, message
    attribute = error.option.rsplit(".", 1)[-1] if error.option and "]." in error.option else ""
    held = contains(value, error.value) or show(value) in message
    assert held or _holds_attribute(value, attribute, error.value), (message, error.value)
    assert error.option is not None and option.rsplit(".", 1)[-1] in error.option, error.option


@pytest.mark.parametrize(("option", "value"), [(o, v) for o, vs in LOOP_BAD.items() for v in vs])
def test_a_wrong_loop_option_is_refused_when_the_loop_is_built(option: str, value: object) -> None:
    options: dict[str, Any] = {option: value}
    with pytest.raises(ConfigurationError) as caught:
        ReActLoop(ScriptedModel([]), **options)
    assert_names(caught.value, option, value)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(("option", "value"), [(o, v) for o, vs in MOVED_BAD.items() for v in vs])
def test_a_wrong_value_for_a_moved_flat_key_is_refused(option: str, value: object) -> None:
    options: dict[str, Any] = {option: value}
    with pytest.raises(ConfigurationError) as caught:
        ReActLoop(ScriptedModel([]), **options)
    assert_names(caught.value, option, value)


@pytest.mark.parametrize(
    ("option", "value"), [(o, v) for o, vs in LOOP_OWN_BAD.items() for v in vs]
)
def test_a_wrong_loop_parameter_is_refused(option: str, value: object) -> None:
    arguments: dict[str, Any] = {"model": ScriptedModel([]), option: value}
    with pytest.raises(ConfigurationError) as caught:
        ReActLoop(**arguments)
    assert_names(caught.value, option, value)


@pytest.mark.parametrize(("factory", "option", "value"), CASES)
def test_a_wrong_value_is_refused_at_construction(
    factory: Factory, option: str, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    valid = CLASSES[factory][0]
    with pytest.raises(ConfigurationError) as caught:
        construct(factory, valid, option, value)
    name = "model" if factory is model_from_string else option
    assert_names(caught.value, name, value)


def _parameters(factory: Factory) -> set[str]:
    parameters = inspect.signature(factory).parameters.values()
    return {p.name for p in parameters if p.kind is not p.VAR_POSITIONAL} - {"self"}


def test_the_loop_tables_cover_every_loop_option() -> None:
    assert set(LOOP_BAD) | set(MOVED_BAD) == OPTION_NAMES == set(LoopOptions.__annotations__)
    assert set(MOVED_BAD) == set(MOVED) == set(DeprecatedLoopOptions.__annotations__)
    assert set(LOOP_DEFAULTS) == OPTION_NAMES - set(MOVED)
    assert (
        set(LOOP_OWN_BAD) | {"options"} == _parameters(ReActLoop) == {*LOOP_PARAMETERS, "options"}
    )


@pytest.mark.parametrize("factory", list(CLASSES))
def test_the_table_covers_every_parameter(factory: Factory) -> None:
    table = CLASSES[factory][1]
    assert set(table) == _parameters(factory)
    checked = [option for option, values in table.items() if not values]
    anything = {
        "deps": "the user's own dependencies",
        "result": "what a fake tool returns",
        "value": "an external result: checked when given as a decision",
    }
    assert set(checked) <= {*anything, "options"}, "only these take any value"


def test_the_table_covers_the_configurable_classes() -> None:
    configurable = {
        MaxIterations, MaxToolCalls, TokenBudget, TimeBudget, StopWhen, FinalAnswerMarker,
        ToolCalled, MaxInputLength, BlockedPatterns, RetryPolicy, RepetitionPolicy,
        ContextWindow, RunLimiter, ModelSettings, ResponseFormat, OpenAIModel, AnthropicModel,
    }  # fmt: skip
    assert configurable <= set(CLASSES)


PUBLIC_MODULES = [
    "reactloop", "reactloop.approval", "reactloop.context", "reactloop.hooks",
    "reactloop.messages", "reactloop.models", "reactloop.output", "reactloop.phases",
    "reactloop.providers", "reactloop.stopping", "reactloop.stores", "reactloop.telemetry",
    "reactloop.testing", "reactloop.tools", "reactloop.costs", "reactloop.errors",
    "reactloop.serve",
]  # fmt: skip
CHECKED_ELSEWHERE = {ReActLoop: "LOOP_BAD and LOOP_OWN_BAD"}


def _checked_public() -> set[Factory]:
    """Every public class or function whose arguments are checked (wrapped by the checker)."""
    found: set[Factory] = set()
    for module in map(importlib.import_module, PUBLIC_MODULES):
        for name in module.__all__:
            public = getattr(module, name)
            target = vars(public).get("__init__") if isinstance(public, type) else public
            if callable(public) and getattr(target, CHECKED_MARK, False):
                found.add(public)
    return found


def test_every_checked_public_class_has_its_wrong_values_in_the_tables() -> None:
    missing = _checked_public() - set(CLASSES) - set(CHECKED_ELSEWHERE)
    assert not missing, f"add a row to CLASSES for {sorted(map(str, missing))}"


def test_every_loop_option_at_its_default_builds_a_loop() -> None:
    loop = ReActLoop(ScriptedModel([]), **LOOP_DEFAULTS)
    assert (loop.config.max_result_chars, loop.config.on_cap) == (20_000, CapPolicy.FINAL_CALL)
    assert len(loop.phases) == len(default_phases())
    assert len(loop.start_phases) == len(default_start_phases())


def _defaults(factory: Factory) -> dict[str, object]:
    parameters = inspect.signature(factory).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not p.empty}


@pytest.mark.parametrize("factory", [f for f in CLASSES if f not in (tool, make_run)])
def test_every_default_constructs(factory: Factory) -> None:
    arguments = {**_defaults(factory), **CLASSES[factory][0]}
    assert factory(**arguments) is not None


def test_a_tool_with_every_default_constructs() -> None:
    defaults = {name: value for name, value in _defaults(tool).items() if name != "fn"}
    assert tool(**defaults)(search).name == "search"  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("wrong", "meant"),
    [
        ("max_iteration", "'max_iterations'"),
        ("tool_timeuot", "limits=Limits(tool_timeout=...)"),
        ("Max_Tool_Calls", "limits=Limits(max_tool_calls=...)"),
        ("limit", "'limits'"),
        ("outputs", "'output'"),
        ("stopwhen", "'stop_when'"),
        ("phase", "'phases'"),
    ],
)
def test_a_misspelled_loop_option_fails_with_a_suggestion(wrong: str, meant: str) -> None:
    options: dict[str, Any] = {wrong: 2}
    with pytest.raises(ConfigurationError, match=re.escape(f"did you mean {meant}?")) as caught:
        ReActLoop(ScriptedModel([]), **options)
    assert (caught.value.option, caught.value.value) == (wrong, 2)
    assert repr(wrong) in str(caught.value)


def test_an_unknown_option_far_from_any_lists_the_known_ones() -> None:
    options: dict[str, Any] = {"zzz": 1}
    with pytest.raises(ConfigurationError, match=r"known: .*max_iterations") as caught:
        ReActLoop(ScriptedModel([]), **options)
    assert caught.value.option == "zzz"


@pytest.mark.parametrize(
    ("wrong", "meant"), [("max_iteration", "max_iterations"), ("messsages", "messages")]
)
def test_a_misspelled_make_run_option_fails_with_a_suggestion(wrong: str, meant: str) -> None:
    options: dict[str, Any] = {wrong: 2}
    with pytest.raises(ConfigurationError, match=f"make_run.*did you mean {meant!r}"):
        make_run(**options)


def test_a_misspelled_preset_fails_with_a_suggestion() -> None:
    with pytest.raises(ConfigurationError, match="did you mean 'query'"):
        tool(search).bind(querry="x")


def test_a_wrong_model_string_suggests_the_provider() -> None:
    with pytest.raises(ConfigurationError, match="did you mean 'openai'") as caught:
        model_from_string("opneai:gpt-4o")
    assert (caught.value.option, caught.value.value) == ("model", "opneai:gpt-4o")


@pytest.mark.parametrize(
    ("option", "value"),
    [("where", "middle"), ("verdicts", "hate"), ("verdicts", [("hate", True)])],
)
def test_a_content_filtered_error_built_wrong_names_the_option(option: str, value: object) -> None:
    """A provider of one's own builds it: a typo fails where it is made, not in a handler."""
    with pytest.raises(ConfigurationError) as caught:
        ContentFilteredError("blocked", provider="mine", **{option: value})  # type: ignore[arg-type]
    assert caught.value.option is not None and caught.value.option.startswith(
        f"ContentFilteredError.{option}"
    )


@pytest.mark.anyio
async def test_a_harness_missing_a_member_is_refused_before_any_check_runs() -> None:
    class Half:
        name = "half"
        features = Features()

    with pytest.raises(ConfigurationError, match="it lacks build, render_whole") as caught:
        await check_provider(Half())  # type: ignore[arg-type]
    assert caught.value.option == "harness"
    with pytest.raises(ConfigurationError, match="harness must be a ProviderHarness"):
        await CONFORMANCE_CHECKS[0]("tiny")  # type: ignore[arg-type]


def test_a_wrong_api_version_from_the_environment_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The value came from OPENAI_API_VERSION, not from an api_version= the user never passed."""
    monkeypatch.setenv("OPENAI_API_VERSION", "latest")
    for cls in (AzureOpenAIModel, AzureOpenAIResponsesModel):
        with pytest.raises(ConfigurationError, match="OPENAI_API_VERSION must be") as caught:
            cls("d", endpoint="https://r.openai.azure.com", api_key="k")
        assert (caught.value.option, caught.value.value) == ("OPENAI_API_VERSION", "latest")


def test_the_kits_scripted_answer_given_to_a_scripted_model_says_whose_it_is() -> None:
    """`ScriptedAnswer` and `ScriptedModel` sit side by side in reactloop.testing."""
    with pytest.raises(ConfigurationError, match="ScriptedAnswer is the provider kit's"):
        ScriptedModel([ScriptedAnswer("hi")])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "model",
    [
        GeminiModel("gemini-2.5-pro", api_key="k"),
        AzureOpenAIModel("d", model="gpt-4.1", endpoint="https://r.openai.azure.com", api_key="k"),
    ],
    ids=["gemini-2.5-pro", "azure-gpt-4.1"],
)
def test_an_effort_on_a_model_of_no_levels_does_not_read_as_the_level_none(model: Any) -> None:
    with pytest.raises(ConfigurationError, match="must be None: there are no levels") as caught:
        ReActLoop(model, settings=ModelSettings(reasoning=ReasoningSettings(effort="none")))
    assert caught.value.option == "ModelSettings.reasoning.effort"
    assert "(none;" not in str(caught.value)


def test_a_misspelled_host_preset_suggests_the_preset() -> None:
    with pytest.raises(ConfigurationError, match="did you mean 'openrouter'") as caught:
        OpenAIModel("m", host="OpenRoutr", api_key="k")
    assert (caught.value.option, caught.value.value) == ("OpenAIModel.host", "OpenRoutr")


@pytest.mark.parametrize("prefix", ["gemini", "azure", "azure-responses", *HOSTS])
def test_a_model_string_without_a_model_lists_its_own_form(prefix: str) -> None:
    """Every prefix `model_from_string` takes is among the forms its errors list."""
    with pytest.raises(ConfigurationError) as caught:
        model_from_string(f"{prefix}:")
    assert f"'{prefix}:" in str(caught.value) and f"'{prefix}:" in (caught.value.rule or "")


def test_a_string_for_on_cap_is_taken_as_the_policy() -> None:
    loop = ReActLoop(ScriptedModel([]), limits=Limits(on_cap="stop_now"))  # type: ignore[arg-type]
    assert loop.config.on_cap is CapPolicy.STOP_NOW


def test_a_misspelled_enum_value_gets_a_suggestion() -> None:
    with pytest.raises(ConfigurationError, match="did you mean 'stop_now'"):
        Limits(on_cap="stop_no")  # type: ignore[arg-type]


def test_a_plain_predicate_for_stop_when_is_wrapped_in_stop_when() -> None:
    loop = ReActLoop(ScriptedModel([]), stop_when=predicate)  # type: ignore[call-overload]
    conditions = loop.config.stop_when.conditions
    assert StopWhen(predicate, "predicate") in conditions


def test_a_single_function_for_tools_is_refused_with_the_rule() -> None:
    with pytest.raises(ConfigurationError, match="sequence of tools") as caught:
        ReActLoop(ScriptedModel([]), tools=search)  # type: ignore[call-overload]
    assert caught.value.rule is not None and "sequence" in caught.value.rule


def test_a_long_value_is_cut_short_in_the_message() -> None:
    with pytest.raises(ConfigurationError) as caught:
        MaxIterations("x" * 10_000)  # type: ignore[arg-type]
    assert len(str(caught.value)) < 300
    assert caught.value.value == "x" * 10_000


def test_a_lambda_tool_needs_a_name() -> None:
    with pytest.raises(ConfigurationError, match=r"pass name=.*'<lambda>'") as caught:
        ReActLoop(ScriptedModel([]), tools=[lambda query: query])
    assert caught.value.option == "tool.name"


@pytest.mark.parametrize(("option", "value"), [(o, v) for o, vs in TOOL_BAD.items() for v in vs])
def test_tool_options_are_checked_before_any_function_is_given(option: str, value: object) -> None:
    with pytest.raises(ConfigurationError) as caught:
        tool(**{option: value})  # type: ignore[call-overload]
    assert_names(caught.value, option, value)


FACTORIES = [pytest.param(factory, id=getattr(factory, "__qualname__", "?")) for factory in CLASSES]


@pytest.mark.parametrize("factory", FACTORIES)
def test_a_misspelled_option_of_any_class_fails_with_a_suggestion(factory: Factory) -> None:
    valid, table = CLASSES[factory]
    option = sorted(name for name in table if name != "options")[-1]
    with pytest.raises(ConfigurationError, match=f"did you mean {option!r}") as caught:
        construct(factory, valid, f"{option}_", 1)
    assert (caught.value.option, caught.value.value) == (f"{option}_", 1)


@pytest.mark.parametrize(
    ("build", "extra"),
    [
        pytest.param(lambda: MaxIterations(3, 4), 4, id="MaxIterations"),  # type: ignore[call-arg]
        pytest.param(lambda: ReActLoop(ScriptedModel([]), None), None, id="ReActLoop"),  # type: ignore[call-overload]
        pytest.param(lambda: RetryPolicy(2, 0.5, 2.0, 8.0, 0.25, 60.0, 7), 7, id="RetryPolicy"),  # type: ignore[call-arg]
    ],
)
def test_too_many_positional_arguments_are_a_configuration_error(
    build: Callable[[], object], extra: object
) -> None:
    with pytest.raises(ConfigurationError, match="give the other options by name") as caught:
        build()
    assert caught.value.value is extra


def test_a_required_option_left_out_is_named() -> None:
    with pytest.raises(ConfigurationError, match="TokenBudget needs the option 'limit'") as caught:
        TokenBudget()  # type: ignore[call-arg]
    assert (caught.value.option, caught.value.rule) == ("limit", "required")


def test_a_type_error_from_inside_a_constructor_is_not_disguised() -> None:
    @checked_arguments
    class Faulty:
        def __init__(self, size: int) -> None:
            raise TypeError("inside")

    with pytest.raises(TypeError, match="inside"):
        Faulty(3)


def test_an_empty_phase_sequence_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="at least one phase") as caught:
        ReActLoop(ScriptedModel([]), phases=[])
    assert caught.value.option == "phases"


def test_an_empty_start_sequence_is_allowed() -> None:
    assert ReActLoop(ScriptedModel([]), start_phases=[]).start_phases == ()


def test_checked_classes_keep_their_signature() -> None:
    assert next(iter(inspect.signature(RetryPolicy).parameters)) == "max_retries"

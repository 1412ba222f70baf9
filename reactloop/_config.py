"""The loop's options (one typed dict, shared by `ReActLoop` and `testing.make_run`) and their
validation into a `LoopConfig`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypedDict, Unpack

import anyio

from reactloop._context import ContextWindow
from reactloop._contracts import AnyOf, Clock, Hook, InputGuard, Model, StopCondition, Tool
from reactloop._errors import ConfigurationError
from reactloop._hooks import HookSet
from reactloop._limits import RunLimiter
from reactloop._messages import ModelSettings
from reactloop._providers import model_from_string
from reactloop._resolver import DEFAULT_RESOLVER, ErrorMessageResolver
from reactloop._retry import RetryPolicy, Sleep
from reactloop._run import CapPolicy, Instructions, LoopConfig, PrepareStep, RepetitionPolicy
from reactloop._stop import MaxIterations, MaxToolCalls
from reactloop._tool import FunctionTool

ToolLike = Tool | Callable[..., Any]


class LoopOptions(TypedDict, total=False):
    """Every option of a loop; all are optional (defaults in `build_config`)."""

    tools: Sequence[ToolLike]  # tools or plain functions (wrapped with @tool)
    instructions: Instructions  # system prompt, or a function of the RunContext
    hooks: Sequence[Hook]
    max_iterations: int  # default 10
    max_tool_calls: int | None  # default None (no cap)
    stop_when: StopCondition | None  # extra stop conditions, combined with |
    on_cap: CapPolicy  # default FINAL_CALL: one last model call without tools
    tool_timeout: float | None  # per tool call (a tool's own timeout wins); default None
    max_concurrency: int | None  # tool calls running at once in a step; default unlimited
    max_result_chars: int  # default 20,000; longer tool results are cut with a marker
    input_guards: Sequence[InputGuard]
    prepare_step: PrepareStep | None  # change model, tools, tool choice, messages per step
    settings: ModelSettings
    model_timeout: float | None  # per model call; default None
    run_timeout: float | None  # whole run; default None
    repetition: RepetitionPolicy | None  # default nudge after 3 identical calls, stop after 5
    strict: bool  # raise a failed run's error instead of returning it; default False
    retry: RetryPolicy  # model-call retries; default 2 retries, backoff 0.5 s doubling to 8 s
    sleep: Sleep  # how retries wait; default anyio.sleep (inject one in tests)
    max_concurrent_runs: int | None  # runs of this loop executing at once; default unlimited
    run_limiter: RunLimiter | None  # a limiter shared with other loops (instead of the above)
    error_messages: ErrorMessageResolver  # error -> user-facing sentence (RunResult.user_message)
    context_window: ContextWindow | None  # fit each request to the window; default: no trimming
    clock: Clock | None  # default time.monotonic


def _as_tool(item: ToolLike) -> Tool:
    if isinstance(item, Tool):
        return item
    if callable(item):
        return FunctionTool.from_function(item)
    raise ConfigurationError(f"tools must be Tool objects or functions, got {item!r}")


def tool_registry(items: Sequence[ToolLike]) -> dict[str, Tool]:
    """Tools by name; plain functions are wrapped with `@tool`; names must be unique."""
    registry: dict[str, Tool] = {}
    for item in items:
        tool = _as_tool(item)
        if tool.name in registry:
            raise ConfigurationError(f"tool names must be unique: {tool.name!r} appears twice")
        registry[tool.name] = tool
    return registry


def stop_conditions(
    max_iterations: int, max_tool_calls: int | None, stop_when: StopCondition | None
) -> StopCondition:
    """The loop's caps and the user's conditions as one any-of condition."""
    conditions: list[StopCondition] = [MaxIterations(max_iterations)]
    if max_tool_calls is not None:
        conditions.append(MaxToolCalls(max_tool_calls))
    if stop_when is not None:
        conditions.append(stop_when)
    return AnyOf.of(*conditions)


def _positive_or_none(options: LoopOptions, *names: str) -> None:
    for name in names:
        value = options.get(name)
        if value is not None and (not isinstance(value, int | float) or value <= 0):
            raise ConfigurationError(f"{name} must be a positive number or None, got {value!r}")


def build_config(model: Model | str, **options: Unpack[LoopOptions]) -> LoopConfig:
    """Check every option and build the shared, read-only configuration."""
    if isinstance(model, str):
        model = model_from_string(model)
    if not isinstance(model, Model):
        raise ConfigurationError(f"model must implement the Model contract, got {model!r}")
    _positive_or_none(
        options, "tool_timeout", "max_concurrency", "max_result_chars", "model_timeout",
        "run_timeout",
    )  # fmt: skip
    stop = stop_conditions(
        options.get("max_iterations", 10),
        options.get("max_tool_calls"),
        options.get("stop_when"),
    )
    tools = tool_registry(options.get("tools", ()))
    return LoopConfig(
        model=model,
        tools=tools,
        tool_list=tuple(tools.values()),
        tool_specs=tuple(tool.spec for tool in tools.values()),
        instructions=options.get("instructions"),
        hooks=HookSet.of(options.get("hooks", ())),
        stop_when=stop,
        on_cap=options.get("on_cap", CapPolicy.FINAL_CALL),
        tool_timeout=options.get("tool_timeout"),
        max_concurrency=options.get("max_concurrency"),
        max_result_chars=options.get("max_result_chars", 20_000),
        input_guards=tuple(options.get("input_guards", ())),
        prepare_step=options.get("prepare_step"),
        settings=options.get("settings", ModelSettings()),
        clock=options.get("clock") or time.monotonic,
        model_timeout=options.get("model_timeout"),
        run_timeout=options.get("run_timeout"),
        repetition=options.get("repetition", RepetitionPolicy()),
        strict=options.get("strict", False),
        retry=options.get("retry", RetryPolicy()),
        sleep=options.get("sleep", anyio.sleep),
        run_limiter=_run_limiter(options),
        error_messages=options.get("error_messages", DEFAULT_RESOLVER),
        context_window=options.get("context_window"),
    )


def _run_limiter(options: LoopOptions) -> RunLimiter | None:
    limit, shared = options.get("max_concurrent_runs"), options.get("run_limiter")
    if limit is not None and shared is not None:
        raise ConfigurationError("give max_concurrent_runs or run_limiter, not both")
    return RunLimiter(limit) if limit is not None else shared

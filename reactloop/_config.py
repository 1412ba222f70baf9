"""Validating a loop's settings into a `LoopConfig`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anyio

from reactloop._contracts import AnyOf, Clock, Hook, InputGuard, Model, StopCondition, Tool
from reactloop._errors import ConfigurationError
from reactloop._hooks import HookSet
from reactloop._messages import ModelSettings
from reactloop._run import CapPolicy, Instructions, LoopConfig, PrepareStep, RepetitionPolicy
from reactloop._stop import MaxIterations, MaxToolCalls
from reactloop._tool import FunctionTool

ToolLike = Tool | Callable[..., Any]


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


def _positive_or_none(name: str, value: float | None) -> None:
    if value is not None and value <= 0:
        raise ConfigurationError(f"{name} must be positive or None, got {value!r}")


def build_config(
    *,
    model: Model,
    tools: Sequence[ToolLike],
    instructions: Instructions,
    hooks: Sequence[Hook],
    max_iterations: int,
    max_tool_calls: int | None,
    stop_when: StopCondition | None,
    on_cap: CapPolicy,
    tool_timeout: float | None,
    max_concurrency: int | None,
    max_result_chars: int,
    input_guards: Sequence[InputGuard],
    prepare_step: PrepareStep | None,
    settings: ModelSettings,
    clock: Clock | None,
    model_timeout: float | None = None,
    run_timeout: float | None = None,
    repetition: RepetitionPolicy | None = RepetitionPolicy(),
    strict: bool = False,
) -> LoopConfig:
    """Check every setting and build the shared, read-only configuration."""
    if not isinstance(model, Model):
        raise ConfigurationError(f"model must implement the Model contract, got {model!r}")
    _positive_or_none("tool_timeout", tool_timeout)
    _positive_or_none("max_concurrency", max_concurrency)
    _positive_or_none("max_result_chars", max_result_chars)
    _positive_or_none("model_timeout", model_timeout)
    _positive_or_none("run_timeout", run_timeout)
    return LoopConfig(
        model=model,
        tools=tool_registry(tools),
        instructions=instructions,
        hooks=HookSet.of(hooks),
        stop_when=stop_conditions(max_iterations, max_tool_calls, stop_when),
        on_cap=on_cap,
        tool_timeout=tool_timeout,
        max_concurrency=max_concurrency,
        max_result_chars=max_result_chars,
        input_guards=tuple(input_guards),
        prepare_step=prepare_step,
        settings=settings,
        clock=clock or anyio.current_time,
        model_timeout=model_timeout,
        run_timeout=run_timeout,
        repetition=repetition,
        strict=strict,
    )

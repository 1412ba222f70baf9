"""The loop's `tools` option: tools, functions (wrapped with `@tool`) and toolsets, checked and
registered by name, and the per-step tool selection."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from reactloop._core import Tool, Toolset
from reactloop._errors import ConfigurationError
from reactloop._tools import FunctionTool, LoopToolsets, RelevanceSelector, StepSelection
from reactloop._validate import boolean, optional_number, sequence_of, text

ToolLike: TypeAlias = Tool | Callable[..., Any]
"""What the loop's `tools` takes besides toolsets: a tool, or a function to wrap."""

_TOOL_ITEM_RULE = "a Tool, a function, or a Toolset (an MCP server)"


def tool_item(option: str, item: object) -> ToolLike | Toolset:
    """One item of the loop's `tools`: a tool, a function to wrap, or a toolset."""
    if isinstance(item, type):
        raise ConfigurationError.invalid(option, item, _TOOL_ITEM_RULE)
    if isinstance(item, Toolset | Tool) or callable(item):
        return item
    raise ConfigurationError.invalid(option, item, _TOOL_ITEM_RULE)


def _as_tool(item: ToolLike) -> Tool:
    return item if isinstance(item, Tool) else FunctionTool.from_function(item)


def _check_tool(tool: Tool) -> None:
    """A tool object's own settings (a `@tool` function's are checked when it is made)."""
    name = text("tools[].name", tool.name)
    optional_number(f"tools[{name!r}].timeout", tool.timeout)
    boolean(f"tools[{name!r}].exclusive", tool.exclusive)
    for flag in ("idempotent", "requires_approval", "external"):
        boolean(f"tools[{name!r}].{flag}", getattr(tool, flag, False))


def tool_registry(items: Sequence[ToolLike | Toolset]) -> dict[str, Tool]:
    """Tools by name (toolsets left out); plain functions are wrapped with `@tool`; names must
    be unique."""
    registry: dict[str, Tool] = {}
    for item in sequence_of("tools", items, tool_item, "tools, functions or toolsets"):
        if isinstance(item, Toolset):
            continue
        tool = _as_tool(item)
        _check_tool(tool)
        if tool.name in registry:
            raise ConfigurationError.invalid(
                "tools", tool.name, f"unique tool names ({tool.name!r} appears twice)"
            )
        registry[tool.name] = tool
    return registry


def loop_toolsets(items: Sequence[object]) -> LoopToolsets | None:
    """The toolsets among the loop's tools, each once; None when there are none."""
    toolsets = tuple(item for item in items if isinstance(item, Toolset))
    for index, toolset in enumerate(toolsets):
        if any(other is toolset for other in toolsets[:index]):
            rule = "each toolset given once (the same server object appears twice)"
            raise ConfigurationError.invalid("tools", toolset, rule)
    return LoopToolsets(toolsets) if toolsets else None


def tool_selection(options: Mapping[str, Any]) -> StepSelection | None:
    """The loop's selector and cap; None when neither is given (every tool, every step). A cap
    alone ranks with `RelevanceSelector` (cutting the list in declared order would drop tools
    for where they were written, not for what the conversation needs)."""
    selector, limit = options.get("tool_selector"), options.get("max_tools_per_request")
    if selector is None and limit is None:
        return None
    return StepSelection(selector or RelevanceSelector(), limit)

"""The tools a run offers: the loop's own, plus those of its toolsets (MCP servers), listed per
step, then chosen by the loop's tool selector and cap.

A toolset is opened once for all runs by `async with loop:` (or by entering the toolset itself);
a run that finds one closed opens a connection for its own duration. Each step asks every open
source for its tools (cached by the source) and rebuilds the run's catalog only when a list
changed, so an unchanged catalog costs a few identity checks per step.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, nullcontext
from typing import TYPE_CHECKING

from attrs import define, field, frozen

from reactloop._core import Tool, ToolSelector, Toolset, ToolSource, ToolSpec
from reactloop._errors import ConfigurationError, ContractError, name_of
from reactloop._output import FINAL_TOOL

if TYPE_CHECKING:
    from reactloop._loop import Run

LOOP_TOOLS = "the loop's tools"


@define
class LoopToolsets:
    """The loop's toolsets, and the connections `async with loop:` keeps open for all its runs."""

    toolsets: tuple[Toolset, ...]
    _stack: AsyncExitStack | None = field(default=None, init=False)
    _opened: dict[int, ToolSource] = field(factory=dict, init=False)

    async def open(self) -> None:
        """Connect every toolset that is not entered already; a second open is refused."""
        if self._stack is not None:
            rule = "entered once at a time (`async with loop:` is already open)"
            raise ConfigurationError.invalid("loop", "async with loop", rule)
        stack = AsyncExitStack()
        try:
            for index, toolset in enumerate(self.toolsets):
                if toolset.open_source is None:
                    self._opened[index] = await stack.enter_async_context(toolset.connect())
        except BaseException:
            self._opened.clear()
            await stack.aclose()
            raise
        self._stack = stack

    async def close(self) -> None:
        """Close the connections `open` made (stopping their servers)."""
        stack, self._stack = self._stack, None
        self._opened.clear()
        if stack is not None:
            await stack.aclose()

    @property
    def opened(self) -> bool:
        """Whether `open` holds the connections now (`async with loop:` is entered)."""
        return self._stack is not None

    def shared(self, index: int) -> ToolSource | None:
        """The open connection runs share for toolset `index`, if there is one."""
        return self._opened.get(index) or self.toolsets[index].open_source


@define
class RunCatalog:
    """One run's tools: the loop's own and its toolsets' current ones, rebuilt when a list
    changes. `tools`, `by_name` and `specs` always describe the same, latest catalog."""

    static: Mapping[str, Tool]
    sources: tuple[tuple[Toolset, ToolSource], ...]
    can_hold: bool  # the loop can pause a run for a decision (it has a store or a state key)
    tools: tuple[Tool, ...] = ()
    by_name: Mapping[str, Tool] = field(factory=dict)
    specs: tuple[ToolSpec, ...] = ()
    _lists: tuple[Sequence[Tool], ...] = ()

    async def refresh(self) -> tuple[Tool, ...]:
        """The current tools; the previous tuple itself when no source's list changed."""
        lists = tuple([await source.list_tools() for _, source in self.sources])
        if len(lists) == len(self._lists) and all(map(_same, lists, self._lists)):
            return self.tools
        self._rebuild(lists)
        return self.tools

    def _rebuild(self, lists: tuple[Sequence[Tool], ...]) -> None:
        by_name = dict(self.static)
        origins = dict.fromkeys(by_name, LOOP_TOOLS)
        for (toolset, _), listed in zip(self.sources, lists, strict=True):
            origin = f"toolset {toolset.name!r}"
            for tool in _checked_list(toolset, listed):
                if not self.can_hold and _needs_decision(tool):
                    raise _cannot_hold(tool.name, origin)
                if tool.name in by_name:
                    raise _collision(tool.name, origins[tool.name], origin)
                by_name[tool.name] = tool
                origins[tool.name] = origin
        self.by_name, self._lists = by_name, lists
        self.tools = tuple(by_name.values())
        self.specs = tuple(tool.spec for tool in self.tools)


def _same(a: object, b: object) -> bool:
    return a is b


def _checked_list(toolset: Toolset, listed: object) -> Sequence[Tool]:
    """A source's list, which must hold only `Tool`s (a `ContractError` naming it otherwise)."""
    culprit = f"toolset {name_of(toolset)}"
    if not isinstance(listed, Sequence) or isinstance(listed, str):
        raise ContractError(culprit, "ToolSource.list_tools returns a sequence of tools", listed)
    for tool in listed:
        if not isinstance(tool, Tool):
            raise ContractError(culprit, "ToolSource.list_tools returns Tool objects", tool)
    return listed


def _needs_decision(tool: Tool) -> bool:
    return bool(getattr(tool, "requires_approval", False) or getattr(tool, "external", False))


def _cannot_hold(name: str, origin: str) -> ConfigurationError:
    rule = (
        f"a store or a state_key on a loop whose toolsets offer tools that wait for a decision"
        f" ({name!r} of {origin} needs approval or runs outside): a paused run must be resumable"
    )
    return ConfigurationError.invalid("state_key", None, rule)


def _collision(name: str, first: str, second: str) -> ConfigurationError:
    rule = (
        f"unique tool names across the loop's tools and toolsets ({name!r} comes from {first}"
        f" and from {second}): give a server a prefix, or filter its tools"
    )
    return ConfigurationError.invalid("tools", name, rule)


def run_toolsets(run: Run) -> AbstractAsyncContextManager[None]:
    """Around a run: its toolsets opened (nothing to do, at no cost, for a loop without any)."""
    host = run.config.toolsets
    return _NOTHING if host is None else _opened(run, host)


_NOTHING: AbstractAsyncContextManager[None] = nullcontext()


@asynccontextmanager
async def _opened(run: Run, host: LoopToolsets) -> AsyncIterator[None]:
    """Use the loop's open connections, open the missing ones for this run alone (closed when it
    ends, whatever the ending), and list the tools once."""
    async with AsyncExitStack() as stack:
        sources: list[tuple[Toolset, ToolSource]] = []
        for index, toolset in enumerate(host.toolsets):
            source = host.shared(index)
            if source is None:
                source = await stack.enter_async_context(toolset.connect())
            sources.append((toolset, source))
        run.catalog = RunCatalog(run.config.tools, tuple(sources), run.config.holds_calls)
        await run.catalog.refresh()
        yield


@frozen
class StepSelection:
    """The loop's per-step choice of tools: a selector ranks them, and at most `limit` are
    offered. The final-answer tool of a structured output is always kept, first."""

    selector: ToolSelector | None
    limit: int | None

    async def choose(
        self, run: Run, tools: tuple[Tool, ...], by_name: Mapping[str, Tool]
    ) -> tuple[Tool, ...]:
        """The tools offered this step, best first."""
        chosen = tools
        if self.selector is not None:
            picked = self.selector(run, tools)
            if inspect.isawaitable(picked):
                picked = await picked
            chosen = _checked_choice(self.selector, picked, by_name)
        final = by_name.get(FINAL_TOOL)
        if final is not None and (not chosen or chosen[0] is not final):
            chosen = (final, *(tool for tool in chosen if tool is not final))
        limit = self.limit
        return chosen if limit is None or len(chosen) <= limit else chosen[:limit]


def _checked_choice(
    selector: ToolSelector, picked: object, by_name: Mapping[str, Tool]
) -> tuple[Tool, ...]:
    """A selector's answer: some of the tools it was given, each once (a `ContractError`
    naming the selector otherwise)."""
    culprit = f"tool_selector {name_of(selector)}"
    if not isinstance(picked, Sequence) or isinstance(picked, str):
        raise ContractError(culprit, "a ToolSelector returns a sequence of tools", picked)
    seen: set[str] = set()
    for tool in picked:
        name = getattr(tool, "name", None)
        if not isinstance(name, str) or by_name.get(name) is not tool:
            raise ContractError(culprit, "a ToolSelector returns tools it was given", tool)
        if name in seen:
            raise ContractError(culprit, "a ToolSelector returns each tool at most once", name)
        seen.add(name)
    return tuple(picked)

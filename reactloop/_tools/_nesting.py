"""What ties a sub-run (an agent tool's run) to the run that called it: the call in progress,
the sub-runs each run is driving now (so that interrupting a run reaches them), and the outcome an
agent tool hands back to the tool phase.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from attrs import frozen

from reactloop._core import NO_USAGE, AgentCall, RunResult, ToolCall, ToolResult, Usage
from reactloop._errors import ToolError

if TYPE_CHECKING:
    from reactloop._loop import Run

CALLING: ContextVar[tuple[Run, ToolCall] | None] = ContextVar("reactloop_calling", default=None)
"""The run and the call whose tool is being invoked (set by the tool phase around `invoke`)."""

READS_CALLING: set[type] = set()
"""Tool classes whose `invoke` reads `CALLING` (`AgentTool`): the tool phase sets it for them."""

_children: dict[int, list[Run]] = {}  # id of a run -> the sub-runs it drives now
_paths: dict[int, tuple[AgentCall, ...]] = {}  # id of a sub-run -> its path from the top


def path_of(run: Run) -> tuple[AgentCall, ...]:
    """The chain of agent calls from the top run down to `run` (empty for a top run)."""
    return _paths.get(id(run), ())


@contextmanager
def nested(parent: Run, child: Run, path: tuple[AgentCall, ...]) -> Iterator[None]:
    """`child` runs under `parent` for the block: interrupting `parent` interrupts it (at once
    if `parent` already has an interrupt pending)."""
    siblings = _children.setdefault(id(parent), [])
    siblings.append(child)
    _paths[id(child)] = path
    if parent.interrupt is not None:
        interrupt_run(child, parent.interrupt.message)
    try:
        yield
    finally:
        siblings.remove(child)
        if not siblings:
            del _children[id(parent)]
        del _paths[id(child)]


def sub_runs_of(run: Run) -> tuple[Run, ...]:
    """The sub-runs `run`'s agent tools drive now."""
    return tuple(_children.get(id(run), ()))


def interrupt_run(run: Run, message: str | None = None) -> None:
    """Interrupt `run` and the sub-runs it drives (at any depth): a model call in flight is cut
    short at once, else each stops at its next safe point."""
    run.request_interrupt(message)


@frozen(eq=False)
class SubRunOutcome:
    """What an agent tool's `invoke` returns: the text the model reads, or the error, with what
    the sub-run spent and its result (None when no sub-run started)."""

    content: str
    error: ToolError | None = None
    usage: Usage = NO_USAGE
    result: RunResult[Any] | None = None

    def tool_result(self, call: ToolCall, content: str, duration: float) -> ToolResult:
        """The call's result (`content`: the answer as shown, cut to the result limit), carrying
        the sub-run's usage, id and result."""
        error = self.error
        sub = self.result
        return ToolResult(
            call.id,
            call.name,
            content if error is None else error.message,
            error is not None,
            None if error is None else error.code,
            duration,
            self.usage,
            None if sub is None else sub.run_id,
            sub,
        )

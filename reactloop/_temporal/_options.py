"""How a loop's model and tool calls run as Temporal activities: timeouts, heartbeats, retries,
the task queue, and the backend a tool runs on. Every option has a default that keeps
reactloop's exactly-once rules (ADR-0033): a model call is retried only when the worker failed,
and a tool that is not idempotent runs at most once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from attrs import field, frozen

from reactloop._core import Tool
from reactloop._validate import (
    boolean,
    checked_arguments,
    fail,
    instance,
    integer,
    number,
    optional_integer,
    optional_number,
    optional_text,
    text,
)

Backend = Literal["asyncio", "trio"]

MAX_PAYLOAD_BYTES = 2_000_000
"""The most an activity's result may hold (under Temporal's 2 MiB a payload, leaving room for
its envelope): a tool result over it is the tool's error result, a model answer its error."""
_BACKENDS = ("asyncio", "trio")


@checked_arguments
@frozen
class ModelActivity:
    """The model call's activity: `start_to_close` seconds per attempt, a `heartbeat` timeout
    (None: none; the activity heartbeats as the stream's deltas arrive), `attempts` in all
    (retries only when the worker fails: a provider's refusal is the loop's to retry), and the
    `task_queue` (None: the workflow's).

    `local=True` makes each model call a Temporal local activity: run by the worker running the
    workflow task, inside it, recorded as a marker, so a step costs one server round trip less
    (half the hand-offs; docs/performance.md). It keeps the rules (a model call may be made
    again after a worker loss, as a regular activity's retry would), but the call is no
    activity in the Temporal UI, has no heartbeat (`heartbeat` is unused), and cannot go to
    another `task_queue`."""

    start_to_close: float = 300.0
    heartbeat: float | None = 30.0
    attempts: int = 3
    task_queue: str | None = None
    local: bool = False

    def __attrs_post_init__(self) -> None:
        number("ModelActivity.start_to_close", self.start_to_close)
        optional_number("ModelActivity.heartbeat", self.heartbeat)
        integer("ModelActivity.attempts", self.attempts)
        optional_text("ModelActivity.task_queue", self.task_queue)
        boolean("ModelActivity.local", self.local)
        if self.local and self.task_queue is not None:
            rule = "None with local=True (a local activity runs on the workflow's worker)"
            fail("ModelActivity.task_queue", self.task_queue, rule)


@checked_arguments
@frozen
class ToolActivity:
    """A tool call's activity: `start_to_close` seconds, the `heartbeat` timeout (the activity
    heartbeats three times per timeout while the tool runs; a lost worker is known that soon),
    `attempts` (None: 1 for a tool that is not idempotent, so it never runs twice, 3 for
    `@tool(idempotent=True)`), the `task_queue` (None: the workflow's), and the `backend` the
    tool runs on ("trio": under `trio.run` in a worker thread)."""

    start_to_close: float = 600.0
    heartbeat: float = 10.0
    attempts: int | None = None
    task_queue: str | None = None
    backend: Backend = "asyncio"

    def __attrs_post_init__(self) -> None:
        number("ToolActivity.start_to_close", self.start_to_close)
        number("ToolActivity.heartbeat", self.heartbeat)
        optional_integer("ToolActivity.attempts", self.attempts)
        optional_text("ToolActivity.task_queue", self.task_queue)
        if self.backend not in _BACKENDS:
            fail("ToolActivity.backend", self.backend, "'asyncio' or 'trio'")

    def attempts_for(self, tool: Tool) -> int:
        """How many times the call may start: as set, else 3 for an idempotent tool and 1
        for any other (a second start could repeat its effect)."""
        if self.attempts is not None:
            return self.attempts
        return 3 if getattr(tool, "idempotent", False) is True else 1


def _tool_options(value: object) -> dict[str, ToolActivity]:
    """`tools` as a dict of tool names to `ToolActivity`, each checked."""
    if not isinstance(value, Mapping):
        fail("ActivityOptions.tools", value, "a mapping of tool names to ToolActivity")
    checked: dict[str, ToolActivity] = {}
    for name, options in value.items():
        key = text("ActivityOptions.tools", name)
        checked[key] = instance(
            f"ActivityOptions.tools[{key!r}]", options, ToolActivity, "a ToolActivity"
        )
    return checked


@checked_arguments
@frozen
class ActivityOptions:
    """The activity options of one loop: its model's, per tool name, and every other tool's,
    and `max_payload_bytes`, the most an activity's result may put in the workflow's history."""

    model: ModelActivity = ModelActivity()
    tools: Mapping[str, ToolActivity] = field(factory=dict, converter=_tool_options)
    default_tool: ToolActivity = ToolActivity()
    max_payload_bytes: int = MAX_PAYLOAD_BYTES

    def __attrs_post_init__(self) -> None:
        instance("ActivityOptions.model", self.model, ModelActivity, "a ModelActivity")
        instance("ActivityOptions.default_tool", self.default_tool, ToolActivity, "a ToolActivity")
        integer("ActivityOptions.max_payload_bytes", self.max_payload_bytes)

    def for_tool(self, tool: Tool) -> ToolActivity:
        """The options of `tool`'s calls: its own, else the default."""
        return self.tools.get(tool.name, self.default_tool)

"""`Run`: what a phase receives. Plain-data `state`, read-only `config`, the tool-facing `context`,
and the live services of this one run (clock, event sink, a pending hook stop).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
from attrs import define, field, frozen

from reactloop._context import ContextTracker, ContextWindow
from reactloop._contracts import Clock, InputGuard, Model, RunStore, StopCondition, Tool
from reactloop._decisions import Stop
from reactloop._errors import ConfigurationError
from reactloop._events import Event
from reactloop._hooks import HookSet
from reactloop._journal import NULL_JOURNAL, NullJournal
from reactloop._limits import RunLimiter
from reactloop._messages import ForcedTool, Message, ModelSettings, ToolChoice, ToolSpec
from reactloop._nesting import sub_runs_of
from reactloop._output import Output
from reactloop._policy import DEFAULT_POLICY, ApprovalPolicy
from reactloop._resolver import DEFAULT_RESOLVER, ErrorMessageResolver
from reactloop._retry import RetryPolicy, Sleep
from reactloop._sealing import MAX_TOKEN_BYTES, SigningKeys
from reactloop._state import RunContext, RunState, ToolResult
from reactloop._toolsets import LoopToolsets, RunCatalog, ToolSelection
from reactloop._validate import checked_arguments, integer

if TYPE_CHECKING:
    from reactloop._otel import Tracing

Instructions = str | Callable[[RunContext[Any]], str | Awaitable[str]] | None
EventSink = Callable[[Event], Awaitable[None]]


class CapPolicy(enum.StrEnum):
    """What reaching a cap does: one last model call without tools (default), or stop at once."""

    FINAL_CALL = "final_call"
    STOP_NOW = "stop_now"


@frozen
class StepPlan:
    """What one model call will use; `prepare_step` may return a changed copy for this step only."""

    model: Model
    tools: tuple[Tool, ...]
    tool_choice: ToolChoice | ForcedTool
    messages: tuple[Message, ...]
    instructions: str | None


PrepareStep = Callable[["Run", StepPlan], StepPlan | Awaitable[StepPlan]]


@checked_arguments
@frozen
class RepetitionPolicy:
    """Same tool, same arguments, many times in a row: nudge the model, then stop the run."""

    nudge_after: int = 3
    stop_after: int = 5

    def __attrs_post_init__(self) -> None:
        integer("RepetitionPolicy.nudge_after", self.nudge_after)
        integer("RepetitionPolicy.stop_after", self.stop_after)
        if self.stop_after < self.nudge_after:
            raise ConfigurationError.invalid(
                "RepetitionPolicy.stop_after",
                self.stop_after,
                f">= nudge_after ({self.nudge_after})",
            )


@frozen
class Interrupt:
    """A request, from outside the run, to stop (a model call in flight at once)."""

    message: str | None = None


@frozen
class LoopConfig:
    """A loop's configuration, shared read-only by all its runs."""

    model: Model
    tools: Mapping[str, Tool]
    tool_list: tuple[Tool, ...]
    tool_specs: tuple[ToolSpec, ...]
    instructions: Instructions
    hooks: HookSet
    stop_when: StopCondition
    on_cap: CapPolicy
    tool_timeout: float | None
    max_concurrency: int | None
    max_result_chars: int
    input_guards: tuple[InputGuard, ...]
    prepare_step: PrepareStep | None
    settings: ModelSettings
    clock: Clock
    model_timeout: float | None = None
    run_timeout: float | None = None
    repetition: RepetitionPolicy | None = RepetitionPolicy()
    strict: bool = False
    retry: RetryPolicy = RetryPolicy()
    sleep: Sleep = anyio.sleep
    run_limiter: RunLimiter | None = None
    error_messages: ErrorMessageResolver = DEFAULT_RESOLVER
    context_window: ContextWindow | None = None
    store: RunStore | None = None
    owns_store: bool = False  # the loop made the store from a URL, and closes it
    approval: ApprovalPolicy = DEFAULT_POLICY
    holds_calls: bool = False  # some call may wait for approval or an outside runner
    state_keys: SigningKeys | None = None  # sign a paused run's state token
    max_state_token_bytes: int = MAX_TOKEN_BYTES  # longer tokens are refused unread
    output: Output | None = None  # the structured output the runs must end with
    request_settings: ModelSettings | None = None  # `settings` with the output's format, if any
    toolsets: LoopToolsets | None = None  # tools from outside (MCP servers), listed per step
    selection: ToolSelection | None = None  # a tool selector and a cap on tools per request
    tracing: Tracing | None = None  # OpenTelemetry spans and metrics (telemetry=...); None: off


@define
class Run:
    """One run in progress: the object every phase receives."""

    state: RunState
    config: LoopConfig
    context: RunContext[Any]
    sink: EventSink | None = None
    pending_stop: Stop | None = field(default=None)
    step_tools: Mapping[str, Tool] | None = field(default=None)
    interrupt: Interrupt | None = field(default=None)
    window: ContextTracker | None = field(default=None)
    # This step's tool calls handled so far and not yet in the transcript: call id -> the result,
    # None while the call runs. A run cut short keeps those results (see `settle_open_calls`).
    call_outcomes: dict[str, ToolResult | None] = field(factory=dict)
    journal: NullJournal = field(default=NULL_JOURNAL)  # writes to the loop's store, if any
    skip_start: bool = False  # a resumed run past its start phases
    catalog: RunCatalog | None = field(default=None)  # the toolsets' tools, when the loop has any
    # The scopes of the model calls in flight: an interrupt cancels them (see `interruptible`).
    model_calls: set[anyio.CancelScope] = field(factory=set)

    @property
    def listening(self) -> bool:
        """True when someone consumes events; phases skip building events otherwise."""
        return self.sink is not None

    async def emit(self, event: Event) -> None:
        """Deliver an event to the stream's consumer, if there is one."""
        if self.sink is not None:
            await self.sink(event)

    def request_interrupt(self, message: str | None = None) -> None:
        """Ask the run, and the sub-runs its agent tools drive now, to stop: a model call in
        flight is cut short at once, else the run stops at its next safe point (before reasoning,
        after tools); a tool call in flight finishes first."""
        if self.interrupt is None:
            self.interrupt = Interrupt(message)
        for scope in self.model_calls:
            scope.cancel()
        for child in sub_runs_of(self):
            child.request_interrupt(message)

    def offered_tools(self) -> Mapping[str, Tool]:
        """The tools the current step offered the model (all the loop's tools by default)."""
        if self.step_tools is not None:
            return self.step_tools
        return self.config.tools if self.catalog is None else self.catalog.by_name

    def now(self) -> float:
        """The run's clock, in seconds."""
        return self.config.clock()

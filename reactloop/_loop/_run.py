"""`Run`: what a phase receives. Plain-data `state`, read-only `config`, the tool-facing `context`,
and the live services of this one run (clock, event sink, a pending hook stop).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
from attrs import Factory, define, field, frozen

from reactloop._approval import DEFAULT_POLICY, MAX_TOKEN_BYTES, ApprovalPolicy, SigningKeys
from reactloop._core import (
    Clock,
    Event,
    InputGuard,
    Model,
    ModelSettings,
    PrepareStep,
    RunContext,
    RunState,
    RunStore,
    Stop,
    StopCondition,
    Tool,
    ToolResult,
    ToolSpec,
)
from reactloop._costs import Pricing
from reactloop._durable import NULL_JOURNAL, NullJournal
from reactloop._output import Output
from reactloop._policies import (
    CapPolicy,
    ContextTracker,
    ContextWindow,
    HookSet,
    PrefixWatch,
    RepetitionPolicy,
    RetryPolicy,
    RunLimiter,
    Sleep,
)
from reactloop._resolver import DEFAULT_RESOLVER, ErrorMessageResolver
from reactloop._tools import LoopToolsets, RunCatalog, StepSelection, sub_runs_of

if TYPE_CHECKING:
    from reactloop._telemetry._otel import Tracing

Instructions = str | Callable[[RunContext[Any]], str | Awaitable[str]] | None
EventSink = Callable[[Event], Awaitable[None]]


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
    selection: StepSelection | None = None  # a tool selector and a cap on tools per request
    tracing: Tracing | None = None  # OpenTelemetry spans and metrics (telemetry=...); None: off
    pricing: Pricing | None = None  # the price table (cost=...) puts a cost on usage; None: off


def _prefix_watch(run: Run) -> PrefixWatch | None:
    """A watch on the requests' prefix when the loop has something that may change it beyond
    appending (a context window, `prepare_step`, hooks, tool selection, toolsets) or telemetry;
    else None, and the plain loop skips the comparison."""
    config = run.config
    changing = config.prepare_step is not None or config.selection is not None
    changing = changing or config.hooks.hooked
    outside = config.toolsets is not None or config.tracing is not None
    return PrefixWatch() if run.window is not None or changing or outside else None


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
    # The last request, for the cache breaks; None when nothing configured can break the prefix.
    prefix: PrefixWatch | None = field(default=Factory(_prefix_watch, takes_self=True))
    # This step's tool calls handled so far and not yet in the transcript: call id -> the result,
    # None while the call runs. A run cut short keeps those results (see `settle_open_calls`).
    call_outcomes: dict[str, ToolResult | None] = field(factory=dict)
    journal: NullJournal = field(default=NULL_JOURNAL)  # writes to the loop's store, if any
    skip_start: bool = False  # a resumed run past its start phases
    catalog: RunCatalog | None = field(default=None)  # the toolsets' tools, when the loop has any
    # The scopes of the model calls in flight: an interrupt cancels them (see `interruptible`).
    model_calls: set[anyio.CancelScope] = field(factory=set)
    # Whether something outside the run's own task can interrupt it (a handle, a stream, a parent
    # run): only then is each model call given a cancel scope (about 5 us per call; adr/0007).
    interruptible: bool = False
    # Whether the response may be committed with its first call's start (`response_may_wait`).
    response_waits: bool = False

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
        self.interruptible = True
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

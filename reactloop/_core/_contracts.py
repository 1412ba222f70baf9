"""The small contracts everything plugs into: Model, Phase, Tool, Toolset, ToolSelector, Hook,
StopCondition, InputGuard, RunStore.

Implementations live elsewhere (`_phases/`, `_tool.py`, `_stop.py`, providers); this module only
says what each piece must offer, so that a user's own piece is as first-class as ours.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from attrs import frozen

from reactloop._core._decisions import (
    HookDecision,
    PhaseDecision,
    StartDecision,
    StopSignal,
    ToolCallDecision,
)
from reactloop._core._messages import (
    Message,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
)
from reactloop._core._records import (
    Record,
    RunCreated,
    RunStatus,
    RunSummary,
    SessionTurn,
    StoredRun,
)
from reactloop._core._state import RunContext, RunResult, ToolResult
from reactloop._errors import ContractError, ReactLoopError, name_of

if TYPE_CHECKING:
    from reactloop._loop import Run

DeltaSink = Callable[[ModelDelta], Awaitable[None]]
Clock = Callable[[], float]


@runtime_checkable
class Model(Protocol):
    """A language model: one request/response call and one streaming call with the same answer."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send the request and return the whole response."""
        ...

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """Send the request, await `on_delta` for each streamed piece, return the whole response."""
        ...


class Phase(Protocol):
    """One unit of the loop: reads and updates the run, then says what happens next."""

    async def __call__(self, run: Run) -> PhaseDecision:
        """Do this phase's work on `run` and return a decision."""
        ...


@runtime_checkable
class Tool(Protocol):
    """A callable the model can ask for; `FunctionTool` (from `@tool`) is the usual one.

    A tool may also have an `idempotent` attribute (read with a default of False, so tools
    written before it need no change): True lets a resumed run call it again when its first call
    started but its result was never saved; otherwise that call gets an error result saying it was
    interrupted and may or may not have taken effect.
    """

    @property
    def name(self) -> str:
        """The name the model uses."""
        ...

    @property
    def spec(self) -> ToolSpec:
        """Name, description and parameter schema as offered to the model."""
        ...

    @property
    def timeout(self) -> float | None:
        """Seconds this tool may run; None takes the loop's default."""
        ...

    @property
    def exclusive(self) -> bool:
        """True when this tool must run alone, never beside other calls of its step."""
        ...

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """Parse and validate the model's JSON arguments; raise `ToolArgumentsError` if invalid."""
        ...

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """Run the tool with validated arguments; any exception becomes an error result."""
        ...


@runtime_checkable
class ToolSource(Protocol):
    """An open toolset (an MCP session): the tools it offers now."""

    async def list_tools(self) -> Sequence[Tool]:
        """The tools offered now; cheap when nothing changed (the source caches its list and
        refreshes it when it learns of a change). Return the same sequence object while the list
        is unchanged: the loop then reuses what it built from it."""
        ...


@runtime_checkable
class Toolset(Protocol):
    """Tools that live outside the loop (an MCP server's): opened for runs, listed each step.

    `connect()` opens a connection of its own: a run that finds the toolset closed opens one for
    its own duration and closes it at its end, whatever the ending. `open_source` is the
    connection the toolset keeps while it is entered (`async with toolset:`), shared by every run
    meanwhile; None when it is not entered.
    """

    @property
    def name(self) -> str:
        """A short name for messages (the server's name or command)."""
        ...

    @property
    def open_source(self) -> ToolSource | None:
        """The connection kept while the toolset is entered; None otherwise."""
        ...

    def connect(self) -> AbstractAsyncContextManager[ToolSource]:
        """Open a connection (start the process, the session); leaving the block closes it."""
        ...


class ToolSelector(Protocol):
    """Chooses, each step, the tools offered to the model out of all the loop's tools.

    Returns them in order of preference (the loop keeps at most `max_tools_per_request`, in that
    order); sync or async. Tools left out are unknown to the model for that step.
    """

    def __call__(
        self, run: Run, tools: Sequence[Tool]
    ) -> Sequence[Tool] | Awaitable[Sequence[Tool]]:
        """The tools to offer this step, best first."""
        ...


class HookFailure(enum.StrEnum):
    """What a hook's own exception does: stop the run with a `HookError`, or be ignored."""

    FAIL_CLOSED = "fail_closed"
    FAIL_OPEN = "fail_open"


class HookPoint(enum.StrEnum):
    """The points of a run where hooks are called."""

    BEFORE_RUN = "before_run"
    AFTER_RUN = "after_run"
    BEFORE_REASONING = "before_reasoning"
    AFTER_REASONING = "after_reasoning"
    BEFORE_TOOL_CALL = "before_tool_call"
    AFTER_TOOL_CALL = "after_tool_call"
    ON_ERROR = "on_error"


class Hook:
    """Base class for hooks: override the points you need; the rest cost nothing.

    Lower `priority` runs first. `on_raise` says what happens when the hook itself raises:
    FAIL_CLOSED (default) ends the run with a `HookError`; FAIL_OPEN ignores the hook's decision
    and reports a `HookFailed` event.
    """

    priority: ClassVar[int] = 0
    on_raise: ClassVar[HookFailure] = HookFailure.FAIL_CLOSED

    async def before_run(self, run: Run) -> StartDecision | None:
        """Before the first iteration; may stop the run."""
        return None

    async def after_run(self, run: Run, result: RunResult) -> None:
        """After the run ended, with its result."""

    async def before_reasoning(
        self, run: Run, request: ModelRequest
    ) -> HookDecision[ModelRequest] | None:
        """Before each model call; may replace the request (messages included) or stop."""
        return None

    async def after_reasoning(
        self, run: Run, response: ModelResponse
    ) -> HookDecision[ModelResponse] | None:
        """After each model call; may replace the response or stop."""
        return None

    async def before_tool_call(self, run: Run, call: ToolCall) -> ToolCallDecision[ToolCall] | None:
        """Before one tool call; may change it, reject it alone, or stop the run."""
        return None

    async def after_tool_call(
        self, run: Run, call: ToolCall, result: ToolResult
    ) -> HookDecision[ToolResult] | None:
        """After one tool call; may replace its result."""
        return None

    async def on_error(self, run: Run, error: ReactLoopError) -> None:
        """When a tool call fails or the run fails with a typed error."""


class CheckPoint(enum.StrEnum):
    """Where in an iteration stop conditions are checked."""

    BEFORE_REASONING = "before_reasoning"
    AFTER_REASONING = "after_reasoning"
    AFTER_TOOLS = "after_tools"


class StopCondition:
    """Base of stop conditions; combine them with `|` (any of them stops the run).

    `check` returns a `StopSignal` or None. A signal with `cap=True` is a limit: by default the
    run makes one last model call without tools to get an answer before stopping.
    """

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """The signal to stop at this point, or None."""
        raise NotImplementedError

    def tool_call_allowance(self, run: Run) -> int | None:
        """How many more tool calls this condition allows; None for no limit."""
        return None

    def __or__(self, other: StopCondition) -> StopCondition:
        return AnyOf.of(self, other)


@frozen
class AnyOf(StopCondition):
    """Stops when any of its conditions does (the first in order wins)."""

    conditions: tuple[StopCondition, ...]

    @classmethod
    def of(cls, *conditions: StopCondition) -> AnyOf:
        """Flatten nested AnyOf into one."""
        flat: list[StopCondition] = []
        for condition in conditions:
            flat.extend(condition.conditions if isinstance(condition, AnyOf) else (condition,))
        return cls(tuple(flat))

    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        """The first signal of any condition; a condition returning anything else is a
        `ContractError` naming it."""
        for condition in self.conditions:
            signal = condition.check(run, at)
            if signal is not None:
                if not isinstance(signal, StopSignal):
                    rule = "StopCondition.check returns a StopSignal or None"
                    raise ContractError(f"stop condition {name_of(condition)}", rule, signal)
                return signal
        return None

    def tool_call_allowance(self, run: Run) -> int | None:
        """The smallest allowance of any condition."""
        known: list[int] = []
        for condition in self.conditions:
            allowance = condition.tool_call_allowance(run)
            if allowance is not None:
                if type(allowance) is not int:
                    rule = "StopCondition.tool_call_allowance returns an int or None"
                    raise ContractError(f"stop condition {name_of(condition)}", rule, allowance)
                known.append(allowance)
        return min(known) if known else None


class InputGuard(Protocol):
    """Checks the user input before any model call; returns a rejection reason or None."""

    def __call__(self, text: str) -> str | None:
        """None to accept the input, or why it is rejected."""
        ...


@runtime_checkable
class RunStore(Protocol):
    """Where durable runs keep their journal: append-only records, each append one transaction.

    `MemoryStore` and `SqliteStore` implement it; a store for another database is one more class
    with these methods. A store never holds live objects (deps, clients) or secrets. `load` and
    `session_history` give content parts back whole (their bytes); how a store keeps the bytes is
    its own business (ours keep each distinct content once, by digest: adr/0028).
    """

    async def create_run(self, created: RunCreated) -> None:
        """Record a new run and its first record."""
        ...

    async def append(self, run_id: str, records: Sequence[Record]) -> None:
        """Append records to a run's journal atomically (all or none), in order."""
        ...

    async def load(self, run_id: str) -> StoredRun:
        """The run rebuilt from its journal; `RunNotFoundError` for an unknown id."""
        ...

    async def list_runs(
        self,
        *,
        status: RunStatus | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 100,
    ) -> list[RunSummary]:
        """Runs matching every filter given (times are epoch seconds), newest first."""
        ...

    async def delete_run(self, run_id: str) -> bool:
        """Delete a run and its journal; False if there was none."""
        ...

    async def delete_session(self, session_id: str) -> int:
        """Delete every run of a session; how many there were."""
        ...

    async def session_history(self, session_id: str, *, before: str | None = None) -> list[Message]:
        """A session's earlier turns in order, up to (not including) run `before`."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class SessionTurnsStore(RunStore, Protocol):
    """A run store that reads a session's runs a page at a time, newest first, so a new turn
    reads only the turns its context window can keep (adr/0034). `MemoryStore`, `SqliteStore`
    and `PostgresStore` implement it; a `RunStore` without it is read whole (`session_history`).
    """

    async def session_turns(
        self,
        session_id: str,
        *,
        before: str | None = None,
        limit: int = 100,
        oldest: bool = False,
    ) -> list[SessionTurn]:
        """The session's runs up to (not including) run `before`: the newest `limit` of them,
        newest first; with `oldest=True` the oldest `limit`, oldest first."""
        ...


@runtime_checkable
class LeasingStore(RunStore, Protocol):
    """A run store shared by many workers: a run is driven by the worker holding its lease.

    The lease is taken by `create_run` and `acquire_lease`, renewed by each append and by
    `renew_lease` (the loop's heartbeat, every third of `lease_seconds`), and freed by the
    append that ends the run or by `release_lease`. `PostgresStore` implements it.
    """

    worker_id: str
    lease_seconds: float

    async def acquire_lease(self, run_id: str) -> None:
        """Take the run's lease; `LeaseHeldError` while another worker holds a live one."""
        ...

    async def renew_lease(self, run_id: str) -> bool:
        """Extend this worker's lease; False if it holds none any more (taken over or freed)."""
        ...

    async def release_lease(self, run_id: str) -> None:
        """Free this worker's lease on the run, if it holds it."""
        ...

    async def claimable_runs(self, *, limit: int = 100) -> list[RunSummary]:
        """Runs started and never ended that no worker holds (their worker died), oldest first."""
        ...

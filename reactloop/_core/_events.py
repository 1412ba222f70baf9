"""Typed events of a streamed run; `RunFinished` carries the same result that `run()` returns."""

from __future__ import annotations

from typing import Any, TypeAlias

from attrs import frozen

from reactloop._core._approvals import PendingCall
from reactloop._core._decisions import PhaseDecision
from reactloop._core._messages import ToolCall, Usage
from reactloop._core._state import RunResult, Step, ToolResult
from reactloop._errors import ErrorCode, ModelError, ReactLoopError


@frozen
class RunStarted:
    """The run began with this input."""

    run_id: str
    input: str


@frozen
class StepStarted:
    """Iteration `index` (1-based) began."""

    index: int


@frozen
class PhaseFinished:
    """A phase returned `decision`."""

    phase: str
    decision: PhaseDecision


@frozen
class TextStreamed:
    """A piece of the model's text, as it streams."""

    text: str


@frozen
class ReasoningStreamed:
    """A piece of the model's reasoning (or of its summary), as it streams."""

    text: str


@frozen
class ToolCallStreamed:
    """A piece of a tool call's arguments, as they stream (`index` is the call's position)."""

    index: int
    arguments_delta: str
    name: str | None = None
    call_id: str | None = None


@frozen
class ToolCallStarted:
    """A tool call is handled: it is about to run, or (refused: unknown tool, bad arguments, over
    the cap, rejected by a hook, run stopping) its error result follows at once. Every
    `ToolCallFinished` has exactly one `ToolCallStarted` before it, with the same call id."""

    call: ToolCall


@frozen
class ToolCallFinished:
    """A tool call ended (or was refused); `ok` is False for an error result."""

    result: ToolResult

    @property
    def ok(self) -> bool:
        """True when the call succeeded."""
        return not self.result.is_error


@frozen(eq=False)
class ToolResultDiscarded:
    """A tool returned after this worker lost the run's lease: its result was kept out of the
    journal (the worker that holds the run now decides what happens to the call), and the run
    stops here with `error` (a `LeaseLostError`). The tool's effect, if any, cannot be recalled."""

    result: ToolResult
    error: ReactLoopError


@frozen
class StepFinished:
    """Iteration ended; `step` has its response, tool results, usage and duration."""

    step: Step

    @property
    def usage(self) -> Usage:
        """Tokens this step used."""
        return self.step.usage

    @property
    def duration(self) -> float:
        """Seconds this step took."""
        return self.step.duration


@frozen(eq=False)
class HookFailed:
    """A fail-open hook raised; the run went on without its decision."""

    hook: str
    point: str
    error: Exception


@frozen
class ModelRetrying:
    """A model call failed transiently and will be retried after `delay` seconds.

    Text and tool-call deltas streamed by the failed attempt are void: discard them.
    """

    attempt: int
    code: ErrorCode
    delay: float
    retries_left: int


@frozen
class ModelSwitched:
    """A `FallbackModel`'s model `from_model` failed with `error` (after its retries), so the call
    goes to `to_model`; deltas streamed by the failed model are void: discard them."""

    from_model: str
    to_model: str
    error: ModelError


@frozen(eq=False)
class RunFinished:
    """The run ended; `result` is the same object `run()` returns."""

    result: RunResult


@frozen(eq=False)
class OutputStreamed:
    """A structured answer is arriving: `partial` is the JSON value so far (dicts, lists, and
    fields once complete), a prefix of the final one; the typed value ends the run."""

    partial: Any


@frozen
class RunPaused:
    """The run pauses: these calls wait for decisions (`loop.resume(..., decisions=...)`)."""

    pending: tuple[PendingCall, ...]


@frozen(eq=False)
class RunFailed:
    """A typed error ended the run (the result carries it too)."""

    error: ReactLoopError


@frozen
class AgentCall:
    """One link of a nested event's path: the agent tool `tool`, called as `call_id` by its
    parent run, ran the sub-run `run_id`."""

    tool: str
    call_id: str
    run_id: str


@frozen(eq=False)
class NestedEvent:
    """An event of a sub-run (an agent tool's run), as its parent's stream delivers it.

    `path` leads from the streamed run down to the run that emitted `event`: one `AgentCall`
    per level (a sub-run's own sub-run extends the path; `event` is never itself nested).
    """

    path: tuple[AgentCall, ...]
    event: Event

    @property
    def depth(self) -> int:
        """How many runs down the event comes from (1: a sub-run of the streamed run)."""
        return len(self.path)


Event: TypeAlias = (
    RunStarted
    | StepStarted
    | PhaseFinished
    | TextStreamed
    | ReasoningStreamed
    | ToolCallStreamed
    | ToolCallStarted
    | ToolCallFinished
    | ToolResultDiscarded
    | StepFinished
    | HookFailed
    | ModelRetrying
    | ModelSwitched
    | OutputStreamed
    | RunPaused
    | RunFailed
    | RunFinished
    | NestedEvent
)

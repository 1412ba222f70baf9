"""`ToolPhase`: run the tool calls of the step's response, or complete the run if there are none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from reactloop._core import (
    PROCEED,
    CheckPoint,
    HookPoint,
    PendingCall,
    PhaseDecision,
    Stop,
    StopReason,
    Tool,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolResult,
)
from reactloop._errors import (
    ToolArgumentsError,
    ToolError,
    ToolExecutionError,
    ToolRefusedError,
    UnknownToolError,
)
from reactloop._phases._execute import Admitted, run_concurrently
from reactloop._phases._gate import Held, Settled, decided, gate, pause
from reactloop._phases.applier import park_stop
from reactloop._phases.guards import interruption
from reactloop._tools import error_result

if TYPE_CHECKING:
    from reactloop._loop import Run


@frozen
class Refused:
    """A call that will not run (as the hooks left it), and why."""

    call: ToolCall
    error: ToolError


Outcome = Admitted | Refused | Held | Settled
_NONE_HELD: Mapping[str, PendingCall] = {}


async def _admit(run: Run, call: ToolCall, index: int, held: Mapping[str, PendingCall]) -> Outcome:
    """A decision given on resume first, then hooks (they may change the arguments), the tool
    lookup, the validation of the arguments as they stand, and the approval gate."""
    if run.state.decisions:
        changed = decided(run, call)
        if isinstance(changed, Settled):
            return changed
        call = changed
    outcome = await _checked(run, call, index)
    if isinstance(outcome, Refused):
        return _not_run(run, call, outcome)
    if run.config.holds_calls or held or run.state.decisions:
        return await gate(run, outcome, held)
    return outcome


async def _checked(run: Run, call: ToolCall, index: int) -> Admitted | Refused:
    """Hooks, then the tool lookup and the validation of the arguments after the hooks."""
    hooks = run.config.hooks
    if hooks.has(HookPoint.BEFORE_TOOL_CALL):
        verdict = await hooks.before_tool_call(run, call)
        if park_stop(run, verdict):
            return Refused(call, ToolRefusedError(call.name, "the run is stopping"))
        if verdict.reject is not None:
            why = f"rejected: {verdict.reject.message}"
            return Refused(call, ToolRefusedError(call.name, why))
        call = verdict.value
    tools = run.offered_tools()
    tool = tools.get(call.name)
    if tool is None:
        return Refused(call, UnknownToolError(call.name, sorted(tools)))
    return _validated(tool, call, index)


def _validated(tool: Tool, call: ToolCall, index: int) -> Admitted | Refused:
    """Admit the call with its parsed arguments; a `parse_arguments` that raises something else
    or returns a non-dict is the tool's own bug, read by the model like an exception in invoke."""
    try:
        arguments = tool.parse_arguments(call.arguments)
    except ToolArgumentsError as error:
        return Refused(call, error)
    except Exception as exc:
        broken = ToolExecutionError(tool.name, exc)
        broken.__cause__ = exc
        return Refused(call, broken)
    if not isinstance(arguments, dict):
        problem = TypeError(f"parse_arguments returned {type(arguments).__name__}, not a dict")
        return Refused(call, ToolExecutionError(tool.name, problem))
    return Admitted(index, tool, call, arguments)


async def admit_all(
    run: Run,
    calls: tuple[ToolCall, ...],
    slots: list[Any],
    held: Mapping[str, PendingCall] = _NONE_HELD,
) -> list[Admitted]:
    """Decide for each call, in order, whether it runs; refusals go straight into `slots`, held
    calls into `run.state.pending` (`held`: the calls this step held before a resume)."""
    allowance = run.config.stop_when.tool_call_allowance(run)
    admitted: list[Admitted] = []
    waiting: list[tuple[int, Held]] = []
    for index, call in enumerate(calls):
        if allowance is not None and allowance <= 0:
            limit = ToolRefusedError(call.name, "the run's tool-call limit is reached")
            outcome: Outcome = Refused(call, limit)
        else:
            run.state.tool_calls_made += 1
            allowance = None if allowance is None else allowance - 1
            outcome = await _admit(run, call, index, held)
        match outcome:
            case Admitted():
                admitted.append(outcome)
            case Held():
                waiting.append((index, outcome))
            case _:
                slots[index] = await _settled(run, outcome)
    if run.pending_stop is not None:
        stopped = [(item.index, item.call) for item in admitted]
        for index, item in sorted([*stopped, *((i, h.call) for i, h in waiting)]):
            slots[index] = await _settled(run, _not_run(run, item))
        return []
    if waiting:
        run.state.pending.extend(item.pending for _, item in waiting)
    return admitted


def _not_run(run: Run, call: ToolCall, refused: Refused | None = None) -> Refused | Settled:
    """A call that will not run now (refused, or the run is stopping), unless a resumed step
    saved its result: it ran before the run was resumed, and its result is kept."""
    draft = run.state.current
    saved = None if draft is None or draft.recovered is None else draft.recovered.results
    if saved is not None and call.id in saved:
        return Settled(call, saved[call.id])
    return refused or Refused(call, ToolRefusedError(call.name, "run stopping"))


async def _settled(run: Run, outcome: Refused | Settled) -> ToolResult:
    """The result of a call that does not run, from a refusal or a decision."""
    if isinstance(outcome, Settled):
        return await _settle(run, outcome.call, outcome.result, None)
    return await _settle(
        run, outcome.call, error_result(outcome.call, outcome.error), outcome.error
    )


async def _settle(
    run: Run, call: ToolCall, result: ToolResult, error: ToolError | None
) -> ToolResult:
    """The result of a call that does not run (refused, denied, run elsewhere); its events pair
    like those of a run call."""
    if error is not None:
        await run.config.hooks.on_error(run, error)
    run.call_outcomes[call.id] = None  # from here on its events are owed
    if run.listening:
        await run.emit(ToolCallStarted(call))
        await run.emit(ToolCallFinished(result))
    run.call_outcomes[call.id] = result
    return result


def repetition_nudges(run: Run, calls: tuple[ToolCall, ...]) -> dict[int, str]:
    """Count repeated identical calls; a note for each call past the nudge threshold."""
    policy = run.config.repetition
    nudges: dict[int, str] = {}
    for index, call in enumerate(calls):
        streak = run.state.note_call((call.name, call.arguments))
        if policy is not None and streak >= policy.nudge_after:
            nudges[index] = (
                f"\n[note: {call.name!r} was called {streak} times in a row with the same "
                "arguments; the result will not change. Try something else or answer.]"
            )
    return nudges


async def _results(run: Run, calls: tuple[ToolCall, ...]) -> list[Any]:
    """Each call's result in the model's order (None for a held call): admitted calls run
    concurrently, the others are settled; repeated calls get a nudge."""
    slots: list[Any] = [None] * len(calls)
    nudges = repetition_nudges(run, calls)
    held = {pending.call_id: pending for pending in run.state.pending} if run.state.pending else {}
    run.state.pending.clear()
    admitted = await admit_all(run, calls, slots, held)
    try:
        await run_concurrently(run, admitted, slots)
    finally:  # also when the run is cut short: a tool that started was used
        for item in admitted:
            if item.call.id in run.call_outcomes:
                run.state.note_tool_used(item.tool.name)
    for index, nudge in nudges.items():
        if slots[index] is not None:
            slots[index] = attrs.evolve(slots[index], content=slots[index].content + nudge)
    return slots


class ToolPhase:
    """Runs the step's tool calls concurrently, results in the model's order.

    No tool calls means the model answered in text: the run is complete. Unknown tools, invalid
    arguments, exceptions, timeouts, calls over the cap and calls a hook rejected all become error
    results the model reads, and the loop goes on.
    """

    def __repr__(self) -> str:
        """`Name()`: a phase has no settings, so a sequence prints readably."""
        return f"{type(self).__name__}()"

    async def __call__(self, run: Run) -> PhaseDecision:
        """Complete the run, or run the calls and proceed (or stop on a tool-called condition)."""
        draft = run.state.current
        if draft is None or draft.response is None:
            return PROCEED
        message = draft.response.message
        if not message.tool_calls:
            return Stop(StopReason.COMPLETED, output=message.text)
        slots = await _results(run, message.tool_calls)
        run.call_outcomes.clear()
        if run.state.pending:
            return await pause(run, slots)
        run.state.record_tool_results(slots)
        if run.pending_stop is not None:
            return PROCEED
        stop = interruption(run)
        if stop is not None:
            return stop
        signal = run.config.stop_when.check(run, CheckPoint.AFTER_TOOLS)
        if signal is not None:
            return Stop(signal.reason, signal.detail, output=signal.output)
        return PROCEED

"""Creating a run from a loop's configuration, and turning its final state into a `RunResult`."""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from typing import Any

from reactloop._contracts import HookPoint
from reactloop._decisions import Stop, StopReason
from reactloop._errors import ContractError, name_of
from reactloop._events import ErrorEvent, StepFinished, ToolResultEvent
from reactloop._messages import Message, UserMessage
from reactloop._repair import repair_history
from reactloop._resolver import user_message
from reactloop._run import EventSink, LoopConfig, Run
from reactloop._state import RunContext, RunResult, RunState


async def start_run(
    config: LoopConfig,
    text: str,
    *,
    history: Sequence[Message] = (),
    deps: Any = None,
    user_id: str | None = None,
    session_id: str | None = None,
    sink: EventSink | None = None,
) -> Run:
    """A fresh run: new id, evaluated instructions, the history followed by the user's message."""
    run_id = os.urandom(16).hex()
    context = RunContext(run_id=run_id, deps=deps, user_id=user_id, session_id=session_id)
    instructions, broken = await _instructions(config, context)
    repaired = repair_history(history)
    messages: list[Message] = [*repaired.messages, UserMessage(text)]
    state = RunState(run_id, messages, instructions, started_at=config.clock())
    state.repairs.extend(repaired.notes)
    window = config.context_window.tracker() if config.context_window is not None else None
    run = Run(state, config, context, sink, window=window)
    if broken is not None:
        run.pending_stop = Stop(StopReason.ERROR, broken.message, error=broken)
    return run


async def _instructions(
    config: LoopConfig, context: RunContext[Any]
) -> tuple[str | None, ContractError | None]:
    """The run's instructions; an instructions function returning a non-string is a contract
    break, parked so that the run ends with it (`RunStart` stops first thing)."""
    instructions = config.instructions
    if not callable(instructions):
        return instructions, None
    evaluated = instructions(context)
    text = await evaluated if inspect.isawaitable(evaluated) else evaluated
    if isinstance(text, str):
        return text, None
    rule = "an instructions function returns a str"
    return None, ContractError(f"instructions {name_of(instructions)}", rule, text)


async def finish_run(run: Run, stop: Stop) -> RunResult:
    """Close the open step, give unanswered calls a result, build the result, tell the hooks."""
    state, hooks = run.state, run.config.hooks
    step = state.close_step(run.now())
    if step is not None and run.listening:
        await run.emit(StepFinished(step))
    if state.open_tool_calls():
        await _settle_open_calls(run, stop)
    if stop.error is not None:
        await run.emit(ErrorEvent(stop.error))
        await hooks.on_error(run, stop.error)
    output = stop.output
    if output is None and stop.error is None:
        output = state.last_text()
    resolved = None if stop.error is None else user_message(stop.error, run.config.error_messages)
    result = RunResult(
        run_id=state.run_id,
        output=output,
        stop_reason=stop.reason,
        stop_detail=stop.detail,
        messages=tuple(state.messages),
        steps=tuple(state.steps),
        usage=state.usage,
        tools_used=tuple(state.tools_used),
        duration=run.now() - state.started_at,
        error=stop.error,
        user_message=resolved,
        repairs=tuple(state.repairs),
        setup_usage=state.setup_usage,
    )
    return await hooks.after_run(run, result) if hooks.has(HookPoint.AFTER_RUN) else result


async def _settle_open_calls(run: Run, stop: Stop) -> None:
    """Give unanswered calls a result; one cut short while running (run timeout) says so, and
    gets the result event its `ToolCallStarted` promised."""
    detail = f": {stop.detail}" if stop.detail else ""
    why = f"the run stopped ({stop.reason.value}{detail})"
    settled = run.state.settle_open_calls(why, run.calls_in_flight)
    for result in settled:
        if result.call_id in run.calls_in_flight:
            await run.emit(ToolResultEvent(result))

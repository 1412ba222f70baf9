"""A run's life: creating it from a loop's configuration, ending it early when a stream's consumer
leaves, and turning its final state into a `RunResult`.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import Any, Self, TypeAlias

import anyio
import attrs

from reactloop._approval import with_state
from reactloop._core import (
    AssistantMessage,
    ContentPart,
    HookPoint,
    Message,
    RunContext,
    RunFailed,
    RunFinished,
    RunResult,
    RunState,
    Step,
    StepFinished,
    Stop,
    StopReason,
    SystemMessage,
    ToolCallFinished,
    ToolMessage,
    ToolResult,
    UserMessage,
    blank_reason,
    repair_history,
)
from reactloop._durable import NULL_JOURNAL
from reactloop._errors import ConfigurationError, ContractError, ReactLoopError, name_of
from reactloop._loop._config import can_resume_paused
from reactloop._loop._resume import Session, enter_session, open_journal
from reactloop._loop._run import EventSink, LoopConfig, Run
from reactloop._loop._run_ids import RUN_ID_KEYWORDS, chosen_run_id
from reactloop._resolver import user_message
from reactloop._stored_errors import StoreError
from reactloop._unicode import optional_identifier
from reactloop._validate import reject_unknown, sequence_of

CONTEXT_KEYWORDS = ("deps", "user_id", "session_id")
"""What `run()`, `start()` and `stream()` accept besides the text and the history."""


def _run_context(run_id: str, context: Mapping[str, Any]) -> RunContext[Any]:
    return RunContext(
        run_id=run_id,
        deps=context.get("deps"),
        user_id=context.get("user_id"),
        session_id=context.get("session_id"),
    )


def message(option: str, value: object) -> Message:
    """`value` if it is a message; a ConfigurationError naming `option` otherwise."""
    if not isinstance(value, SystemMessage | UserMessage | AssistantMessage | ToolMessage):
        raise ConfigurationError.invalid(option, value, "a Message")
    why = blank_reason(value)
    if why is not None:
        rule = f"a message that carries something ({why}; model APIs reject an empty message)"
        raise ConfigurationError.invalid(option, value, rule)
    return value


RunInput: TypeAlias = str | UserMessage | Sequence[str | ContentPart]
"""What a run starts from: the user's text, their message, or its parts (text, images, ...)."""


def check_input(
    text: object, history: object, context: Mapping[str, object]
) -> tuple[UserMessage, tuple[Message, ...]]:
    """The arguments of `run()`, `start()` and `stream()`, checked before anything runs.

    The input is text, a `UserMessage` or a list of parts (strings and content parts), the
    history a sequence of messages, and `context` holds only `deps`, `user_id` and `session_id`
    (a misspelled keyword fails with a suggestion). Empty text is not refused here: it is the end
    user's data, refused by a built-in input guard.
    """
    if context:  # nothing to check in the common `run(text)`
        allowed = (*CONTEXT_KEYWORDS, *RUN_ID_KEYWORDS, "history")
        reject_unknown("run()/start()/stream()", context, allowed)
        chosen_run_id(context)
        optional_identifier("user_id", context.get("user_id"))
        optional_identifier("session_id", context.get("session_id"))
    if type(history) is tuple and not history:
        return input_message(text), ()
    return input_message(text), sequence_of("history", history, message, "messages")


def input_message(given: object) -> UserMessage:
    """The user's message a run starts from (see `RunInput`)."""
    if isinstance(given, str):
        return UserMessage(given)
    if isinstance(given, UserMessage):
        return given
    if isinstance(given, list | tuple):
        return UserMessage(parts=given)
    rule = "a string, a UserMessage, or a list of parts (str, ImagePart, ...): the user's input"
    raise ConfigurationError.invalid("text", given, rule)


STREAM_CLOSED_DETAIL = "the consumer left the stream before the run ended"


async def start_run(
    config: LoopConfig,
    text: RunInput,
    *,
    history: Sequence[Message] = (),
    sink: EventSink | None = None,
    context: Mapping[str, Any] | None = None,
) -> Run:
    """A fresh run: new id, evaluated instructions, the history followed by the user's message.

    `context` takes `deps`, `user_id` and `session_id`; the input is checked before anything runs.
    """
    context = {} if context is None else context
    said, history = check_input(text, history, context)
    can_resume_paused(config)
    session = await enter_session(config, history, context)
    try:
        return await _prepared(config, said, session, sink, context)
    except BaseException:
        if session.release is not None:
            session.release()
        raise


async def _prepared(
    config: LoopConfig,
    said: UserMessage,
    session: Session,
    sink: EventSink | None,
    context: Mapping[str, Any],
) -> Run:
    run_id = context.get("run_id") or os.urandom(16).hex()
    run_context = _run_context(run_id, context)
    instructions, broken = await _instructions(config, run_context)
    if config.output is not None:
        instructions = config.output.instructions(instructions)
    repaired = repair_history(session.history)
    messages: list[Message] = [*repaired.messages, said]
    state = RunState(run_id, messages, instructions, started_at=config.clock())
    state.repairs.extend(repaired.notes)
    state.repair_input()  # invalid Unicode replaced and noted (adr/0022)
    window = config.context_window.tracker() if config.context_window is not None else None
    run = Run(state, config, run_context, sink, window=window)
    if broken is not None:
        run.pending_stop = Stop(StopReason.ERROR, broken.message, error=broken)
    await open_journal(run, session)
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


class LoopResources:
    """What a loop owns beyond its configuration: the model's connections and the store when it
    made them from strings, closed by `aclose()` or `async with loop:`."""

    config: LoopConfig
    _owns_model: bool

    async def __aenter__(self) -> Self:
        """Open the loop's toolsets (start their servers) for all runs until the block ends."""
        if self.config.toolsets is not None:
            await self.config.toolsets.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the toolsets `async with loop:` opened, then the model's connections and the
        store if this loop created them (from strings)."""
        if self.config.toolsets is not None:
            await self.config.toolsets.close()
        close = getattr(self.config.model, "aclose", None)
        if self._owns_model and close is not None:
            await close()
        if self.config.owns_store and self.config.store is not None:
            await self.config.store.aclose()


class Departure:
    """How a streamed run ends when its consumer leaves the block early.

    `work` wraps the run's own work (phases, limiter slot): cancelling it ends the work with
    `STREAM_CLOSED`. `finishing` wraps the end-of-run reporting (hooks): once the consumer has left
    it is shielded, so the run still closes properly, and bounded by `grace` seconds, so a slow or
    stuck `after_run` hook cannot hang the exit. A cancellation from outside is never turned into
    `STREAM_CLOSED`: only `leave()` cancels `work`.
    """

    def __init__(self) -> None:
        self.work = anyio.CancelScope()
        self.finishing = anyio.CancelScope()

    def leave(self, run: Run, grace: float) -> None:
        """The consumer has gone: send it nothing more, stop the work, bound the finishing."""
        run.sink = None
        self.work.cancel()
        self.finishing.shield = True
        self.finishing.deadline = anyio.current_time() + grace

    async def work_or_closed(self, work: Callable[[Run], Awaitable[Stop]], run: Run) -> Stop:
        """`work(run)`, or a `STREAM_CLOSED` stop when the consumer left before it ended."""
        with self.work:
            stop = await work(run)
            if not self.work.cancel_called:
                return stop
        return Stop(StopReason.STREAM_CLOSED, STREAM_CLOSED_DETAIL)


async def finish_run(run: Run, stop: Stop, departure: Departure | None = None) -> RunResult:
    """Give unanswered calls a result, close the open step, build the result, report the end.

    The transcript is closed and the result built before any await, so a run whose consumer left
    has a result even when its hooks run out of `departure`'s grace time.
    """
    state = run.state
    settled = await _settle_open_calls(run, stop) if state.open_tool_calls() else []
    step = state.close_step(run.now())
    if step is not None:
        run.journal.step_closed(state, step, settled)
    result = result_of(run, stop)
    with nullcontext() if departure is None else departure.finishing:
        try:
            if run.journal is not NULL_JOURNAL:
                await run.journal.run_ended(state, result, settled)
        except StoreError as error:
            stop, result = _unsaved_end(run, result, error, stop.error)
        result = await with_state(run, result)
        return await _report_end(run, step, stop, result)
    return result  # the consumer left and the hooks ran out of grace: the result without them


def _unsaved_end(
    run: Run, result: RunResult, error: StoreError, before: ReactLoopError | None
) -> tuple[Stop, RunResult]:
    """The run's end could not be saved: the run is failed with that `StoreError` (the stored
    run stays resumable), saying what stopped it before, if anything did (e.g. which result was
    lost), and the result keeps everything it had, its output included."""
    if before is not None:
        error = StoreError(f"{error.message}; the run had stopped on: {before.message}")
    stop = Stop(StopReason.ERROR, error.message, error=error)
    failed = attrs.evolve(
        result,
        stop_reason=StopReason.ERROR,
        stop_detail=error.message,
        error=error,
        user_message=user_message(error, run.config.error_messages),
    )
    return stop, failed


async def _report_end(run: Run, step: Step | None, stop: Stop, result: RunResult) -> RunResult:
    """Emit the end events and tell the hooks; after-run hooks may mark the result failed."""
    hooks = run.config.hooks
    if step is not None and run.listening:
        await run.emit(StepFinished(step))
    if stop.error is not None:
        await run.emit(RunFailed(stop.error))
        await hooks.on_error(run, stop.error)
    if hooks.has(HookPoint.AFTER_RUN):
        result = await hooks.after_run(run, result)
    if run.listening:
        await run.emit(RunFinished(result))
    return result


def result_of(run: Run, stop: Stop) -> RunResult[Any]:
    """The result of a run whose transcript is closed, ending for `stop`."""
    state = run.state
    output = stop.output
    if output is None and stop.error is None and run.config.output is None:
        output = state.last_text()  # a structured output is a validated value or nothing
    resolved = None if stop.error is None else user_message(stop.error, run.config.error_messages)
    return RunResult(
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
        pending=tuple(state.pending) if stop.reason is StopReason.AWAITING_APPROVAL else (),
        phase_data=dict(state.phase_data),
        instructions=state.instructions,
    )


async def _settle_open_calls(run: Run, stop: Stop) -> list[ToolResult]:
    """Give unanswered calls a result: the one a call already had, else an error; one cut short
    while running (run timeout, stream closed) says so, and gets the result event its
    `ToolCallStarted` promised. Returns the errors the end gave (not results calls already had)."""
    detail = f": {stop.detail}" if stop.detail else ""
    why = f"the run stopped ({stop.reason.value}{detail})"
    outcomes = run.call_outcomes
    running = {call_id for call_id, outcome in outcomes.items() if outcome is None}
    settled = run.state.settle_open_calls(why, outcomes)
    given = [result for result in settled if outcomes.get(result.call_id) is None]
    outcomes.clear()
    for result in given:
        if result.call_id in running:
            await run.emit(ToolCallFinished(result))
    return given

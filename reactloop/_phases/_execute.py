"""Running admitted tool calls: concurrency, exclusivity, timeouts, serialization, truncation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
import orjson
from attrs import frozen

from reactloop._core import (
    INTERRUPTED_RESULT,
    NO_USAGE,
    CallInterrupted,
    HookPoint,
    Tool,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolResult,
    ToolResultDiscarded,
)
from reactloop._durable import NULL_JOURNAL
from reactloop._errors import ErrorCode, ToolError, ToolExecutionError, ToolTimeoutError
from reactloop._phases.applier import park_stop
from reactloop._stored_errors import LeaseLostError
from reactloop._tools import (
    CALLING,
    READS_CALLING,
    SubRunOutcome,
    error_result,
    render,
    result_of,
)

if TYPE_CHECKING:
    from reactloop._loop import Run


@frozen
class Admitted:
    """A call that passed the cap, the hooks and validation, and will run."""

    index: int
    tool: Tool
    call: ToolCall
    arguments: dict[str, Any]


async def _call(run: Run, item: Admitted) -> tuple[object, ToolError | None]:
    """The tool's value, or the error it raised (cancellation is not caught). A tool of a class
    in `READS_CALLING` (an agent tool) reads its run and call from `CALLING`; others skip the
    context variable (a set and a reset per call, on the hot path)."""
    if type(item.tool) in READS_CALLING:
        return await _call_telling(run, item)
    try:
        return await item.tool.invoke(item.arguments, run.context.for_call(item.call.id)), None
    except Exception as exc:
        return None, _failed(item, exc)


async def _call_telling(run: Run, item: Admitted) -> tuple[object, ToolError | None]:
    """`_call` with `CALLING` set to the run and the call for the tool's duration."""
    calling = CALLING.set((run, item.call))
    try:
        return await item.tool.invoke(item.arguments, run.context.for_call(item.call.id)), None
    except Exception as exc:
        return None, _failed(item, exc)
    finally:
        CALLING.reset(calling)


def _failed(item: Admitted, exc: Exception) -> ToolError:
    """The error result's error: what the tool raised, or the interrupted-call result when its
    call was cut off where it ran (a tool run elsewhere, such as a Temporal activity)."""
    if isinstance(exc, CallInterrupted):
        return ToolError(INTERRUPTED_RESULT, tool_name=item.tool.name)
    error = ToolExecutionError(item.tool.name, exc)
    error.__cause__ = exc
    return error


async def _call_within(run: Run, item: Admitted, seconds: float) -> tuple[object, ToolError | None]:
    """`_call` under a time limit; only this scope's own expiry becomes a timeout error."""
    with anyio.move_on_after(seconds):
        return await _call(run, item)
    return None, ToolTimeoutError(item.tool.name, seconds)


async def _invoke(run: Run, item: Admitted) -> ToolResult:
    tool, call = item.tool, item.call
    timeout = tool.timeout if tool.timeout is not None else run.config.tool_timeout
    started = run.now()
    if timeout is None:
        value, error = await _call(run, item)
    else:
        value, error = await _call_within(run, item, timeout)
    duration = run.now() - started
    if type(value) is SubRunOutcome:  # an agent tool's sub-run: its usage, id and result
        return await _delegated(run, item, value, duration)
    if error is None:
        try:
            return result_of(call, value, run.config.max_result_chars, duration)
        except (TypeError, orjson.JSONEncodeError) as exc:
            error = ToolExecutionError(tool.name, TypeError(f"its result cannot be shown: {exc}"))
    await run.config.hooks.on_error(run, error)
    return error_result(call, error, duration)


async def _delegated(
    run: Run, item: Admitted, outcome: SubRunOutcome, duration: float
) -> ToolResult:
    """The result of an agent tool's call; its sub-run's failure goes to the error hooks."""
    if outcome.error is not None:
        await run.config.hooks.on_error(run, outcome.error)
    content = render(outcome.content, run.config.max_result_chars)
    return outcome.tool_result(item.call, content, duration)


def _interrupted(run: Run, item: Admitted) -> bool:
    """True for a call of a resumed step that started without a saved result and whose tool is
    not idempotent: it may have taken effect, so it is not run again."""
    draft = run.state.current
    recovered = None if draft is None else draft.recovered
    return (
        recovered is not None
        and item.call.id in recovered.started
        and getattr(item.tool, "idempotent", False) is not True
    )


async def _outcome(run: Run, item: Admitted) -> ToolResult:
    """The call's result: journaled as started, invoked, journaled as soon as it returns. In a
    resumed step a saved result is taken as it is, and an interrupted call is not run again."""
    call, draft = item.call, run.state.current
    saved = None if draft is None or draft.recovered is None else draft.recovered.results
    if saved is not None and call.id in saved:
        return saved[call.id]
    if _interrupted(run, item):
        result = ToolResult(call.id, call.name, INTERRUPTED_RESULT, True, ErrorCode.TOOL_ERROR)
    else:
        if run.journal is not NULL_JOURNAL:  # no store: nothing to await per call
            await run.journal.call_started(run.state, call)
        tracing = run.config.tracing
        if tracing is None:
            result = await _invoke(run, item)
        else:  # here, where every call passes (the loop's tools and those offered per step)
            result = await tracing.execute_tool(run, item, _invoke)
        if result.usage is not NO_USAGE:  # tokens a sub-run spent: this run's too
            run.state.record_usage(result.usage)
        # invalid Unicode (e.g. a non-UTF-8 file name) repaired here: the result is kept
        result = run.state.repaired_result(result, len(run.state.messages) + item.index)
    if run.journal is not NULL_JOURNAL:
        await _journaled(run, result)
    return result


async def _journaled(run: Run, result: ToolResult) -> None:
    """Commit the result; one that returned after the lease was lost is reported, not kept."""
    try:
        await run.journal.tool_result(run.state, result)
    except LeaseLostError as lost:
        if run.listening:
            await run.emit(ToolResultDiscarded(result, lost))
        raise


async def run_admitted(run: Run, item: Admitted) -> ToolResult:
    """Run one call, then let after-tool-call hooks replace its result."""
    run.call_outcomes[item.call.id] = None
    if run.listening:
        await run.emit(ToolCallStarted(item.call))
    result = await _outcome(run, item)
    hooks = run.config.hooks
    if hooks.has(HookPoint.AFTER_TOOL_CALL):
        verdict = await hooks.after_tool_call(run, item.call, result)
        park_stop(run, verdict)
        result = verdict.value
    if run.listening:
        await run.emit(ToolCallFinished(result))
    run.call_outcomes[item.call.id] = result
    return result


def batches(items: Sequence[Admitted]) -> list[list[Admitted]]:
    """Group calls in order: runs of shareable calls together, each exclusive call alone."""
    groups: list[list[Admitted]] = []
    for item in items:
        if item.tool.exclusive or not groups or groups[-1][0].tool.exclusive:
            groups.append([item])
        else:
            groups[-1].append(item)
    return groups


async def run_concurrently(run: Run, items: Sequence[Admitted], slots: list[Any]) -> None:
    """Run `items` batch by batch, each batch in one task group; results land in `slots`."""
    cap = run.config.max_concurrency
    if cap is None and len(items) == 1:
        slots[items[0].index] = await run_admitted(run, items[0])
        return
    limiter = anyio.CapacityLimiter(cap) if cap is not None else None

    async def one(item: Admitted) -> None:
        if limiter is None:
            slots[item.index] = await run_admitted(run, item)
            return
        async with limiter:
            slots[item.index] = await run_admitted(run, item)

    for group in batches(items):
        if len(group) == 1:
            await one(group[0])
            continue
        async with anyio.create_task_group() as tasks:
            for item in group:
                tasks.start_soon(one, item)

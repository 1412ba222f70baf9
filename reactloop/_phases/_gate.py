"""Holding calls for a decision: the gate a tool call passes after validation, the decisions given
on resume, and the pause at the end of a step with held calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson
from attrs import frozen

from reactloop._approval import ApprovalCheck
from reactloop._core import (
    Approve,
    Deny,
    Edit,
    ExternalFailure,
    ExternalResult,
    HoldKind,
    PendingCall,
    RunPaused,
    Stop,
    StopReason,
    ToolCall,
    ToolResult,
)
from reactloop._errors import ErrorCode
from reactloop._phases._execute import Admitted
from reactloop._tools import render

if TYPE_CHECKING:
    from reactloop._loop import Run


@frozen
class Held:
    """A call that waits for a decision; it has no result until the run is resumed with one."""

    call: ToolCall
    pending: PendingCall


@frozen
class Settled:
    """A call whose result a decision gave (denied, or run elsewhere): it does not run here."""

    call: ToolCall
    result: ToolResult


def denied(call: ToolCall, reason: str) -> ToolResult:
    """The error result of a denied call, as the model reads it."""
    text = f"not run: a reviewer denied this call ({reason})"
    return ToolResult(call.id, call.name, text, True, ErrorCode.TOOL_ERROR)


def decided(run: Run, call: ToolCall) -> ToolCall | Settled:
    """Apply a decision given for `call` before anything else sees it: an edit changes its
    arguments (same id), a denial or an external outcome settles it; approval changes nothing."""
    decision = run.state.decisions.get(call.id)
    match decision:
        case None | Approve():
            return call
        case Edit(arguments=arguments):
            return call.with_arguments(arguments)
        case Deny(reason=reason):
            return Settled(call, denied(call, reason))
        case ExternalResult(value=value):
            content = render(value, run.config.max_result_chars)
            return Settled(call, ToolResult(call.id, call.name, content))
        case ExternalFailure(message=message):
            return Settled(
                call, ToolResult(call.id, call.name, message, True, ErrorCode.TOOL_ERROR)
            )


async def gate(
    run: Run, item: Admitted, held: Mapping[str, PendingCall]
) -> Admitted | Held | Settled:
    """Whether a validated call runs now, waits for a decision, or is settled by an "always"
    decision for its tool. `held` are the calls this step held before the run was resumed."""
    call, tool = item.call, item.tool
    decision = run.state.decisions.get(call.id)
    if isinstance(decision, Approve | Edit):
        if as_decided(run, item, decision):
            return item
        return Held(call, _pending(run, item, CHANGED, HoldKind.APPROVAL))
    prior = held.get(call.id)
    if prior is not None:
        return Held(call, prior)
    if getattr(tool, "external", False):
        why = f"{tool.name!r} runs outside this process: resume with its result"
        return Held(call, _pending(run, item, why, HoldKind.EXTERNAL))
    requires = getattr(tool, "requires_approval", False) is True
    check = ApprovalCheck(call, item.arguments, run.context, requires)
    reason = await run.config.approval.hold_reason(check)
    if reason is None:
        return item
    match run.state.standing.get(tool.name):
        case Approve():
            return item
        case Deny(reason=why):
            return Settled(call, denied(call, why))
    return Held(call, _pending(run, item, reason, HoldKind.APPROVAL))


CHANGED = "its arguments changed after it was approved (a hook gave others): decide again"


def as_decided(run: Run, item: Admitted, decision: Approve | Edit) -> bool:
    """True when the call, after the hooks, has the arguments its decision was given for: an
    edit's, or those the held call showed (unknown for decisions journaled by version 0.1)."""
    if isinstance(decision, Edit):
        expected: dict[str, Any] | None = decision.arguments
    else:
        expected = run.state.decided_on.get(item.call.id)
    if expected is None:
        return True
    raw = item.call.arguments
    return bool(expected == (orjson.loads(raw) if raw.strip() else {}))


def _pending(run: Run, item: Admitted, reason: str, kind: HoldKind) -> PendingCall:
    raw = item.call.arguments
    arguments: dict[str, Any] = orjson.loads(raw) if raw.strip() else {}  # JSON, as the model sent
    deadline = run.config.approval.deadline() if kind is HoldKind.APPROVAL else None
    return PendingCall(item.call.id, item.tool.name, arguments, reason, kind, deadline)


async def pause(run: Run, results: list[ToolResult | None]) -> Stop:
    """End the step with its held calls unanswered: the other results join the transcript, the
    held calls are journaled and reported, and the run stops to wait for decisions."""
    state = run.state
    state.record_tool_results([result for result in results if result is not None])
    pending = tuple(state.pending)
    await run.journal.calls_held(state, pending)
    if run.listening:
        await run.emit(RunPaused(pending))
    names = ", ".join(f"{p.tool} ({p.call_id})" for p in pending)
    return Stop(StopReason.AWAITING_APPROVAL, f"{len(pending)} call(s) await a decision: {names}")

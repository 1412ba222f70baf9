"""`reactloop runs ...`: list a store's runs, show one, export its journal as JSON, and the
decisions a paused run's held calls get from the prompt when it is resumed."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from reactloop._cli._inert import inert, inert_json
from reactloop._cli._lines import (
    Kind,
    Line,
    answer_line,
    call_text,
    cost_text,
    error_line,
    parts_text,
    pending_lines,
    reasoning_text,
    result_text,
    shorten,
    shown_arguments,
    steps_text,
    usage_text,
)
from reactloop._core import (
    SCHEMA_VERSION,
    Approve,
    Decision,
    Deny,
    ExternalFailure,
    ExternalResult,
    HoldKind,
    PendingCall,
    RunSummary,
    Step,
    StoredRun,
)
from reactloop._durable import unstructure_records

EXPORT_FORMAT = "reactloop.run"
"""The `format` field of an exported run (`runs export`), which `trace` reads back."""

Ask = Callable[[str], str]


def when(epoch: float) -> str:
    """Epoch seconds as a UTC time to the second."""
    moment = datetime.datetime.fromtimestamp(epoch, datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def summary_lines(runs: Sequence[RunSummary], parked: Mapping[str, str] | None = None) -> list[str]:
    """One line per run: id, status, created, updated, session and user when set, and for a
    parked run why a worker set it aside (`parked`: reasons by run id)."""
    if not runs:
        return ["no runs"]
    reasons = parked or {}
    lines = []
    for run in runs:
        owner = f"  session={run.session_id}" if run.session_id else ""
        owner += f"  user={run.user_id}" if run.user_id else ""
        reason = reasons.get(run.run_id)
        owner += f"  parked: {shorten(reason)}" if reason else ""
        lines.append(
            f"{run.run_id}  {run.status.value:<11}  {when(run.created_at)}"
            f"  updated {when(run.updated_at)}{owner}"
        )
    return lines


def stored_lines(stored: StoredRun) -> list[Line]:
    """A stored run: input, each step (reasoning, model text, calls, results), then how it
    ended."""
    created = stored.created
    lines = [
        Line(Kind.RUN, f"run {stored.run_id} ({stored.status.value}), {when(created.created_at)}"),
        Line(Kind.MODEL, f"input: {shorten(parts_text(created.input_parts) or created.input)}"),
    ]
    for step in stored.steps:
        lines += _step_lines(step)
    return lines + _end_lines(stored)


def _step_lines(step: Step) -> list[Line]:
    """One step: its time and tokens, the reasoning (one line, never its opaque values), the
    model's text, its calls and their results."""
    took = f"step {step.index}: {step.duration:.2f} s, {usage_text(step.usage)}"
    lines = [Line(Kind.STEP, took)]
    message = None if step.response is None else step.response.message
    if message is not None and message.reasoning:
        lines.append(Line(Kind.THINKING, reasoning_text(message.reasoning)))
    said = "" if message is None else message.text
    if said.strip():
        lines.append(Line(Kind.MODEL, f"model: {shorten(said)}"))
    lines += [Line(Kind.CALL, f"call {call_text(call)}") for call in step.tool_calls]
    for result in step.tool_results:
        kind = Kind.ERROR if result.is_error else Kind.OK
        lines.append(Line(kind, f"{result.name} -> {shorten(result_text(result))}"))
    return lines


def _end_lines(stored: StoredRun) -> list[Line]:
    ended = stored.ended
    lines = pending_lines(stored.pending)
    parked = stored.parked
    if parked is not None:
        by = f" by worker {parked.worker_id}" if parked.worker_id else ""
        return [
            *lines,
            error_line(f"parked{by} at {when(parked.parked_at)}: {parked.reason}"),
            Line(Kind.NOTE, f"once fixed: reactloop runs unpark {stored.run_id} (or runs resume)"),
        ]
    if ended is None:
        return [*lines, Line(Kind.NOTE, "not ended (running, or its process stopped)")]
    lines.append(answer_line(ended.stop_reason, ended.output, stored.messages))
    if ended.error_code is not None:
        lines.append(error_line(f"error [{ended.error_code.value}]: {ended.error_message}"))
    figures = f"{usage_text(stored.usage)}, {cost_text(stored.usage.cost)}"
    lines.append(Line(Kind.USAGE, f"{steps_text(len(stored.steps))}, {figures}"))
    return lines


def export_document(stored: StoredRun) -> bytes:
    """The run's journal as one JSON document (its records, as a store encodes them), with the
    characters a terminal acts on written as JSON escapes (`inert_json`): safe to print."""
    document: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "run_id": stored.run_id,
        "status": stored.status.value,
        "records": unstructure_records(stored.records),
    }
    encoded = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    return inert_json(encoded) + b"\n"


def decide(held: PendingCall, ask: Ask, default: str) -> Decision:
    """A held call's decision: `default` ("approve" or "deny") or, for "ask", the answer to a
    prompt (y/n for an approval, a value for an external call; no answer denies or fails). The
    prompt shows the call inert: its name, arguments and reason come from the run."""
    shown = inert(f"{held.tool}({shown_arguments(held.arguments)})")
    reason = inert(held.reason)
    if held.kind is HoldKind.EXTERNAL:
        if default == "deny":
            return Deny("denied at the command line")
        answer = ask(f"result of {shown} (JSON or text; empty fails it): ").strip()
        return ExternalResult(_value(answer)) if answer else ExternalFailure("no result given")
    if default != "ask":
        return Approve() if default == "approve" else Deny("denied at the command line")
    answer = ask(f"approve {shown}? {reason} [y/N] ").strip().lower()
    return Approve() if answer in ("y", "yes") else Deny("denied at the command line")


def _value(answer: str) -> Any:
    """The answer as JSON when it is JSON, else as text."""
    try:
        return orjson.loads(answer)
    except orjson.JSONDecodeError:
        return answer

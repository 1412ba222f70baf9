"""The trace page's data: a stored run (from a store, or a `runs export` file) laid out as a
timeline of steps, model calls and tool calls, written into one self-contained HTML file.

The journal keeps each step's start and duration and each tool result's duration, but not when
a model call ended: a step's model call is taken to last from the step's start until its tools
began, its tools to start together (side by side) and end after their own durations."""

from __future__ import annotations

import importlib.resources
from collections.abc import Sequence
from typing import Any

import orjson

from reactloop._errors import ConfigurationError
from reactloop._messages import AssistantMessage, Message, SystemMessage, ToolMessage, Usage
from reactloop._state import Step
from reactloop._stores._codec import structure_records
from reactloop._stores._records import SCHEMA_VERSION, StoredRun
from reactloop._stores._replay import replay

PLACEHOLDER = "/*TRACE-DATA*/null"
DERIVED_NOTE = (
    "Model call times are derived: the journal records each step's start and duration and each"
    " tool call's duration, so a model call is drawn from its step's start until the step's tools"
    " began (the step's time less its longest tool call)."
)


def read_export(data: bytes, name: str) -> StoredRun:
    """The run an exported file holds; a file that is not one is a `ConfigurationError`."""
    rule = "a file written by `reactloop runs export` (or a run id in the store)"
    try:
        document = orjson.loads(data)
        if not isinstance(document, dict) or document.get("format") != "reactloop.run":
            raise ConfigurationError.invalid("RUN_OR_FILE", name, rule)
        if document.get("schema_version", 0) > SCHEMA_VERSION:
            newer = f"an export of schema version {SCHEMA_VERSION} or older"
            raise ConfigurationError.invalid("RUN_OR_FILE", name, newer)
        return replay(structure_records(document["records"])).stored
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError.invalid("RUN_OR_FILE", name, f"{rule} ({exc})") from exc


def usage_of(usage: Usage) -> dict[str, int]:
    """Tokens in, out and in total."""
    return {"in": usage.input_tokens, "out": usage.output_tokens, "total": usage.total_tokens}


def message_of(message: Message) -> dict[str, Any]:
    """A transcript message as the page shows it: its role, text and calls."""
    if isinstance(message, AssistantMessage):
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
        return {"role": "assistant", "text": message.text, "calls": calls}
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "text": message.content,
            "name": message.name,
            "call_id": message.call_id,
            "error": message.is_error,
        }
    role = "system" if isinstance(message, SystemMessage) else "user"
    return {"role": role, "text": message.content}


def step_of(step: Step, start: float) -> dict[str, Any]:
    """One step on the timeline (seconds from the run's first step): its model call, then its
    tool calls side by side, one lane each."""
    longest = max((result.duration for result in step.tool_results), default=0.0)
    model_time = max(0.0, step.duration - longest)
    response = step.response
    arguments = {call.id: call.arguments for call in step.tool_calls}
    tools = [
        {
            "call_id": result.call_id,
            "name": result.name,
            "arguments": arguments.get(result.call_id, ""),
            "content": result.content,
            "error": result.is_error,
            "error_code": None if result.error_code is None else result.error_code.value,
            "start": start + model_time,
            "duration": result.duration,
            "lane": lane,
        }
        for lane, result in enumerate(step.tool_results)
    ]
    model = {
        "start": start,
        "duration": model_time,
        "name": None if response is None else response.model,
        "finish": None if response is None else response.finish_reason.value,
        "message": None if response is None else message_of(response.message),
    }
    return {
        "index": step.index,
        "start": start,
        "duration": step.duration,
        "usage": usage_of(step.usage),
        "model": model,
        "tools": tools,
    }


def steps_of(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """The steps in order on one time axis; a step whose clock went back (a run resumed in
    another process) starts where the one before it ended."""
    laid: list[dict[str, Any]] = []
    origin = steps[0].started_at if steps else 0.0
    end = 0.0
    for step in steps:
        start = max(step.started_at - origin, end)
        laid.append(step_of(step, start))
        end = start + step.duration
    return laid


def trace_data(stored: StoredRun) -> dict[str, Any]:
    """Everything the page shows, as JSON values."""
    ended, created = stored.ended, stored.created
    run = {
        "id": stored.run_id,
        "status": stored.status.value,
        "input": created.input,
        "instructions": created.instructions,
        "created_at": created.created_at,
        "stop_reason": None if ended is None else ended.stop_reason.value,
        "stop_detail": None if ended is None else ended.stop_detail,
        "output": None if ended is None else (ended.output or ended.output_json),
        "error_code": None if ended is None or ended.error_code is None else ended.error_code.value,
        "error_message": None if ended is None else ended.error_message,
        "usage": usage_of(stored.usage),
        "pending": [held.tool for held in stored.pending],
    }
    return {
        "run": run,
        "steps": steps_of(stored.steps),
        "messages": [message_of(message) for message in stored.messages],
        "notes": [DERIVED_NOTE],
    }


def write_trace(stored: StoredRun) -> str:
    """The trace page of a run: one HTML file, its CSS, script and data inline (no network)."""
    template = importlib.resources.files("reactloop._cli").joinpath("trace.html").read_text("utf-8")
    data = orjson.dumps(trace_data(stored)).decode()
    safe = data.replace("<", "\\u003c")  # inside <script>: no "</script>" can end it early
    return template.replace(PLACEHOLDER, safe)

"""The trace page's data: a stored run (from a store, or a `runs export` file) laid out as a
timeline of steps, model calls and tool calls, written into one self-contained HTML file.

The journal keeps each step's start and duration and each tool result's duration, but not when
a model call ended nor the phases: for a stored run a step's model call is taken to last from the
step's start until its tools began, its tools to start together (side by side). A run watched by
the command line (`run --html`) has its phases and times measured from its events."""

from __future__ import annotations

import base64
import importlib.resources
from collections.abc import Sequence
from typing import Any

import orjson

from reactloop._cli._lines import reasoning_text
from reactloop._cli._timings import PhaseMark, Timings
from reactloop._core import (
    SCHEMA_VERSION,
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    ReasoningPart,
    RunResult,
    Step,
    StoredRun,
    SystemMessage,
    TextPart,
    ToolMessage,
    Usage,
    describe,
)
from reactloop._durable import replay, structure_records, value_json
from reactloop._errors import ConfigurationError

PLACEHOLDER = "/*TRACE-DATA*/null"
REASONING_CHARS = 2000
"""How much of a reasoning part's readable text the page holds (the rest is cut)."""
THUMBNAIL_BYTES = 256_000
"""Largest image the page holds, as a thumbnail (a data URL); a bigger one is described."""
THUMBNAIL_TYPES = frozenset(("image/png", "image/jpeg", "image/gif", "image/webp"))
"""The image types shown as thumbnails (the ones every browser draws and no script runs in)."""
REASONING = "ReasoningPhase"
"""The phase that calls the model: in a watched run, a model call is drawn as its span."""
MEASURED_NOTE = (
    "Times are measured: the command line watched this run and noted when each phase ended and"
    " each tool call started; a model call is drawn as its reasoning phase's span."
)
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


def usage_of(usage: Usage) -> dict[str, int | str]:
    """Tokens in, out and in total; the cache reads and writes (within "in") and the reasoning
    (within "out") when there are any; the cost in dollars (exact decimal text) when known."""
    shown: dict[str, int | str] = {
        "in": usage.input_tokens, "out": usage.output_tokens, "total": usage.total_tokens,
    }  # fmt: skip
    parts = (("cache_read", usage.cache_read_tokens), ("cache_write", usage.cache_write_tokens),
             ("reasoning", usage.reasoning_tokens))  # fmt: skip
    shown |= {key: count for key, count in parts if count}
    if usage.cost is not None:
        shown["cost"] = str(usage.cost)
    return shown


def reasoning_of(part: ReasoningPart) -> dict[str, str]:
    """A reasoning part as the page shows it: its one-line summary and its readable text (cut
    to `REASONING_CHARS`), "" when it has none. Its opaque values (signature, redacted data,
    encrypted content) never reach the page."""
    readable = part.readable.strip()
    cut = readable if len(readable) <= REASONING_CHARS else readable[: REASONING_CHARS - 1] + "…"
    return {"summary": reasoning_text([part]), "text": cut}


def part_of(part: ContentPart) -> dict[str, str]:
    """An image, document or audio part as the page shows it: its one-line description, and for
    an image held as bytes of at most `THUMBNAIL_BYTES`, a data URL the page draws as a
    thumbnail (an image by URL is not fetched: the page loads nothing from the network)."""
    kind = type(part).__name__.removesuffix("Part").lower()
    shown = {"kind": kind, "description": describe(part)}
    if (
        isinstance(part, ImagePart)
        and part.data is not None
        and len(part.data) <= THUMBNAIL_BYTES
        and part.media_type in THUMBNAIL_TYPES
    ):
        shown["src"] = f"data:{part.media_type};base64,{base64.b64encode(part.data).decode()}"
    return shown


def parts_of(parts: Sequence[ContentPart]) -> list[dict[str, str]]:
    """The parts other than text, in order (the text is the message's `text`)."""
    return [part_of(part) for part in parts if not isinstance(part, TextPart)]


def message_of(message: Message) -> dict[str, Any]:
    """A transcript message as the page shows it: its role, text and calls, an assistant
    message's reasoning (summaries and readable text only), and the images, documents and audio
    of a user or tool message (`part_of`)."""
    if isinstance(message, AssistantMessage):
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
        reasoning = [reasoning_of(part) for part in message.reasoning]
        return {"role": "assistant", "text": message.text, "calls": calls, "reasoning": reasoning}
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "text": message.text,
            "name": message.name,
            "call_id": message.call_id,
            "error": message.is_error,
            "parts": parts_of(message.parts),
        }
    if isinstance(message, SystemMessage):
        return {"role": "system", "text": message.text}
    return {"role": "user", "text": message.text, "parts": parts_of(message.parts)}


def phase_segments(marks: Sequence[PhaseMark], start: float, origin: float) -> list[Any]:
    """Each phase from the end of the one before (the first from `start`) to its own end,
    in seconds from `origin`."""
    segments, at = [], start
    for mark in marks:
        segment = {"name": mark.phase, "decision": mark.decision, "start": at - origin}
        segments.append({**segment, "duration": max(0.0, mark.ended_at - at)})
        at = mark.ended_at
    return segments


def _model_span(step: Step, start: float, phases: list[Any]) -> tuple[float, float, bool]:
    """The model call's start and duration, and whether they were measured (the reasoning
    phase's own span) or derived (from the step's start until its longest tool call)."""
    for segment in phases:
        if segment["name"] == REASONING:
            return segment["start"], segment["duration"], True
    longest = max((result.duration for result in step.tool_results), default=0.0)
    return start, max(0.0, step.duration - longest), False


def _tools(step: Step, tools_start: float, starts: dict[str, float]) -> list[Any]:
    """The step's tool calls, one lane each; each starts when it was seen to (`starts`, in
    seconds on the page's axis), else at `tools_start`."""
    arguments = {call.id: call.arguments for call in step.tool_calls}
    return [
        {
            "call_id": result.call_id,
            "name": result.name,
            "arguments": arguments.get(result.call_id, ""),
            "content": result.content,
            "parts": parts_of(result.parts),
            "error": result.is_error,
            "error_code": None if result.error_code is None else result.error_code.value,
            "start": starts.get(result.call_id, tools_start),
            "duration": result.duration,
            "lane": lane,
        }
        for lane, result in enumerate(step.tool_results)
    ]


def step_of(step: Step, start: float, timings: Timings | None = None, origin: float = 0.0) -> Any:
    """One step on the timeline (at `start` seconds; `origin` is the clock's time at zero): its
    phases when they were watched, its model call, then its tool calls side by side."""
    marks = [] if timings is None else timings.phases.get(step.index, [])
    phases = phase_segments(marks, step.started_at, origin)
    model_start, model_time, measured = _model_span(step, start, phases)
    seen = {} if timings is None else timings.tool_starts
    starts = {call_id: at - origin for call_id, at in seen.items()}
    response = step.response
    model = {
        "start": model_start,
        "duration": model_time,
        "measured": measured,
        "name": None if response is None else response.model,
        "finish": None if response is None else response.finish_reason.value,
        "message": None if response is None else message_of(response.message),
    }
    if response is not None and response.answered_by is not None:
        model["answered_by"] = response.answered_by  # which of a FallbackModel's models
    return {
        "index": step.index,
        "start": start,
        "duration": step.duration,
        "usage": usage_of(step.usage),
        "phases": phases,
        "model": model,
        "tools": _tools(step, model_start + model_time, starts),
    }


def steps_of(
    steps: Sequence[Step], timings: Timings | None = None, origin: float | None = None
) -> list[Any]:
    """The steps in order on one time axis from `origin` (the first step's start unless given);
    a step whose clock went back (a run resumed in another process) starts where the one before
    it ended."""
    laid: list[Any] = []
    zero = origin if origin is not None else (steps[0].started_at if steps else 0.0)
    end = 0.0
    for step in steps:
        start = max(step.started_at - zero, end)
        laid.append(step_of(step, start, timings, step.started_at - start))
        end = start + step.duration
    return laid


def _stored_facts(stored: StoredRun) -> dict[str, Any]:
    ended, created = stored.ended, stored.created
    return {
        "id": stored.run_id,
        "status": stored.status.value,
        "input": created.input,
        "stop_reason": None if ended is None else ended.stop_reason.value,
        "output": None if ended is None else (ended.output or ended.output_json),
        "error_code": None if ended is None or ended.error_code is None else ended.error_code.value,
        "error_message": None if ended is None else ended.error_message,
        "usage": usage_of(stored.usage),
        "pending": [held.tool for held in stored.pending],
    }


def _result_facts(result: RunResult[Any], text: str) -> dict[str, Any]:
    error, output = result.error, result.output
    return {
        "id": result.run_id,
        "status": "failed" if error is not None else result.stop_reason.value,
        "input": text,
        "stop_reason": result.stop_reason.value,
        "output": output if output is None or isinstance(output, str) else value_json(output),
        "error_code": None if error is None else error.code.value,
        "error_message": None if error is None else error.message,
        "usage": usage_of(result.usage),
        "pending": [held.tool for held in result.pending],
    }


def stored_trace(stored: StoredRun) -> dict[str, Any]:
    """The page's data for a stored run (model call times derived: the journal has none)."""
    return {
        "run": _stored_facts(stored),
        "start": None,
        "steps": steps_of(stored.steps),
        "messages": [message_of(message) for message in stored.messages],
        "notes": [DERIVED_NOTE],
    }


def watched_trace(result: RunResult[Any], text: str, timings: Timings) -> dict[str, Any]:
    """The page's data for a run the command line watched: phases and times as measured."""
    first = result.steps[0].started_at if result.steps else 0.0
    origin = first if timings.started_at is None else timings.started_at
    start_marks = timings.phases.get(0, [])
    start = {"phases": phase_segments(start_marks, origin, origin)} if start_marks else None
    return {
        "run": _result_facts(result, text),
        "start": start,
        "steps": steps_of(result.steps, timings, origin),
        "messages": [message_of(message) for message in result.messages],
        "notes": [MEASURED_NOTE],
    }


def write_trace(trace: dict[str, Any]) -> str:
    """The trace page: one HTML file, its CSS, script and data (`stored_trace`,
    `watched_trace`) inline; it loads nothing from the network."""
    template = importlib.resources.files("reactloop._cli").joinpath("trace.html").read_text("utf-8")
    data = orjson.dumps(trace).decode()
    safe = data.replace("<", "\\u003c")  # inside <script>: no "</script>" can end it early
    return template.replace(PLACEHOLDER, safe)

"""AG-UI 1.0 responses: a run's events as AG-UI events (ag-ui-protocol 1.0.0, @ag-ui/core 1.0.0)
in SSE frames, `data: {json}` with camelCase fields as the schema spells them.

One model response is one assistant message: its text (TEXT_MESSAGE_*) and its tool calls
(TOOL_CALL_*, `parentMessageId` naming it); reasoning is a REASONING_* span of its own message
(its text only: signatures and encrypted reasoning never leave the server); each result is a
TOOL_CALL_RESULT. A structured answer is RUN_FINISHED's `result`, not a call of the output tool
(a call with no result would read to the client as a frontend tool call left to answer). A
paused run ends with RUN_FINISHED's interrupt outcome, one `Interrupt` per held call (its id is
the call id); an interrupted run with the cancelled outcome; a failed one
with RUN_ERROR. STATE_SNAPSHOT carries what the run exposes: `runId`, `status`, `step`, `usage`
and the held calls (`pending`). Frames are built with orjson from dicts (no pydantic): the
tests validate every one against ag_ui.core's models and the client's own verifier.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from reactloop._core import (
    Event,
    HoldKind,
    ModelRetrying,
    ModelSwitched,
    PendingCall,
    ReasoningStreamed,
    RunFailed,
    RunFinished,
    RunPaused,
    RunResult,
    RunStarted,
    StepFinished,
    StepStarted,
    StopReason,
    TextStreamed,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStreamed,
    Usage,
)
from reactloop._output import FINAL_TOOL
from reactloop._serve._contracts import StreamContext
from reactloop._serve._masks import masked
from reactloop._tools import jsonable

MEDIA_TYPE = "text/event-stream"
INTERRUPT_REASON = "tool_call"  # the spec's core reason for an interrupt bound to a tool call
EXTERNAL_REASON = "reactloop:external_tool"  # a namespaced custom reason: run it, send the result
CANCELLED = frozenset({StopReason.INTERRUPTED, StopReason.STREAM_CLOSED})

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "true runs the call, false denies it"},
        "reason": {"type": "string", "description": "why it is denied (read by the model)"},
        "editedArgs": {
            "type": "object",
            "description": "Full replacement of the tool's arguments (with approved: true). "
            "Not merged.",
        },
    },
    "required": ["approved"],
    "additionalProperties": False,
}
"""The answer to a call held for approval (AG-UI's approve-with-edits pattern)."""

EXTERNAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "result": {"description": "what the tool returned, run outside the server: any JSON"},
        "error": {"type": "string", "description": "why the tool failed, read by the model"},
    },
    "oneOf": [{"required": ["result"]}, {"required": ["error"]}],
    "additionalProperties": False,
}
"""The answer to an external tool's call: its result, or its failure."""


def _frame(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload, default=jsonable) + b"\n\n"


def token_usage(usage: Usage) -> dict[str, int]:
    """A `Usage` as AG-UI's TokenUsage: the same accounting (cache reads and writes inside the
    input count, reasoning inside the output count), so the numbers copy over."""
    found = {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.total_tokens,
    }
    if usage.reasoning_tokens:
        found["reasoningTokens"] = usage.reasoning_tokens
    if usage.cache_read_tokens:
        found["cachedInputTokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        found["cacheWriteInputTokens"] = usage.cache_write_tokens
    return found


def interrupt(pending: PendingCall) -> dict[str, Any]:
    """One held call as an AG-UI `Interrupt`: its id is the call id (what a resume entry
    answers), with a response schema for approvals (approve, deny, edit) or for an external
    tool's result."""
    approval = pending.kind is HoldKind.APPROVAL
    arguments = orjson.dumps(pending.arguments, default=jsonable).decode()
    found: dict[str, Any] = {
        "id": pending.call_id,
        "reason": INTERRUPT_REASON if approval else EXTERNAL_REASON,
        "message": f"{pending.reason}: {pending.tool}({arguments})",
        "toolCallId": pending.call_id,
        "responseSchema": APPROVAL_SCHEMA if approval else EXTERNAL_SCHEMA,
        "metadata": {"reactloop": {"tool": pending.tool, "kind": str(pending.kind)}},
    }
    if pending.expires_at is not None:
        found["expiresAt"] = datetime.fromtimestamp(pending.expires_at, UTC).isoformat()
    return found


def _pending_state(pending: PendingCall) -> dict[str, Any]:
    return {
        "callId": pending.call_id,
        "tool": pending.tool,
        "arguments": pending.arguments,
        "reason": pending.reason,
        "kind": str(pending.kind),
    }


def _result_value(result: RunResult[Any]) -> tuple[bool, Any]:
    """The run's output as RUN_FINISHED's `result` (text as it is, a structured value as JSON),
    with whether it could be written at all."""
    output = result.output
    if output is None or isinstance(output, str | int | float | bool):
        return True, output
    try:
        return True, orjson.loads(orjson.dumps(output, default=jsonable))
    except TypeError:
        return False, None


class AgUiEncoder:
    """The AG-UI writer of one response (see the module doc). Deterministic: message ids are
    `{runId}-{n}` of the stream's AG-UI run id, so a replay of the same events into a fresh
    encoder writes the same frames. `context.continued` (a run resumed by the client's
    answers) does not re-announce the calls of the step it re-enters (the spec: a resumed run
    emits only their TOOL_CALL_RESULTs)."""

    media_type = MEDIA_TYPE
    headers: Mapping[str, str] = {}

    def __init__(self, context: StreamContext) -> None:
        self.run_id = context.run_id
        self.thread_id = context.session_id or context.run_id
        self.client_run_id = context.client_run_id or context.run_id
        self.continued = context.continued
        self._out: list[bytes] = []
        self._minted = 0
        self._fed = False
        self._step: str | None = None
        self._message: str | None = None  # the current model response's assistant message
        self._text = False  # its text message is open
        self._reasoning: str | None = None  # the open reasoning message
        self._calls: dict[str, str] = {}  # the response's open tool calls: id -> name
        self._by_index: dict[int, str] = {}  # the current response's streamed calls
        self._shown: set[str] = set()  # calls announced in this stream
        self._reentered = context.continued  # still in the step a resumed run re-enters
        self._steps = 0
        self._usage = Usage()
        self._ended: bytes | None = None

    # --- the StreamEncoder protocol ---------------------------------------------------------

    def opening(self) -> bytes:
        """RUN_STARTED; after a continuation's catch-up also what the earlier events left open
        (step, message, reasoning, tool call), or the run's end when they ended it."""
        started: dict[str, Any] = {
            "type": "RUN_STARTED",
            "threadId": self.thread_id,
            "runId": self.client_run_id,
        }
        frames = [_frame(started)]
        if self._ended is not None:
            frames.append(self._ended)
        elif self._fed:
            frames.extend(_frame(payload) for payload in self._reopened())
        return b"".join(frames)

    def encode(self, event: Event, event_id: str | None) -> bytes:
        """The frames of one event, the last carrying `id: event_id`; b"" when AG-UI shows
        nothing of it (phase ends, hook failures, sub-runs' events)."""
        self._fed = True
        handler = _HANDLERS.get(type(event))
        if handler is None or self._ended is not None:
            return b""
        handler(self, event)
        out, self._out = self._out, []
        if not out:
            return b""
        if event_id is not None:
            out[-1] = b"id: " + event_id.encode() + b"\n" + out[-1]
        return b"".join(out)

    def failure(self, message: str, code: str) -> bytes:
        """RUN_ERROR with `message` and `code` (what the HTTP layer chose to show)."""
        self._ended = _frame({"type": "RUN_ERROR", "message": masked(message), "code": code})
        return self._ended

    def closing(self) -> bytes:
        """Nothing: an AG-UI stream ends with its run's last event."""
        return b""

    # --- what is open -----------------------------------------------------------------------

    def _emit(self, payload: dict[str, Any]) -> None:
        self._out.append(_frame(payload))

    def _mint(self) -> str:
        self._minted += 1
        return f"{self.client_run_id}-{self._minted}"

    def _assistant(self) -> str:
        if self._message is None:
            self._message = self._mint()
        return self._message

    def _reopened(self) -> list[dict[str, Any]]:
        """The openers of what is open now (a continuation's client starts a fresh run)."""
        found: list[dict[str, Any]] = []
        if self._step is not None:
            found.append({"type": "STEP_STARTED", "stepName": self._step})
        if self._text and self._message is not None:
            found.append({"type": "TEXT_MESSAGE_START", "messageId": self._message})
            found[-1]["role"] = "assistant"
        if self._reasoning is not None:
            found.append({"type": "REASONING_START", "messageId": self._reasoning})
            found.append(_reasoning_start(self._reasoning))
        found.extend(self._call_start(call_id, name) for call_id, name in self._calls.items())
        return found

    def _close_content(self) -> None:
        """End the open text message or reasoning (one is open at a time)."""
        if self._text and self._message is not None:
            self._emit({"type": "TEXT_MESSAGE_END", "messageId": self._message})
        self._text = False
        if self._reasoning is not None:
            self._emit({"type": "REASONING_MESSAGE_END", "messageId": self._reasoning})
            self._emit({"type": "REASONING_END", "messageId": self._reasoning})
            self._reasoning = None

    def _close_calls(self) -> None:
        """End the response's streamed tool calls (their pieces may interleave, so each stays
        open until the response is whole)."""
        for call_id in self._calls:
            self._emit({"type": "TOOL_CALL_END", "toolCallId": call_id})
        self._calls = {}

    def _end_response(self) -> None:
        """The model's response is over: close what it left open; the next one is a new
        assistant message."""
        self._close_content()
        self._close_calls()
        self._message = None
        self._by_index = {}

    def _close_step(self) -> None:
        self._end_response()
        if self._step is not None:
            self._emit({"type": "STEP_FINISHED", "stepName": self._step})
            self._step = None

    def _call_start(self, call_id: str, name: str) -> dict[str, Any]:
        return {
            "type": "TOOL_CALL_START",
            "toolCallId": call_id,
            "toolCallName": name,
            "parentMessageId": self._assistant(),
        }

    def _announce(self, call_id: str, name: str, arguments: str) -> None:
        """A whole tool call not streamed here (a replay, a model that does not stream)."""
        self._close_content()
        self._shown.add(call_id)
        self._emit(self._call_start(call_id, name))
        if arguments:
            self._emit({"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": arguments})
        self._emit({"type": "TOOL_CALL_END", "toolCallId": call_id})

    def _snapshot(self, status: str, pending: tuple[PendingCall, ...] = ()) -> None:
        """STATE_SNAPSHOT: the run id, its status, the steps done, the usage so far and the
        calls it waits on."""
        state = {
            "runId": self.run_id,
            "status": status,
            "step": self._steps,
            "usage": token_usage(self._usage),
            "pending": [_pending_state(call) for call in pending],
        }
        self._emit({"type": "STATE_SNAPSHOT", "snapshot": state})

    # --- one handler per event type ---------------------------------------------------------

    def _run_started(self, event: RunStarted) -> None:
        self._snapshot("running")

    def _step_started(self, event: StepStarted) -> None:
        self._close_step()
        self._step = f"step {event.index}"
        self._emit({"type": "STEP_STARTED", "stepName": self._step})

    def _text_streamed(self, event: TextStreamed) -> None:
        if not event.text:
            return
        if not self._text:
            self._close_content()
            self._text = True
            start = {"type": "TEXT_MESSAGE_START", "messageId": self._assistant()}
            start["role"] = "assistant"
            self._emit(start)
        message = self._message
        self._emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": event.text})

    def _reasoning_streamed(self, event: ReasoningStreamed) -> None:
        if not event.text:
            return
        if self._reasoning is None:
            self._close_content()
            self._reasoning = self._mint()
            self._emit({"type": "REASONING_START", "messageId": self._reasoning})
            self._emit(_reasoning_start(self._reasoning))
        delta = {"type": "REASONING_MESSAGE_CONTENT", "messageId": self._reasoning}
        delta["delta"] = event.text
        self._emit(delta)

    def _tool_call_streamed(self, event: ToolCallStreamed) -> None:
        call_id = self._by_index.get(event.index)
        if call_id is None:
            if event.call_id is None or event.name is None:
                return  # a piece of a call whose start this stream never saw
            hidden = event.name == FINAL_TOOL  # the structured answer: RUN_FINISHED's result
            call_id = self._by_index[event.index] = "" if hidden else event.call_id
            if hidden:
                return
            self._close_content()
            self._shown.add(call_id)
            self._calls[call_id] = event.name
            self._emit(self._call_start(call_id, event.name))
        if event.arguments_delta and call_id in self._calls:
            self._emit(
                {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": event.arguments_delta}
            )

    def _tool_call_started(self, event: ToolCallStarted) -> None:
        self._close_content()
        self._close_calls()
        call = event.call
        if call.id in self._shown or self._reentered or call.name == FINAL_TOOL:
            return
        self._announce(call.id, call.name, call.arguments)

    def _tool_call_finished(self, event: ToolCallFinished) -> None:
        self._close_content()
        result = event.result
        self._emit(
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": self._mint(),
                "toolCallId": result.call_id,
                "content": masked(result.content) if result.is_error else result.content,
                "role": "tool",
            }
        )

    def _step_finished(self, event: StepFinished) -> None:
        self._close_step()
        self._reentered = False
        self._steps += 1
        self._usage = self._usage + event.step.usage
        self._snapshot("running")

    def _retrying(self, event: ModelRetrying | ModelSwitched) -> None:
        """The attempt's pieces are void: its message stays as streamed (AG-UI cannot take
        back content) and the next attempt writes a new one."""
        self._end_response()

    def _run_paused(self, event: RunPaused) -> None:
        self._close_content()
        self._close_calls()
        for held in event.pending:
            if held.call_id not in self._shown and not self._reentered:
                arguments = orjson.dumps(held.arguments, default=jsonable).decode()
                self._announce(held.call_id, held.tool, arguments)
        self._end_response()

    def _run_failed(self, event: RunFailed) -> None:
        self._close_step()
        self._snapshot("error")
        error = event.error
        self._ended = _frame(
            {"type": "RUN_ERROR", "message": masked(error.message), "code": str(error.code)}
        )
        self._out.append(self._ended)

    def _run_finished(self, event: RunFinished) -> None:
        result = event.result
        self._close_step()
        self._usage = result.usage
        self._steps = max(self._steps, len(result.steps))
        self._snapshot(str(result.stop_reason), result.pending)
        if result.stop_reason is StopReason.ERROR and result.error is not None:
            error = result.error
            self._ended = _frame(
                {"type": "RUN_ERROR", "message": masked(error.message), "code": str(error.code)}
            )
        else:
            self._ended = _frame(self._finished(result))
        self._out.append(self._ended)

    def _finished(self, result: RunResult[Any]) -> dict[str, Any]:
        """RUN_FINISHED: interrupt (one per held call), cancelled, or success with the output."""
        finished: dict[str, Any] = {
            "type": "RUN_FINISHED",
            "threadId": self.thread_id,
            "runId": self.client_run_id,
            "usage": [token_usage(result.usage)],
        }
        if result.pending:
            interrupts = [interrupt(call) for call in result.pending]
            finished["outcome"] = {"type": "interrupt", "interrupts": interrupts}
        elif result.stop_reason in CANCELLED:
            finished["outcome"] = {"type": "cancelled"}
        else:
            finished["outcome"] = {"type": "success"}
            known, value = _result_value(result)
            if known and value is not None:
                finished["result"] = value
        return finished


def _reasoning_start(message_id: str) -> dict[str, Any]:
    return {"type": "REASONING_MESSAGE_START", "messageId": message_id, "role": "reasoning"}


_HANDLERS: dict[type, Callable[[AgUiEncoder, Any], None]] = {
    RunStarted: AgUiEncoder._run_started,
    StepStarted: AgUiEncoder._step_started,
    TextStreamed: AgUiEncoder._text_streamed,
    ReasoningStreamed: AgUiEncoder._reasoning_streamed,
    ToolCallStreamed: AgUiEncoder._tool_call_streamed,
    ToolCallStarted: AgUiEncoder._tool_call_started,
    ToolCallFinished: AgUiEncoder._tool_call_finished,
    StepFinished: AgUiEncoder._step_finished,
    ModelRetrying: AgUiEncoder._retrying,
    ModelSwitched: AgUiEncoder._retrying,
    RunPaused: AgUiEncoder._run_paused,
    RunFailed: AgUiEncoder._run_failed,
    RunFinished: AgUiEncoder._run_finished,
}
"""What each shown event type does; the rest (phase ends, hook failures, output pieces, a
sub-run's events) AG-UI does not show."""

"""The AI SDK's UI message stream (ai 7): a run's events as the chunks `useChat` reads, one SSE
`data: {json}` frame each, ending with `data: [DONE]`.

One run is one assistant message (its id from the run id, so a replay, a reconnect and the
resend after an approval all name the same message); each step is a `start-step` /
`finish-step` pair; text and reasoning stream as parts; a tool call streams its input, then
its output or error; a held call becomes a `tool-approval-request` whose `approvalId` is the
loop's call id, and a denied one comes back as `tool-output-denied`. A structured answer is the
`finish` chunk's `messageMetadata.output`, not a call of the output tool (a tool part with no
output would stay `input-streaming` in the client).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStreamed,
    ToolResult,
    ToolResultDiscarded,
    Usage,
)
from reactloop._output import FINAL_TOOL
from reactloop._serve._contracts import StreamContext
from reactloop._serve._masks import masked
from reactloop._tools import jsonable

HEADERS: Mapping[str, str] = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""What a UI message stream response carries besides its media type (the AI SDK's own
`UI_MESSAGE_STREAM_HEADERS`, and no buffering by proxies)."""

DENIED_PREFIX = "not run: a reviewer denied this call ("
"""How a denied call's result begins (the loop's `denied` result): shown as a denial."""

DONE = b"data: [DONE]\n\n"

FINISH_REASONS: Mapping[StopReason, str] = {
    StopReason.COMPLETED: "stop",
    StopReason.FINAL_ANSWER: "stop",
    StopReason.AWAITING_APPROVAL: "tool-calls",
    StopReason.TOOL_CALLED: "tool-calls",
    StopReason.TOKEN_BUDGET: "length",
    StopReason.INTERRUPTED: "interrupted",
    StopReason.STREAM_CLOSED: "interrupted",
    StopReason.ERROR: "error",
}
"""The AI SDK's finish reason for each stop reason; any other is "other"."""


def message_id_of(run_id: str) -> str:
    """The assistant message a run's stream fills (the same in every stream of the run)."""
    return f"{run_id}-assistant"


def usage_json(usage: Usage) -> dict[str, int]:
    """A run's tokens as the AI SDK names them (`LanguageModelUsage`)."""
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
        "reasoningTokens": usage.reasoning_tokens,
        "cachedInputTokens": usage.cache_read_tokens,
    }


def input_value(arguments: str) -> Any:
    """A call's arguments as the JSON value the client shows (the raw text when not JSON)."""
    try:
        return orjson.loads(arguments) if arguments.strip() else {}
    except orjson.JSONDecodeError:
        return arguments


class _Streamed:
    """A tool call as its pieces streamed: the id the client knows it by, and whether a loop
    call has been matched to it yet."""

    __slots__ = ("claimed", "name", "original", "ui_id")

    def __init__(self, original: str, ui_id: str, name: str) -> None:
        self.original, self.ui_id, self.name, self.claimed = original, ui_id, name, False


HIDDEN = _Streamed("", "", FINAL_TOOL)
"""The stand-in for a streamed call of the output tool, whose pieces the client never sees."""


class UIStreamEncoder:
    """One response's encoder: stateful (the open text or reasoning part, the calls shown) and
    deterministic (the same events give the same bytes, so a reconnect can replay them)."""

    media_type = "text/event-stream"
    headers = HEADERS

    def __init__(self, context: StreamContext) -> None:
        # a continuation goes on with the message the client posted (`client_run_id`)
        self.message_id = (
            context.message_id or context.client_run_id or message_id_of(context.run_id)
        )
        self.continued = context.continued
        self.started = False
        self.last_step = 0
        self.reentered = False  # in a step the client already shows (a resumed run's first)
        self.parts = 0
        self.text: str | None = None
        self.reasoning: str | None = None
        self.by_index: dict[int, _Streamed] = {}
        self.streamed: list[_Streamed] = []
        self.ui_ids: dict[str, str] = {}  # loop call id -> the id the client knows
        self.shown: set[str] = set()  # loop call ids whose input the client has
        self.asked: set[str] = set()  # loop call ids with an approval request
        self.settled: set[str] = set()  # loop call ids whose outcome was sent
        self.hidden: set[str] = set()  # loop call ids of the output tool (the answer itself)
        self.handlers: dict[type, Callable[[Any, list[dict[str, Any]]], None]] = {
            RunStarted: self._run_started,
            StepStarted: self._step_started,
            TextStreamed: self._text,
            ReasoningStreamed: self._reasoning,
            ToolCallStreamed: self._call_streamed,
            ToolCallStarted: self._call_started,
            ToolCallFinished: self._call_finished,
            ToolResultDiscarded: self._discarded,
            StepFinished: self._step_finished,
            ModelRetrying: self._void_attempt,
            ModelSwitched: self._void_attempt,
            RunPaused: self._paused,
            RunFailed: self._failed,
            RunFinished: self._finished,
        }

    def opening(self) -> bytes:
        """Nothing: the stream opens with the run's `start` chunk."""
        return b""

    def encode(self, event: Event, event_id: str | None) -> bytes:
        """The chunks for one event (none for events the client has no part for)."""
        handler = self.handlers.get(type(event))
        if handler is None:
            return b""
        chunks: list[dict[str, Any]] = []
        handler(event, chunks)
        return frames(chunks, event_id)

    def failure(self, message: str, code: str) -> bytes:
        """An `error` chunk (the client's `onError`), after closing what is open."""
        chunks: list[dict[str, Any]] = []
        self._close_parts(chunks)
        chunks.append({"type": "error", "errorText": masked(f"{code}: {message}")})
        return frames(chunks, None)

    def closing(self) -> bytes:
        """`data: [DONE]`, the stream's end."""
        return DONE

    def _run_started(self, event: RunStarted, out: list[dict[str, Any]]) -> None:
        if not self.started:  # once per stretch: a resumed run's events may follow a pause
            self.started = True
            out.append({"type": "start", "messageId": self.message_id})

    def _step_started(self, event: StepStarted, out: list[dict[str, Any]]) -> None:
        self._close_parts(out)
        self.by_index = {}
        first_of_continued = self.continued and self.last_step == 0
        self.reentered = event.index <= self.last_step or first_of_continued
        if not self.reentered:
            self.parts = 0
            out.append({"type": "start-step"})
        self.last_step = max(self.last_step, event.index)

    def _text(self, event: TextStreamed, out: list[dict[str, Any]]) -> None:
        if self.reasoning is not None:
            self._close_reasoning(out)
        if self.text is None:
            self.text = self._part_id("text")
            out.append({"type": "text-start", "id": self.text})
        out.append({"type": "text-delta", "id": self.text, "delta": event.text})

    def _reasoning(self, event: ReasoningStreamed, out: list[dict[str, Any]]) -> None:
        if self.text is not None:
            self._close_text(out)
        if self.reasoning is None:
            self.reasoning = self._part_id("reasoning")
            out.append({"type": "reasoning-start", "id": self.reasoning})
        out.append({"type": "reasoning-delta", "id": self.reasoning, "delta": event.text})

    def _call_streamed(self, event: ToolCallStreamed, out: list[dict[str, Any]]) -> None:
        streamed = self.by_index.get(event.index)
        if streamed is None:
            if event.call_id is None or event.name is None:
                return  # a piece before the call's first: nothing to attach it to
            if event.name == FINAL_TOOL:  # the structured answer: `finish`'s metadata
                self.by_index[event.index] = HIDDEN
                return
            self._close_parts(out)
            streamed = self._new_streamed(event.call_id, event.name)
            self.by_index[event.index] = streamed
            out.append(
                {"type": "tool-input-start", "toolCallId": streamed.ui_id, "toolName": event.name}
            )
        if event.arguments_delta and streamed is not HIDDEN:
            delta = event.arguments_delta
            out.append(
                {"type": "tool-input-delta", "toolCallId": streamed.ui_id, "inputTextDelta": delta}
            )

    def _new_streamed(self, original: str, name: str) -> _Streamed:
        """A streamed call, under the id its first piece gave (made unique)."""
        streamed = _Streamed(original, self._unique(original), name)
        self.streamed.append(streamed)
        return streamed

    def _unique(self, call_id: str) -> str:
        """`call_id`, or a suffixed one when this stream used it already (servers that reuse
        ids), so two calls never share a part."""
        taken = {item.ui_id for item in self.streamed} | set(self.ui_ids.values())
        ui_id, n = call_id, 1
        while ui_id in taken:
            n += 1
            ui_id = f"{call_id}-{n}"
        return ui_id

    def _call_started(self, event: ToolCallStarted, out: list[dict[str, Any]]) -> None:
        if event.call.name == FINAL_TOOL:
            self.hidden.add(event.call.id)
            return
        self._show_input(event.call, out)

    def _show_input(self, call: ToolCall, out: list[dict[str, Any]]) -> None:
        """`tool-input-available` for a call whose input the client does not have yet (its
        pieces may have streamed under the provider's id); none in the step a continuation
        re-enters (its client has the calls from the stream that paused). A whole stream shows
        every call, those of a step re-entered after a pause it does not show included."""
        if call.id in self.shown:
            return
        self.shown.add(call.id)
        self._close_parts(out)
        streamed = self._claim(call.id, call.provider_id, call.name)
        if streamed is None and self.reentered and self.continued:
            self.ui_ids[call.id] = call.id
            return
        ui_id = streamed.ui_id if streamed is not None else self._unique(call.id)
        self.ui_ids[call.id] = ui_id
        if streamed is None:
            out.append({"type": "tool-input-start", "toolCallId": ui_id, "toolName": call.name})
        input_ = input_value(call.arguments)
        out.append(
            {
                "type": "tool-input-available",
                "toolCallId": ui_id,
                "toolName": call.name,
                "input": input_,
            }
        )

    def _claim(self, call_id: str, provider_id: str | None, name: str) -> _Streamed | None:
        """The streamed call a loop call is: by its id, else by the provider's id it replaced,
        else the first unclaimed call of its tool (calls are handled in the model's order)."""
        unclaimed = [item for item in self.streamed if not item.claimed]
        found = (
            next((item for item in unclaimed if item.original == call_id), None)
            or next((item for item in unclaimed if item.original == provider_id), None)
            or next((item for item in unclaimed if item.name == name), None)
        )
        if found is not None:
            found.claimed = True
        return found

    def _call_finished(self, event: ToolCallFinished, out: list[dict[str, Any]]) -> None:
        self._outcome(event.result, out)

    def _outcome(self, result: ToolResult, out: list[dict[str, Any]]) -> None:
        if result.call_id in self.settled or result.call_id in self.hidden:
            return  # a resumed run repeats the results its step had before the pause
        self.settled.add(result.call_id)
        ui_id = self.ui_ids.get(result.call_id, result.call_id)
        if not result.is_error:
            out.append(
                {"type": "tool-output-available", "toolCallId": ui_id, "output": result.content}
            )
        elif result.content.startswith(DENIED_PREFIX) and (
            result.call_id in self.asked or self.reentered
        ):
            out.append({"type": "tool-output-denied", "toolCallId": ui_id})
        else:
            text = masked(result.content)
            out.append({"type": "tool-output-error", "toolCallId": ui_id, "errorText": text})

    def _discarded(self, event: ToolResultDiscarded, out: list[dict[str, Any]]) -> None:
        ui_id = self.ui_ids.get(event.result.call_id, event.result.call_id)
        self.settled.add(event.result.call_id)
        text = masked(f"{event.error.code}: {event.error.message}")
        out.append({"type": "tool-output-error", "toolCallId": ui_id, "errorText": text})

    def _void_attempt(
        self, event: ModelRetrying | ModelSwitched, out: list[dict[str, Any]]
    ) -> None:
        """The failed attempt's pieces are void: `reset-step` removes them from the message."""
        self.text = self.reasoning = None
        self.by_index = {}
        self.streamed = [item for item in self.streamed if item.claimed]
        if not self.reentered:
            out.append({"type": "reset-step"})

    def _step_finished(self, event: StepFinished, out: list[dict[str, Any]]) -> None:
        self._close_parts(out)
        out.append({"type": "finish-step"})

    def _paused(self, event: RunPaused, out: list[dict[str, Any]]) -> None:
        self._close_parts(out)
        for pending in event.pending:
            self._ask(pending, out)

    def _ask(self, pending: PendingCall, out: list[dict[str, Any]]) -> None:
        """A held call's input, then (held for approval) its approval request; an external
        call stays `input-available`, the client's to run."""
        arguments = orjson.dumps(pending.arguments).decode()
        self._show_input(ToolCall(pending.tool, arguments, pending.call_id), out)
        if pending.kind is not HoldKind.APPROVAL or pending.call_id in self.asked:
            return
        self.asked.add(pending.call_id)
        out.append(
            {
                "type": "tool-approval-request",
                "approvalId": pending.call_id,
                "toolCallId": self.ui_ids.get(pending.call_id, pending.call_id),
                "reason": pending.reason,
            }
        )

    def _failed(self, event: RunFailed, out: list[dict[str, Any]]) -> None:
        self._close_parts(out)
        error = event.error
        out.append({"type": "error", "errorText": masked(f"{error.code}: {error.message}")})

    def _finished(self, event: RunFinished, out: list[dict[str, Any]]) -> None:
        self._close_parts(out)
        self.started = False
        out.append(finish_chunk(event.result))

    def _part_id(self, kind: str) -> str:
        """A text or reasoning part's id: unique in the message, the same on every replay."""
        self.parts += 1
        return f"{self.message_id}-{self.last_step}-{kind}-{self.parts}"

    def _close_parts(self, out: list[dict[str, Any]]) -> None:
        if self.text is not None:
            self._close_text(out)
        if self.reasoning is not None:
            self._close_reasoning(out)

    def _close_text(self, out: list[dict[str, Any]]) -> None:
        out.append({"type": "text-end", "id": self.text})
        self.text = None

    def _close_reasoning(self, out: list[dict[str, Any]]) -> None:
        out.append({"type": "reasoning-end", "id": self.reasoning})
        self.reasoning = None


def finish_chunk(result: RunResult[Any]) -> dict[str, Any]:
    """`finish` with the AI SDK's finish reason and, as message metadata, the run's id, why it
    stopped and its usage (what a page shows under the answer), and a structured answer (a
    loop `with_output`) as `output`, as JSON."""
    metadata: dict[str, Any] = {
        "runId": result.run_id,
        "stopReason": result.stop_reason.value,
        "usage": usage_json(result.usage),
    }
    output = result.output
    if output is not None and not isinstance(output, str):
        metadata["output"] = structured_json(output)
    reason = FINISH_REASONS.get(result.stop_reason, "other")
    return {"type": "finish", "finishReason": reason, "messageMetadata": metadata}


def structured_json(output: object) -> Any:
    """A structured answer as a JSON value (attrs classes, dataclasses, enums as the tools
    write them); its repr when it has no JSON form."""
    try:
        return orjson.loads(orjson.dumps(output, default=jsonable))
    except TypeError:
        return repr(output)


def frames(chunks: Iterable[dict[str, Any]], event_id: str | None) -> bytes:
    """Each chunk as one `data:` frame; the last carries `id: event_id` when given."""
    encoded = [b"data: " + orjson.dumps(chunk) + b"\n\n" for chunk in chunks]
    if event_id is not None and encoded:
        encoded[-1] = b"id: " + event_id.encode() + b"\n" + encoded[-1]
    return b"".join(encoded)

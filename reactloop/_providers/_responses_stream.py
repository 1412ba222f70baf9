"""A streamed OpenAI Responses answer: its events accumulated into one response.

Deltas go to the sink as they come (output text, function-call arguments, reasoning summary and
reasoning text); the response is the final response object of `response.completed` /
`response.incomplete`, each of its items replaced by the same item of `response.output_item.done`
when that came: the API says to send back the `encrypted_content` of the finished item (the one in
the final object differs from it on the wire). A stream that ends before either of those was
cut and raises `ProviderUnavailableError`; `response.failed` and `error` raise their typed error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from reactloop._core import DeltaSink, JsonObject, ReasoningDelta, TextDelta, ToolCallDelta
from reactloop._errors import ProviderUnavailableError
from reactloop._providers._http import parse_json
from reactloop._providers._http_errors import error_detail, stream_error
from reactloop._providers._sse import SseEvent
from reactloop._providers._wire import count, items, obj, text

FINAL_EVENTS = frozenset({"response.completed", "response.incomplete"})
REASONING_DELTAS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)


class ResponsesStream:
    """Accumulates Responses stream events, forwarding deltas; `final` is the finished response
    object (its `output` filled from the finished items when the server left it empty)."""

    def __init__(self, provider: str, on_delta: DeltaSink) -> None:
        self.provider = provider
        self.on_delta = on_delta
        self.final: JsonObject | None = None
        self.started: JsonObject = {}
        self.done_items: dict[int, JsonObject] = {}
        self.calls: dict[int, int] = {}  # output_index -> the call's position among calls
        self._handlers: dict[str, Callable[[JsonObject], Awaitable[None]]] = {
            "response.created": self._created,
            "response.output_item.added": self._added,
            "response.output_item.done": self._item_done,
            "response.output_text.delta": self._text,
            "response.function_call_arguments.delta": self._arguments,
            "response.failed": self._failed,
            "error": self._error,
        }

    async def handle(self, event: SseEvent) -> bool:
        """Take one event; True once the response is complete (or incomplete)."""
        data = parse_json(self.provider, event.data.encode())
        kind = text(data, "type") or event.event
        if kind in FINAL_EVENTS:
            self.final = dict(obj(data, "response"))
            return True
        if kind in REASONING_DELTAS:
            piece = text(data, "delta") or ""
            if piece:
                await self.on_delta(ReasoningDelta(piece))
            return False
        handler = self._handlers.get(kind)
        if handler is not None:
            await handler(data)
        return False

    async def _created(self, data: JsonObject) -> None:
        self.started = obj(data, "response")

    async def _added(self, data: JsonObject) -> None:
        item, index = obj(data, "item"), count(data, "output_index")
        if text(item, "type") != "function_call" or index is None:
            return
        position = self.calls.setdefault(index, len(self.calls))
        call_id, name = text(item, "call_id"), text(item, "name")
        await self.on_delta(ToolCallDelta(position, "", call_id, name))
        initial = text(item, "arguments") or ""
        if initial:
            await self.on_delta(ToolCallDelta(position, initial))

    async def _item_done(self, data: JsonObject) -> None:
        index = count(data, "output_index")
        if index is not None:
            self.done_items[index] = obj(data, "item")

    async def _text(self, data: JsonObject) -> None:
        piece = text(data, "delta") or ""
        if piece:
            await self.on_delta(TextDelta(piece))

    async def _arguments(self, data: JsonObject) -> None:
        index = count(data, "output_index")
        piece = text(data, "delta") or ""
        if index is None or not piece:
            return
        position = self.calls.setdefault(index, len(self.calls))
        await self.on_delta(ToolCallDelta(position, piece))

    async def _failed(self, data: JsonObject) -> None:
        response = obj(data, "response")
        raise stream_error(self.provider, error_detail(response.get("error") or data), None)

    async def _error(self, data: JsonObject) -> None:
        raise stream_error(self.provider, error_detail(data), None)

    def response(self) -> JsonObject:
        """The finished response object; raises if the stream was cut before it came."""
        if self.final is None:
            raise ProviderUnavailableError(
                f"{self.provider} stream ended before the response was complete"
                " (no response.completed or response.incomplete event): the connection was cut",
                provider=self.provider,
            )
        output = list(items(self.final, "output"))
        for index in sorted(self.done_items):  # the finished items win (see the module doc)
            if index < len(output):
                output[index] = self.done_items[index]
            else:
                output.append(self.done_items[index])
        self.final["output"] = output
        for key in ("id", "model"):
            if text(self.final, key) is None and text(self.started, key) is not None:
                self.final[key] = self.started[key]
        return self.final

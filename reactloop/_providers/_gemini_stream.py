"""Gemini's `streamGenerateContent?alt=sse` read back: each event is a partial
`GenerateContentResponse`; text and thoughts arrive in pieces (joined, sent on as `TextDelta`s and
`ReasoningDelta`s), a `functionCall` whole in one chunk (one `ToolCallDelta`), a thought
signature on the part that carries it or on a later chunk's empty text part; the last chunk's
`usageMetadata` is the answer's usage.

The stream has no end event: the answer is complete at the chunk that carries a `finishReason`
(the last one Gemini sends, with the final usage); a stream cut before it is an error.
"""

from __future__ import annotations

from reactloop._core import (
    AssistantMessage,
    DeltaSink,
    FinishReason,
    JsonObject,
    ModelResponse,
    Usage,
)
from reactloop._errors import ProviderUnavailableError
from reactloop._providers._gemini_decode import (
    PartsReader,
    decode_finish,
    decode_usage,
    gemini_error,
    prompt_blocked,
)
from reactloop._providers._http import parse_json
from reactloop._providers._sse import SseEvent
from reactloop._providers._wire import items, obj, text


class GeminiStream:
    """Accumulates streamed `GenerateContentResponse` chunks into one response, forwarding
    deltas; `handle` is the `EventHandler` `HttpChannel.post_stream` calls per event."""

    def __init__(self, provider: str, on_delta: DeltaSink, model: str) -> None:
        self.provider = provider
        self.on_delta = on_delta
        self.reader = PartsReader(provider, model)
        self.candidate: JsonObject = {}
        self.finish: str | None = None
        self.usage = Usage()
        self.model: str | None = None
        self.id: str | None = None

    async def handle(self, event: SseEvent) -> bool:
        """Take one event; True once a chunk carried the finish reason."""
        if not event.data.strip():
            return False
        chunk = parse_json(self.provider, event.data.encode())
        if "error" in chunk and "candidates" not in chunk:
            raise gemini_error(self.provider, chunk)
        self.model = text(chunk, "modelVersion") or self.model
        self.id = text(chunk, "responseId") or self.id
        if isinstance(chunk.get("usageMetadata"), dict):
            self.usage = decode_usage(chunk["usageMetadata"])
        candidates = [c for c in items(chunk, "candidates") if isinstance(c, dict)]
        if not candidates:
            blocked = prompt_blocked(self.provider, chunk)
            if blocked is not None:
                raise blocked
            return False
        await self._candidate(candidates[0])
        return self.finish is not None

    async def _candidate(self, candidate: JsonObject) -> None:
        for part in items(obj(candidate, "content"), "parts"):
            delta = self.reader.add(part)
            if delta is not None:
                await self.on_delta(delta)
        self.candidate = {**self.candidate, **candidate}
        self.finish = text(candidate, "finishReason") or self.finish

    def response(self) -> ModelResponse:
        """The assembled response; raises if the stream was cut before the finish reason."""
        if self.finish is None:
            raise ProviderUnavailableError(
                f"{self.provider} stream ended before the response was complete"
                " (no chunk carried a finishReason): the connection was cut",
                provider=self.provider,
            )
        parts = self.reader.parts()
        finish: FinishReason = decode_finish(self.provider, self.candidate, self.finish, parts)
        message = AssistantMessage(parts=parts)
        return ModelResponse(message, self.usage, finish, self.model, self.id)

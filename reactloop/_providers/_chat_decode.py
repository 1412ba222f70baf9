"""Reading Chat Completions answers: a whole `chat.completion` (`decode_completion`) and a stream
of `chat.completion.chunk` events (`ChatStream`), as neutral responses.

Only choice 0 is read (reactloop never asks for `n > 1`; extra choices a server sends are
ignored). A stream is complete at `data: [DONE]` or once choice 0 reported its finish reason; a
stream that ends before either was cut and raises `ProviderUnavailableError`. An error inside a
200 answer (a body or a chunk with an `error`, OpenRouter's beside its choices) is typed like an
HTTP error.
"""

from __future__ import annotations

import orjson

from reactloop._core import (
    AssistantMessage,
    DeltaSink,
    FinishReason,
    JsonObject,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    new_call_id,
)
from reactloop._errors import InvalidResponseError, ProviderUnavailableError
from reactloop._providers._chat_reasoning import Recipient, message_parts, thought_signature
from reactloop._providers._hosts import HostReading, OpenAICompatibleHost
from reactloop._providers._http import parse_json
from reactloop._providers._http_errors import error_detail, stream_error
from reactloop._providers._sse import SseEvent
from reactloop._providers._wire import CallParts, assemble_calls, count, items, obj, text

_FINISH = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def decode_usage(usage: object) -> Usage:
    """Usage as reported: `prompt_tokens` is the whole input (cache reads and writes included),
    `completion_tokens` the whole output (reasoning included); the details say how much of each
    (DeepSeek reports its cache reads as `prompt_cache_hit_tokens`)."""
    prompt = obj(usage, "prompt_tokens_details")
    completion = obj(usage, "completion_tokens_details")
    written = count(prompt, "cache_write_tokens")
    if written is None:
        written = count(usage, "cache_write_tokens")
    read = count(prompt, "cached_tokens")
    if read is None:
        read = count(usage, "prompt_cache_hit_tokens")
    return Usage(
        input_tokens=count(usage, "prompt_tokens") or 0,
        output_tokens=count(usage, "completion_tokens") or 0,
        cache_read_tokens=read or 0,
        cache_write_tokens=written or 0,
        reasoning_tokens=count(completion, "reasoning_tokens") or 0,
    )


def decode_finish(reason: object, refusal: str | None, has_calls: bool) -> FinishReason:
    """The neutral finish reason; a refusal that merely `stop`ped is reported as REFUSAL, and
    calls that merely `stop`ped as TOOL_CALLS (OpenAI does so for a forced tool, Gemini's
    compatible endpoint when streaming: the answer asks for its calls either way, as on the
    other providers)."""
    if not isinstance(reason, str) or (reason == "stop" and has_calls):
        finish = FinishReason.TOOL_CALLS if has_calls else FinishReason.STOP
    else:
        finish = _FINISH.get(reason, FinishReason.OTHER)
    if refusal is not None and finish is FinishReason.STOP:
        return FinishReason.REFUSAL
    return finish


def _decode_call(provider: str, call: object) -> ToolCall:
    function = obj(call, "function")
    name = text(function, "name")
    if not name:
        raise InvalidResponseError(f"{provider} sent a tool call without a name", provider=provider)
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = orjson.dumps(arguments or {}).decode()
    return ToolCall(name, arguments or "{}", text(call, "id") or new_call_id())


def _first_choice(provider: str, body: JsonObject) -> JsonObject:
    choices = [choice for choice in items(body, "choices") if isinstance(choice, dict)]
    if not choices:
        raise InvalidResponseError(f"{provider} response has no choices", provider=provider)
    return next((choice for choice in choices if choice.get("index") == 0), choices[0])


def decode_completion(provider: str, body: JsonObject, model: str | None = None) -> ModelResponse:
    """A whole `chat.completion` as a neutral response (`model`: the configured model, which
    its reasoning parts name)."""
    if "error" in body and "choices" not in body:
        raise stream_error(provider, error_detail(body), None)
    choice = _first_choice(provider, body)
    if choice.get("error") and choice.get("finish_reason") == "error":  # OpenRouter, in a 200
        raise stream_error(provider, error_detail(choice), None)
    message = obj(choice, "message")
    calls = [
        (_decode_call(provider, call), thought_signature(call))
        for call in items(message, "tool_calls")
    ]
    refusal = text(message, "refusal")
    finish = decode_finish(choice.get("finish_reason"), refusal, bool(calls))
    by = Recipient(provider, model or "")
    reasoning, content = reasoning_of(message) or "", text(message, "content") or ""
    parts = message_parts(reasoning, content, calls, by)
    assistant = AssistantMessage(parts=parts, refusal=refusal)
    usage = decode_usage(body.get("usage"))
    return ModelResponse(assistant, usage, finish, text(body, "model"), text(body, "id"))


def reasoning_of(value: JsonObject) -> str | None:
    """The reasoning text of a message or delta: DeepSeek's `reasoning_content`, else the
    `reasoning` that OpenRouter, vLLM, Ollama and Groq send."""
    return text(value, "reasoning_content") or text(value, "reasoning")


class ChatStream:
    """Accumulates `chat.completion.chunk` events into one response, forwarding deltas."""

    def __init__(
        self,
        provider: str,
        on_delta: DeltaSink,
        model: str | None = None,
        host: OpenAICompatibleHost | None = None,
    ) -> None:
        self.provider = provider
        self.host = None if host is None else HostReading(host)
        self.on_delta = on_delta
        self.configured = model  # the model the reasoning parts name
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.signatures: dict[int, str] = {}
        self.refusal: list[str] = []
        self.calls: dict[int, CallParts] = {}
        self.finish: str | None = None
        self.usage = Usage()
        self.model: str | None = None
        self.id: str | None = None
        self.done = False

    async def handle(self, event: SseEvent) -> bool:
        """Take one event; True at `[DONE]`."""
        if event.data.strip() == "[DONE]":
            self.done = True
            return True
        chunk = parse_json(self.provider, event.data.encode())
        if chunk.get("error"):  # OpenRouter's mid-stream error also has choices
            raise stream_error(self.provider, error_detail(chunk), None)
        self.model = text(chunk, "model") or self.model
        self.id = text(chunk, "id") or self.id
        if isinstance(chunk.get("usage"), dict):
            self.usage = decode_usage(chunk["usage"])
        if self.host is not None and (extra := self.host.chunk(chunk)) is not None:
            self.usage = decode_usage(extra)
        for choice in items(chunk, "choices"):
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                await self._choice(choice)
        return False

    async def _choice(self, choice: JsonObject) -> None:
        delta = obj(choice, "delta")
        thought = reasoning_of(delta)
        if thought:
            self.reasoning.append(thought)
            await self.on_delta(ReasoningDelta(thought))
        content = text(delta, "content")
        if content:
            self.text.append(content)
            await self.on_delta(TextDelta(content))
        refusal = text(delta, "refusal")
        if refusal:
            self.refusal.append(refusal)
        for item in items(delta, "tool_calls"):
            if isinstance(item, dict):
                await self._call_delta(item)
        if isinstance(choice.get("finish_reason"), str):
            self.finish = choice["finish_reason"]

    def _index(self, item: JsonObject) -> int:
        index = count(item, "index")
        if index is not None:
            return index
        known = next((i for i, c in self.calls.items() if c.id and c.id == item.get("id")), None)
        if known is not None:
            return known
        fresh = "id" in item or not self.calls
        return len(self.calls) if fresh else max(self.calls)

    async def _call_delta(self, item: JsonObject) -> None:
        index = self._index(item)
        parts = self.calls.setdefault(index, CallParts())
        function = obj(item, "function")
        call_id, name = text(item, "id"), text(function, "name")
        parts.id = parts.id or call_id
        parts.name = parts.name or name
        signature = thought_signature(item)
        if signature is not None:
            self.signatures[index] = signature
        fragment = text(function, "arguments") or ""
        if fragment:
            parts.parts.append(fragment)
        if fragment or call_id or name:
            await self.on_delta(ToolCallDelta(index, fragment, call_id, name))

    def response(self) -> ModelResponse:
        """The assembled response; raises if the stream was cut before it was complete."""
        if not (self.done or self.finish is not None):
            raise ProviderUnavailableError(
                f"{self.provider} stream ended before the response was complete"
                " (no finish_reason and no [DONE]): the connection was cut",
                provider=self.provider,
            )
        refusal = "".join(self.refusal) or None
        finish = decode_finish(self.finish, refusal, bool(self.calls))
        calls = []
        for index in sorted(self.calls):
            assembled = assemble_calls(self.provider, [self.calls[index]], finish)
            calls += [(call, self.signatures.get(index)) for call in assembled]
        by = Recipient(self.provider, self.configured or "")
        parts = message_parts("".join(self.reasoning), "".join(self.text), calls, by)
        message = AssistantMessage(parts=parts, refusal=refusal)
        response = ModelResponse(message, self.usage, finish, self.model, self.id)
        return response if self.host is None else self.host.finish(response, by.model)

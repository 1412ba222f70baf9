"""The Anthropic Messages responses read back: a whole `message`, a stream of events, and a
`pause_turn` continued (the paused content sent back as it came, the parts joined).

Content blocks become the message's parts in their order: `text` a `TextPart`, `thinking` a
`ReasoningPart` with its signature, `redacted_thinking` one with its data, `tool_use` a
`ToolCall`; the reasoning parts name the provider and the configured model (ADR-0026).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable
from typing import ClassVar

import orjson
from attrs import define, field

from reactloop._core import (
    AssistantMessage,
    AssistantPart,
    DeltaSink,
    FinishReason,
    JsonObject,
    ModelResponse,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    Usage,
    new_call_id,
)
from reactloop._errors import InvalidResponseError, ProviderUnavailableError
from reactloop._providers._http import parse_json
from reactloop._providers._http_errors import error_detail, stream_error
from reactloop._providers._sse import SseEvent
from reactloop._providers._wire import (
    CallParts,
    assemble_calls,
    count,
    obj,
    required_list,
    text,
)

MAX_CONTINUATIONS = 5
"""How many times a `pause_turn` is continued within one call before the paused response is
returned as it is (finish reason OTHER)."""

PAUSE_TURN = "pause_turn"

_STOP = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "refusal": FinishReason.REFUSAL,
}


class Role(enum.StrEnum):
    """The roles of a Messages turn (`system`: mid-conversation, on models that take it)."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


def decode_usage(usage: object) -> Usage:
    """Usage as reported: Anthropic's `input_tokens` leaves out cache reads and writes, so the
    total input adds them back; thinking tokens (when reported) are part of `output_tokens`."""
    read = count(usage, "cache_read_input_tokens") or 0
    written = count(usage, "cache_creation_input_tokens") or 0
    return Usage(
        input_tokens=(count(usage, "input_tokens") or 0) + read + written,
        output_tokens=count(usage, "output_tokens") or 0,
        cache_read_tokens=read,
        cache_write_tokens=written,
        reasoning_tokens=count(obj(usage, "output_tokens_details"), "thinking_tokens") or 0,
        cache_write_1h_tokens=count(obj(usage, "cache_creation"), "ephemeral_1h_input_tokens") or 0,
    )


def merge_usage(reported: JsonObject, usage: object) -> None:
    """Fold one stream event's `usage` into what the stream reported so far (later figures win;
    a field an event leaves out keeps its earlier value)."""
    if isinstance(usage, dict):
        reported.update(usage)


def decode_stop(reason: str | None) -> FinishReason:
    """The neutral finish reason of a `stop_reason`."""
    return FinishReason.OTHER if reason is None else _STOP.get(reason, FinishReason.OTHER)


def _refusal(finish: FinishReason, details: object, answer: str) -> str | None:
    if finish is not FinishReason.REFUSAL:
        return None
    return text(details, "explanation") or answer


def kept(parts: Iterable[AssistantPart | None]) -> tuple[AssistantPart, ...]:
    """The parts in order, without the empty texts (a text block that streamed nothing) and the
    blocks of no part. Each text block stays a part of its own, so that the turn goes back in
    the blocks it came in."""
    return tuple(
        part
        for part in parts
        if part is not None and not (isinstance(part, TextPart) and not part.text)
    )


def _decode_tool_use(provider: str, block: JsonObject) -> ToolCall:
    name = text(block, "name")
    if not name:
        raise InvalidResponseError(
            f"{provider} sent a tool_use block without a name", provider=provider
        )
    arguments = orjson.dumps(block.get("input") or {}).decode()
    return ToolCall(name, arguments, text(block, "id") or new_call_id())


def _decode_block(
    provider: str, model: str | None, block: object
) -> TextPart | ReasoningPart | ToolCall | None:
    """One content block as a part; a block of another kind (server tools) as None."""
    if not isinstance(block, dict):
        return None
    kind = text(block, "type")
    if kind == "text":
        return TextPart(text(block, "text") or "")
    if kind == "thinking":
        thought, signature = text(block, "thinking") or "", text(block, "signature")
        return ReasoningPart(thought, signature=signature, provider=provider, model=model)
    if kind == "redacted_thinking":
        return ReasoningPart(redacted=text(block, "data") or "", provider=provider, model=model)
    if kind == "tool_use":
        return _decode_tool_use(provider, block)
    return None


def decode_message(provider: str, body: JsonObject, model: str | None = None) -> ModelResponse:
    """A whole `message` as a neutral response (`model`: the configured model, which its
    reasoning parts name)."""
    if body.get("type") == "error":
        raise stream_error(provider, error_detail(body), None)
    content = required_list(provider, body, "content", "Messages `message`")
    decoded = (_decode_block(provider, model, block) for block in content)
    parts = kept(decoded)
    finish = decode_stop(text(body, "stop_reason"))
    answer = "".join(part.text for part in parts if isinstance(part, TextPart))
    refusal = _refusal(finish, body.get("stop_details"), answer)
    message = AssistantMessage(parts=parts, refusal=refusal)
    usage = decode_usage(body.get("usage"))
    return ModelResponse(message, usage, finish, text(body, "model"), text(body, "id"))


@define
class _Block:
    """One streamed content block as it grows: its kind, its text (or thinking) pieces, its
    signature or redacted data, and for a tool use its call's index in `MessageStream.calls`."""

    kind: str
    pieces: list[str] = field(factory=list)
    signature: str | None = None
    data: str | None = None
    call: int | None = None


class MessageStream:
    """Accumulates Messages stream events into one response, forwarding deltas."""

    def __init__(
        self, provider: str, on_delta: DeltaSink, first_call: int = 0, model: str | None = None
    ) -> None:
        self.provider = provider
        self.on_delta = on_delta
        self.first_call = first_call  # calls streamed before, in earlier parts of a paused turn
        self.configured = model  # the model the reasoning parts name
        self.calls: list[CallParts] = []
        self.raw = RawBlocks()
        self.blocks: dict[int, _Block] = {}
        self.reported: JsonObject = {}
        self.model: str | None = None
        self.id: str | None = None
        self.stop_reason: str | None = None
        self.stop_details: object = None
        self.stopped = False
        self._handlers: dict[str, Callable[[JsonObject], Awaitable[None]]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "message_delta": self._message_delta,
            "error": self._error,
        }

    async def handle(self, event: SseEvent) -> bool:
        """Take one event; True at `message_stop`. Unknown events and `ping` are ignored."""
        data = parse_json(self.provider, event.data.encode())
        kind = text(data, "type") or event.event
        if kind == "message_stop":
            self.stopped = True
            return True
        handler = self._handlers.get(kind)
        if handler is not None:
            await handler(data)
        return False

    async def _error(self, data: JsonObject) -> None:
        raise stream_error(self.provider, error_detail(data), None)

    async def _message_start(self, data: JsonObject) -> None:
        message = obj(data, "message")
        self.model = text(message, "model")
        self.id = text(message, "id")
        merge_usage(self.reported, message.get("usage"))

    async def _grow(self, block: _Block, piece: str) -> None:
        """A piece of text or thinking: kept, and sent on as a delta."""
        if not piece:
            return
        block.pieces.append(piece)
        await self.on_delta(TextDelta(piece) if block.kind == "text" else ReasoningDelta(piece))

    async def _block_start(self, data: JsonObject) -> None:
        index, content = count(data, "index"), obj(data, "content_block")
        kind = text(content, "type")
        if index is None or kind is None:
            return
        self.raw.start(index, content)
        block = self.blocks[index] = _Block(kind)
        if kind == "text":
            await self._grow(block, text(content, "text") or "")
        elif kind == "thinking":
            block.signature = text(content, "signature")
            await self._grow(block, text(content, "thinking") or "")
        elif kind == "redacted_thinking":
            block.data = text(content, "data") or ""
        elif kind == "tool_use":
            await self._tool_start(block, content)

    async def _tool_start(self, block: _Block, content: JsonObject) -> None:
        block.call = len(self.calls)
        call_id, name = text(content, "id"), text(content, "name")
        initial = content.get("input")
        seed = orjson.dumps(initial).decode() if initial else ""
        self.calls.append(CallParts(call_id, name, initial=seed))
        await self.on_delta(ToolCallDelta(self.first_call + block.call, "", call_id, name))

    async def _block_delta(self, data: JsonObject) -> None:
        index, delta = count(data, "index"), obj(data, "delta")
        if index is None:
            return
        self.raw.delta(index, delta)
        block = self.blocks.get(index)
        if block is None:
            return
        kind = text(delta, "type")
        if kind == "text_delta" and block.kind == "text":
            await self._grow(block, text(delta, "text") or "")
        elif kind == "thinking_delta" and block.kind == "thinking":
            await self._grow(block, text(delta, "thinking") or "")
        elif kind == "signature_delta" and block.kind == "thinking":
            block.signature = text(delta, "signature") or ""
        elif kind == "input_json_delta" and block.call is not None:
            fragment = text(delta, "partial_json") or ""
            if fragment:
                self.calls[block.call].parts.append(fragment)
                await self.on_delta(ToolCallDelta(self.first_call + block.call, fragment))

    async def _message_delta(self, data: JsonObject) -> None:
        delta = obj(data, "delta")
        self.stop_reason = text(delta, "stop_reason") or self.stop_reason
        self.stop_details = delta.get("stop_details", self.stop_details)
        merge_usage(self.reported, data.get("usage"))

    def _part(
        self, block: _Block, finish: FinishReason
    ) -> TextPart | ReasoningPart | ToolCall | None:
        said = "".join(block.pieces)
        provider, model = self.provider, self.configured
        if block.kind == "text":
            return TextPart(said)
        if block.kind == "thinking":
            return ReasoningPart(said, signature=block.signature, provider=provider, model=model)
        if block.kind == "redacted_thinking":
            return ReasoningPart(redacted=block.data, provider=provider, model=model)
        if block.call is not None:
            assembled = assemble_calls(self.provider, [self.calls[block.call]], finish)
            return assembled[0] if assembled else None
        return None

    def response(self) -> ModelResponse:
        """The assembled response; raises if the stream was cut before the stop reason came."""
        if self.stop_reason is None and not self.stopped:
            raise ProviderUnavailableError(
                f"{self.provider} stream ended before the response was complete"
                " (no stop_reason in message_delta): the connection was cut",
                provider=self.provider,
            )
        finish = decode_stop(self.stop_reason)
        made = (self._part(self.blocks[index], finish) for index in sorted(self.blocks))
        parts = kept(made)
        answer = "".join(part.text for part in parts if isinstance(part, TextPart))
        refusal = _refusal(finish, self.stop_details, answer)
        message = AssistantMessage(parts=parts, refusal=refusal)
        return ModelResponse(message, decode_usage(self.reported), finish, self.model, self.id)


class RawBlocks:
    """A streamed message's content blocks rebuilt as the API would have sent them whole, so a
    paused turn goes back as it is (server tool blocks, thinking and signatures included)."""

    _APPEND: ClassVar[dict[str, str]] = {"text_delta": "text", "thinking_delta": "thinking"}

    def __init__(self) -> None:
        self.blocks: dict[int, JsonObject] = {}
        self.json: dict[int, list[str]] = {}

    def start(self, index: int, block: JsonObject) -> None:
        self.blocks[index] = dict(block)

    def delta(self, index: int, delta: JsonObject) -> None:
        block = self.blocks.get(index)
        if block is None:
            return
        kind = text(delta, "type") or ""
        if kind in self._APPEND:
            key = self._APPEND[kind]
            block[key] = (text(block, key) or "") + (text(delta, key) or "")
        elif kind == "input_json_delta":
            self.json.setdefault(index, []).append(text(delta, "partial_json") or "")
        elif kind == "signature_delta":
            block["signature"] = text(delta, "signature") or ""

    def content(self) -> list[JsonObject]:
        """The blocks in order, each tool input parsed from its streamed JSON."""
        for index, parts in self.json.items():
            if "".join(parts).strip():
                self.blocks[index]["input"] = orjson.loads("".join(parts))
        return [self.blocks[index] for index in sorted(self.blocks)]


def continued(body: JsonObject, content: list[JsonObject]) -> JsonObject:
    """The body that continues a paused turn: the paused content sent back as it came, as (the
    end of) the last assistant turn."""
    turns = list(body["messages"])
    if turns and turns[-1]["role"] == Role.ASSISTANT.value:
        turns[-1] = {**turns[-1], "content": [*turns[-1]["content"], *content]}
    else:
        turns.append({"role": Role.ASSISTANT.value, "content": content})
    return {**body, "messages": turns}


def joined(parts: list[ModelResponse]) -> ModelResponse:
    """One response of a turn paused and continued: every part in order (reasoning, text and
    calls), the usage summed, the finish of the last part."""
    if len(parts) == 1:
        return parts[0]
    last = parts[-1]
    usage = Usage()
    for part in parts:
        usage = usage + part.usage
    ordered = kept(piece for part in parts for piece in part.message.parts)
    message = AssistantMessage(parts=ordered, refusal=last.message.refusal)
    return ModelResponse(message, usage, last.finish_reason, last.model, last.id)

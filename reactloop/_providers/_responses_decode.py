"""OpenAI Responses `response` objects as neutral responses: output items as ordered parts
(reasoning, text, tool calls), usage, finish reasons, and the ids of the items, which the
request side sends back beside reasoning (`_responses_wire.ItemMemory`)."""

from __future__ import annotations

from attrs import evolve, frozen

from reactloop._core import (
    AssistantPart,
    FinishReason,
    JsonObject,
    ReasoningPart,
    TextPart,
    ToolCall,
    Usage,
    new_call_id,
)
from reactloop._errors import InvalidResponseError
from reactloop._providers._http_errors import error_detail, stream_error
from reactloop._providers._wire import count, is_json, items, obj, text

_INCOMPLETE = {
    "max_output_tokens": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def item_key(part: TextPart | ToolCall, reasoning_id: str | None) -> tuple[str, str]:
    """What an output item's id is remembered by: a call by its call id, a message by its text
    and the id of the reasoning before it in its response (texts repeat across answers)."""
    if isinstance(part, ToolCall):
        return ("call", part.id)
    return ("message", f"{reasoning_id or ''}\x00{part.text}")


def decode_usage(usage: object) -> Usage:
    """Usage as reported: `input_tokens` is the whole input (cache reads and writes included),
    `output_tokens` the whole output (reasoning included); the details say how much of each."""
    given = obj(usage, "input_tokens_details")
    return Usage(
        input_tokens=count(usage, "input_tokens") or 0,
        output_tokens=count(usage, "output_tokens") or 0,
        cache_read_tokens=count(given, "cached_tokens") or 0,
        cache_write_tokens=count(given, "cache_write_tokens") or 0,
        reasoning_tokens=count(obj(usage, "output_tokens_details"), "reasoning_tokens") or 0,
    )


@frozen
class Decoded:
    """The parts of a response's output, its refusal, and the ids of its items."""

    parts: tuple[AssistantPart, ...]
    refusal: str | None
    item_ids: tuple[tuple[tuple[str, str], str], ...]

    @property
    def has_calls(self) -> bool:
        """True when the output asks for a tool call."""
        return any(isinstance(part, ToolCall) for part in self.parts)


def _reasoning_part(item: JsonObject, provider: str, model: str) -> ReasoningPart:
    summary = [text(s, "text") or "" for s in items(item, "summary") if isinstance(s, dict)]
    said = [text(c, "text") or "" for c in items(item, "content") if isinstance(c, dict)]
    return ReasoningPart(
        text="".join(said),
        summary=tuple(summary),
        encrypted=text(item, "encrypted_content"),
        id=text(item, "id"),
        provider=provider,
        model=model,
    )


def _call(provider: str, item: JsonObject) -> ToolCall:
    name = text(item, "name")
    if not name:
        message = f"{provider} sent a function_call item without a name"
        raise InvalidResponseError(message, provider=provider)
    call_id = text(item, "call_id") or text(item, "id") or new_call_id()
    return ToolCall(name, text(item, "arguments") or "{}", call_id)


class _Output:
    """An output list being read into parts."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider, self.model = provider, model
        self.parts: list[AssistantPart] = []
        self.refusals: list[str] = []
        self.ids: list[tuple[tuple[str, str], str]] = []
        self.reasoning_id: str | None = None

    def _remember(self, part: TextPart | ToolCall, item: JsonObject) -> None:
        item_id = text(item, "id")
        if item_id is not None:
            self.ids.append((item_key(part, self.reasoning_id), item_id))
            self._pair(item_id)

    def _pair(self, item_id: str) -> None:
        """Note on the reasoning parts just before this item the item's id, which the API pairs
        them by, so the pair goes back as it came from a journal too (`followed_by`)."""
        at = len(self.parts) - 1  # the item's own part
        while at > 0 and isinstance(self.parts[at - 1], ReasoningPart):
            at -= 1
            reasoning = self.parts[at]
            assert isinstance(reasoning, ReasoningPart)
            self.parts[at] = evolve(reasoning, followed_by=item_id)

    def message(self, item: JsonObject) -> None:
        said: list[str] = []
        for content in items(item, "content"):
            kind = text(content, "type")
            if kind == "output_text":
                said.append(text(content, "text") or "")
            elif kind == "refusal":
                self.refusals.append(text(content, "refusal") or "")
        if said:
            part = TextPart("".join(said))
            self.parts.append(part)
            self._remember(part, item)

    def read(self, item: object) -> None:
        if not isinstance(item, dict):
            return
        kind = text(item, "type")
        if kind == "reasoning":
            part = _reasoning_part(item, self.provider, self.model)
            self.reasoning_id = part.id
            self.parts.append(part)
        elif kind == "message":
            self.message(item)
        elif kind == "function_call":
            call = _call(self.provider, item)
            self.parts.append(call)
            self._remember(call, item)


def decode_output(provider: str, model: str, output: list[object]) -> Decoded:
    """Output items as ordered parts: reasoning, text (one part per message item), tool calls.
    Items of other types (hosted tools) are skipped."""
    reader = _Output(provider, model)
    for item in output:
        reader.read(item)
    refusal = "".join(reader.refusals) or None
    return Decoded(tuple(reader.parts), refusal, tuple(reader.ids))


def decode_finish(provider: str, body: JsonObject, decoded: Decoded) -> FinishReason:
    """The neutral finish reason of a response; a failed response raises its typed error."""
    status = text(body, "status")
    if status == "failed":
        raise stream_error(provider, error_detail(body.get("error") or body), None)
    if status == "incomplete":
        reason = text(obj(body, "incomplete_details"), "reason") or ""
        return _INCOMPLETE.get(reason, FinishReason.OTHER)
    if decoded.has_calls:
        return FinishReason.TOOL_CALLS
    return FinishReason.REFUSAL if decoded.refusal is not None else FinishReason.STOP


def finished_parts(decoded: Decoded, finish: FinishReason) -> tuple[AssistantPart, ...]:
    """The parts, less a tool call cut off by the token limit (arguments not valid JSON)."""
    if finish is not FinishReason.LENGTH:
        return decoded.parts
    return tuple(p for p in decoded.parts if not isinstance(p, ToolCall) or is_json(p.arguments))

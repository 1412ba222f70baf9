"""Gemini `GenerateContentResponse`s read back: the first candidate's parts as ordered neutral
parts, usage, finish reasons, content-filter blocks and errors sent inside a 200 answer.

Thought signatures (ai.google.dev "Thought signatures"): a part carrying `thoughtSignature`
becomes a `ReasoningPart(signature=...)` placed right before the part (text or call) that carried
it, and a `thought: true` part a `ReasoningPart` with its text (and its own signature, if any);
the signature's text is kept exactly as received, since it must go back byte for byte.

A block on the answer (`SAFETY`, `RECITATION`, ...) follows what Chat Completions does with
`content_filter`: an answer that said something before the block is a response finished with
`CONTENT_FILTER`; an answer blocked before saying anything raises `ContentFilteredError`
(`where="answer"`), as a prompt blocked outright (`promptFeedback.blockReason`) does
(`where="prompt"`).
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson
from attrs import define, field

from reactloop._core import (
    AssistantMessage,
    AssistantPart,
    FinishReason,
    JsonObject,
    ModelDelta,
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
from reactloop._errors import InvalidResponseError, ModelError
from reactloop._providers._http_errors import error_detail, stream_error
from reactloop._providers._safety import ContentFilteredError, FilterVerdict
from reactloop._providers._wire import count, items, obj, text

BLOCKED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)
"""Finish reasons that say a filter (safety, recitation, a blocklist) stopped the answer."""

MALFORMED = frozenset(
    {
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "MISSING_THOUGHT_SIGNATURE",
        "MALFORMED_RESPONSE",
    }
)
"""Finish reasons that say the model produced no usable answer (a call it could not form, a
call to no declared tool): an `InvalidResponseError` naming the reason."""

_FINISH = {"STOP": FinishReason.STOP, "MAX_TOKENS": FinishReason.LENGTH}


def decode_usage(usage: object) -> Usage:
    """`usageMetadata` as neutral usage: the input is the prompt (cached content included, also
    counted as cache reads) plus what tool use added to it; the output is the candidates' tokens
    plus the thoughts' (`thoughtsTokenCount`, also counted as reasoning), as on OpenAI where the
    output includes its reasoning."""
    thoughts = count(usage, "thoughtsTokenCount") or 0
    prompt = (count(usage, "promptTokenCount") or 0) + (
        count(usage, "toolUsePromptTokenCount") or 0
    )
    return Usage(
        input_tokens=prompt,
        output_tokens=(count(usage, "candidatesTokenCount") or 0) + thoughts,
        cache_read_tokens=count(usage, "cachedContentTokenCount") or 0,
        reasoning_tokens=thoughts,
    )


def gemini_error(provider: str, body: JsonObject) -> ModelError:
    """The typed error of an `{"error": {...}}` sent inside a 200 answer (a stream event), by
    its canonical `status` (`_http_errors.KIND_STATUS`) and its `details` reason."""
    return stream_error(provider, error_detail(body), None)


def verdicts(ratings: object) -> tuple[FilterVerdict, ...]:
    """`safetyRatings` as per-category verdicts (`blocked` says whether it blocked)."""
    return tuple(
        FilterVerdict(
            text(rating, "category") or "HARM_CATEGORY_UNSPECIFIED",
            rating.get("blocked") is True,
            text(rating, "probability") or text(rating, "severity"),
        )
        for rating in (ratings if isinstance(ratings, list) else [])
        if isinstance(rating, dict)
    )


def prompt_blocked(provider: str, body: JsonObject) -> ContentFilteredError | None:
    """The error of a prompt the filter blocked (`promptFeedback.blockReason`), else None."""
    feedback = obj(body, "promptFeedback")
    reason = text(feedback, "blockReason")
    if reason is None:
        return None
    said = text(feedback, "blockReasonMessage")
    message = f"{provider} blocked the prompt ({reason})" + (f": {said}" if said else "")
    return ContentFilteredError(
        message,
        provider=provider,
        where="prompt",
        verdicts=verdicts(feedback.get("safetyRatings")),
        reason=reason,
    )


def decode_call(provider: str, call: JsonObject) -> ToolCall:
    """A `functionCall` as a call: its `id` when Gemini gave one (it goes back as it came),
    else a fresh one (the API pairs a result with its call by position and name then)."""
    name = text(call, "name")
    if not name:
        message = f"{provider} sent a functionCall part without a name: {call!r}"
        raise InvalidResponseError(message, provider=provider)
    arguments = orjson.dumps(call.get("args") or {}).decode()
    return ToolCall(name, arguments, text(call, "id") or new_call_id())


@define
class _Entry:
    """One part as it is read (a stream grows text and thoughts across chunks)."""

    kind: str  # "text", "thought", "signature" or "call"
    pieces: list[str] = field(factory=list)
    signature: str | None = None
    call: ToolCall | None = None


class PartsReader:
    """Reads Gemini parts, whole or streamed, into ordered neutral parts: consecutive text
    (and thought) pieces join; each signature stays right before the part that carried it."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider, self.model = provider, model
        self.entries: list[_Entry] = []
        self.calls = 0

    def add(self, part: object) -> ModelDelta | None:
        """Take one part; the delta it streams (None for a part that adds no text or call).
        Parts of other kinds (inline data, code execution) are skipped."""
        if not isinstance(part, dict):
            return None
        signature = text(part, "thoughtSignature")
        call = part.get("functionCall")
        if isinstance(call, dict):
            return self._call(decode_call(self.provider, call), signature)
        said = text(part, "text")
        if said is None:
            return None
        if part.get("thought") is True:
            return self._thought(said, signature)
        return self._text(said, signature)

    def _call(self, call: ToolCall, signature: str | None) -> ModelDelta:
        if signature is not None:
            self.entries.append(_Entry("signature", signature=signature))
        self.entries.append(_Entry("call", call=call))
        self.calls += 1
        return ToolCallDelta(self.calls - 1, call.arguments, call.id, call.name)

    def _thought(self, said: str, signature: str | None) -> ModelDelta | None:
        last = self.entries[-1] if self.entries else None
        if last is not None and last.kind == "thought" and None in (last.signature, signature):
            last.pieces.append(said)  # a stream's pieces: one signature for the whole thought
            last.signature = last.signature or signature
        else:
            self.entries.append(_Entry("thought", [said], signature))
        return ReasoningDelta(said) if said else None

    def _text(self, said: str, signature: str | None) -> ModelDelta | None:
        last = self.entries[-1] if self.entries else None
        if not said:
            if signature is not None:
                self._late_signature(signature)
            return None
        if last is not None and last.kind == "text" and signature is None:
            last.pieces.append(said)
        else:
            if signature is not None:
                self.entries.append(_Entry("signature", signature=signature))
            self.entries.append(_Entry("text", [said]))
        return TextDelta(said)

    def _late_signature(self, signature: str) -> None:
        """A signature on an empty text part (a stream sends it after the text it belongs to):
        placed before that text when the text has none yet, else where it came."""
        at = len(self.entries)
        if self.entries and self.entries[-1].kind == "text":
            unsigned = at < 2 or self.entries[at - 2].kind != "signature"
            at = at - 1 if unsigned else at
        self.entries.insert(at, _Entry("signature", signature=signature))

    def parts(self) -> tuple[AssistantPart, ...]:
        """The parts read, in order."""
        return tuple(self._part(entry) for entry in self.entries)

    def _part(self, entry: _Entry) -> AssistantPart:
        by = {"provider": self.provider, "model": self.model}
        if entry.kind == "text":
            return TextPart("".join(entry.pieces))
        if entry.kind == "call" and entry.call is not None:
            return entry.call
        return ReasoningPart("".join(entry.pieces), signature=entry.signature, **by)


def _answered(parts: Iterable[AssistantPart]) -> bool:
    return any(isinstance(p, ToolCall) or (isinstance(p, TextPart) and p.text) for p in parts)


def decode_finish(
    provider: str, candidate: JsonObject, reason: str | None, parts: tuple[AssistantPart, ...]
) -> FinishReason:
    """The neutral finish reason of a candidate; a block with nothing said and a malformed
    answer raise their typed errors (see the module's docstring)."""
    if reason in BLOCKED:
        if _answered(parts):
            return FinishReason.CONTENT_FILTER
        said = text(candidate, "finishMessage")
        message = f"{provider} blocked the answer (finishReason {reason})" + (
            f": {said}" if said else ""
        )
        ratings = verdicts(candidate.get("safetyRatings"))
        raise ContentFilteredError(
            message, provider=provider, where="answer", verdicts=ratings, reason=reason
        )
    if reason in MALFORMED:
        said = text(candidate, "finishMessage") or "(no finishMessage)"
        message = f"{provider} finished the answer with finishReason {reason}: {said}"
        raise InvalidResponseError(message, provider=provider)
    finish = _FINISH.get(reason or "", FinishReason.OTHER)
    if finish is FinishReason.STOP and any(isinstance(p, ToolCall) for p in parts):
        return FinishReason.TOOL_CALLS
    return finish


def first_candidate(provider: str, body: JsonObject) -> JsonObject:
    """The first candidate of an answer; a blocked prompt or an answer with none raises."""
    candidates = [c for c in items(body, "candidates") if isinstance(c, dict)]
    if candidates:
        return next((c for c in candidates if c.get("index", 0) == 0), candidates[0])
    blocked = prompt_blocked(provider, body)
    if blocked is not None:
        raise blocked
    raise InvalidResponseError(f"{provider} response has no candidates", provider=provider)


def decode_response(provider: str, body: object, model: str) -> ModelResponse:
    """A whole `GenerateContentResponse` as a neutral response (`model`: the configured model,
    which its reasoning parts name)."""
    if not isinstance(body, dict):
        kind = type(body).__name__
        raise InvalidResponseError(
            f"{provider} sent JSON {kind}, expected a GenerateContentResponse", provider=provider
        )
    if "error" in body and "candidates" not in body:
        raise gemini_error(provider, body)
    candidate = first_candidate(provider, body)
    reader = PartsReader(provider, model)
    for part in items(obj(candidate, "content"), "parts"):
        reader.add(part)
    parts = reader.parts()
    finish = decode_finish(provider, candidate, text(candidate, "finishReason"), parts)
    usage = decode_usage(body.get("usageMetadata"))
    answer = AssistantMessage(parts=parts)
    return ModelResponse(
        answer, usage, finish, text(body, "modelVersion"), text(body, "responseId")
    )

"""Render a scripted Gemini answer (thoughts, text, function calls, thought signatures, usage) as
the native API's wire JSON (`GenerateContentResponse`) and SSE stream, for the wire server.

The shapes follow what Gemini sends (the recorded cassettes in tests/fixtures/recorded/google):
each streamed chunk is a whole `GenerateContentResponse` holding the new parts; text and
thoughts come in pieces, a `functionCall` whole in one chunk; the last chunk carries the
`finishReason` and the usage, with an empty text part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from reactloop._core._messages import ToolCall
from tests.providers.render import sse

JsonObject = dict[str, Any]
PIECE = 5
MODEL = "gemini-2.5-flash"
RESPONSE_ID = "resp-gemini-1"
USAGE: JsonObject = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def text_part(text: str, signature: str | None = None) -> JsonObject:
    """A text part (its thought signature, when it carries one)."""
    part: JsonObject = {"text": text}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def thought_part(text: str, signature: str | None = None) -> JsonObject:
    """A thought summary part (`thought: true`)."""
    return {**text_part(text, signature), "thought": True}


def call_part(call: ToolCall, signature: str | None = None, *, with_id: bool = False) -> JsonObject:
    """A `functionCall` part; Gemini sends no id unless asked (`with_id`: the call's id)."""
    function: JsonObject = {"name": call.name, "args": orjson.loads(call.arguments)}
    if with_id:
        function["id"] = call.id
    part: JsonObject = {"functionCall": function}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def answer_parts(
    text: str = "",
    calls: Sequence[ToolCall] = (),
    signatures: Mapping[str, str] | None = None,
    *,
    with_ids: bool = False,
) -> list[JsonObject]:
    """Text then calls, each call with the signature `signatures` gives its id (if any), and
    with its id when `with_ids` (Gemini sends none unless asked)."""
    given = signatures or {}
    parts = [text_part(text)] if text else []
    return parts + [call_part(c, given.get(c.id), with_id=with_ids) for c in calls]


def candidate(parts: Sequence[JsonObject], finish: str | None = "STOP", **extra: Any) -> JsonObject:
    """One candidate of the given parts (no `finishReason` key when `finish` is None)."""
    made: JsonObject = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish is not None:
        made["finishReason"] = finish
    return {**made, **extra}


def gemini_json(
    parts: Sequence[JsonObject],
    finish: str = "STOP",
    usage: JsonObject | None = None,
    **extra: Any,
) -> JsonObject:
    """A whole `GenerateContentResponse` of one candidate (`extra`: more candidate fields)."""
    return {
        "candidates": [candidate(parts, finish, **extra)],
        "usageMetadata": USAGE if usage is None else usage,
        "modelVersion": MODEL,
        "responseId": RESPONSE_ID,
    }


def chunk(parts: Sequence[JsonObject], finish: str | None = None, **body: Any) -> bytes:
    """One streamed chunk (an SSE event) holding `parts`."""
    made = {"candidates": [candidate(parts, finish)], "modelVersion": MODEL, **body}
    return sse({**made, "responseId": RESPONSE_ID})


def _pieces(text: str) -> list[str]:
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)] or [""]


def _part_chunks(part: JsonObject, late_signatures: bool) -> list[bytes]:
    """A part's chunks: a call whole; text in pieces, its signature on the first piece (or,
    with `late_signatures`, on an empty text part after the last one)."""
    if "functionCall" in part:
        return [chunk([part])]
    signature = part.get("thoughtSignature")
    thought = {"thought": True} if part.get("thought") else {}
    pieces = [{"text": piece, **thought} for piece in _pieces(part["text"])]
    if signature is not None and late_signatures and not thought:
        pieces.append({"text": "", "thoughtSignature": signature})
    elif signature is not None:
        pieces[0]["thoughtSignature"] = signature
    return [chunk([piece]) for piece in pieces]


def gemini_stream(
    parts: Sequence[JsonObject],
    finish: str = "STOP",
    usage: JsonObject | None = None,
    *,
    late_signatures: bool = False,
) -> list[bytes]:
    """A `streamGenerateContent?alt=sse` stream of the parts, ending with a chunk that carries
    the finish reason and the usage (an empty text part, as Gemini sends it)."""
    chunks = [piece for part in parts for piece in _part_chunks(part, late_signatures)]
    final = USAGE if usage is None else usage
    return [*chunks, chunk([{"text": ""}], finish, usageMetadata=final)]


def gemini_error(code: int, status: str, message: str, **detail: Any) -> JsonObject:
    """Google's error body; `detail` becomes one entry of `details` (e.g. `reason=...`)."""
    error: JsonObject = {"code": code, "message": message, "status": status}
    if detail:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", **detail}]
    return {"error": error}


def gemini_answer(
    text: str = "", calls: Sequence[ToolCall] = (), *, with_ids: bool = False
) -> JsonObject:
    """A whole answer of text and calls, like `render.openai_json` for the shared tests."""
    return gemini_json(answer_parts(text, calls, with_ids=with_ids))


def gemini_answer_stream(
    text: str = "", calls: Sequence[ToolCall] = (), *, with_ids: bool = False
) -> list[bytes]:
    """A streamed answer of text and calls, like `render.openai_stream` for the shared tests."""
    return gemini_stream(answer_parts(text, calls, with_ids=with_ids))

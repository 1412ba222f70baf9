"""The conformance harness of `GeminiModel` (the native API): answers rendered with
tests/providers/render_gemini.py in the shapes Gemini sends, the thought as a `thought: true`
part and its signature on the first call (on the text when there is no call), errors in Google's
`{"error": {code, message, status, details}}` body."""

from __future__ import annotations

import base64
from typing import Any

from reactloop._core._messages import Usage
from reactloop._providers import GeminiModel
from reactloop.testing import (
    ErrorKind,
    Features,
    ScriptedAnswer,
    ScriptedError,
    SentRequest,
    WireReply,
    WireRequest,
    json_reply,
    sse_reply,
)
from tests.providers.harnesses import API_KEY, retry_headers
from tests.providers.render_gemini import (
    call_part,
    gemini_error,
    gemini_json,
    gemini_stream,
    text_part,
    thought_part,
)

JsonObject = dict[str, Any]
MODEL = "gemini-2.5-flash"
ERRORS = {
    ErrorKind.RATE_LIMITED: (
        "RESOURCE_EXHAUSTED",
        "Resource has been exhausted (e.g. check quota).",
    ),
    ErrorKind.AUTHENTICATION: (
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials.",
    ),
    ErrorKind.SERVER_ERROR: ("INTERNAL", "An internal error has occurred."),
    ErrorKind.UNAVAILABLE: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    ErrorKind.CONTEXT_TOO_LONG: (
        "INVALID_ARGUMENT",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    ),
}


def parts_of(answer: ScriptedAnswer) -> list[JsonObject]:
    """The answer's parts: the thought, the text, the calls (with their ids), the reasoning's
    signature on the first call, else on the text."""
    reasoning = answer.reasoning
    signature = reasoning.opaque if reasoning is not None else None
    parts = [thought_part(reasoning.text)] if reasoning is not None else []
    on_text = signature if not answer.calls else None
    parts += [text_part(answer.text, on_text)] if answer.text else []
    parts += [
        call_part(call, signature if number == 0 else None, with_id=True)
        for number, call in enumerate(answer.calls)
    ]
    return parts


def usage_of(usage: Usage) -> JsonObject:
    """`usageMetadata`: the thoughts counted apart from the candidates."""
    return {
        "promptTokenCount": usage.input_tokens,
        "cachedContentTokenCount": usage.cache_read_tokens,
        "candidatesTokenCount": usage.output_tokens - usage.reasoning_tokens,
        "thoughtsTokenCount": usage.reasoning_tokens,
        "totalTokenCount": usage.total_tokens,
    }


def rate_limit_details(error: ScriptedError) -> dict[str, Any]:
    """Google's RetryInfo beside the header, as Gemini sends a rate limit."""
    if error.retry_after is None:
        return {}
    return {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": f"{error.retry_after}s",
    }


class GeminiHarness:
    """`GeminiModel` over `generateContent` and `streamGenerateContent?alt=sse`."""

    name = "google"
    features = Features(
        reasoning=True,
        reasoning_text=True,
        images=True,
        cache_read_tokens=True,
        reasoning_tokens=True,
    )

    def build(self, base_url: str, *, idle_timeout: float) -> Any:
        return GeminiModel(MODEL, api_key=API_KEY, base_url=base_url, idle_timeout=idle_timeout)

    def finish(self, answer: ScriptedAnswer) -> str:
        return "STOP"  # Gemini ends a step of calls with STOP too

    def render_whole(self, answer: ScriptedAnswer) -> WireReply:
        body = gemini_json(parts_of(answer), self.finish(answer), usage_of(answer.usage))
        return json_reply(body)

    def render_stream(self, answer: ScriptedAnswer) -> WireReply:
        chunks = gemini_stream(parts_of(answer), self.finish(answer), usage_of(answer.usage))
        return sse_reply(chunks)

    def render_error(self, error: ScriptedError) -> WireReply:
        if error.kind is ErrorKind.MALFORMED:
            return json_reply({"candidates": "?", "modelVersion": MODEL})
        status, message = ERRORS[error.kind]
        body = gemini_error(error.status, status, message)
        details = rate_limit_details(error)
        if details:
            body["error"]["details"] = [details]
        return json_reply(body, error.status, retry_headers(error))

    def read_request(self, request: WireRequest) -> SentRequest:
        body = request.json()
        system = body.get("systemInstruction", {}).get("parts", [])
        parts = [part for content in body["contents"] for part in content["parts"]]
        texts = [part["text"] for part in [*system, *parts] if "text" in part]
        results = [
            (part["functionResponse"]["id"], part["functionResponse"]["response"]["output"])
            for part in parts
            if "functionResponse" in part
        ]
        signatures = [part["thoughtSignature"] for part in parts if "thoughtSignature" in part]
        images = [
            base64.b64decode(part["inlineData"]["data"])
            for part in parts
            if part.get("inlineData", {}).get("mimeType", "").startswith("image/")
        ]
        return SentRequest(texts, results, signatures, images)

"""Conformance harnesses of the built-in providers (`reactloop.testing.ProviderHarness`): each
renders the kit's scripted answers and errors in its protocol's documented shapes (those of the
recordings under tests/fixtures) and reads back what a request body carried.

- Chat Completions (`OpenAIModel`): OpenAI's own has no reasoning on the wire; Gemini's
  OpenAI-compatible endpoint signs the first tool call of a step (`extra_content.google.
  thought_signature`, the opaque value that goes back).
- Anthropic Messages: a `thinking` block with its signature.
- OpenAI Responses: a reasoning item with a summary and `encrypted_content`.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import orjson

from reactloop._core._messages import ToolCall, Usage
from reactloop._providers import AnthropicModel, OpenAIModel, OpenAIResponsesModel
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
from tests.providers.render import sse

JsonObject = dict[str, Any]
API_KEY = "sk-test-SECRET-0123456789abcdef"
FULL = Features(
    reasoning=True, reasoning_text=True, images=True, cache_read_tokens=True, reasoning_tokens=True
)


def pieces(text: str, size: int = 5) -> list[str]:
    """The text cut into pieces of `size` characters, as a stream sends it."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def image_bytes(url: str) -> bytes:
    """The bytes of a `data:` URL."""
    return base64.b64decode(url.split(",", 1)[1])


def text_of(content: object) -> Iterator[str]:
    """The texts of a message's content: a string, or a list of parts with `text`."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        yield from (part["text"] for part in content if isinstance(part.get("text"), str))


def retry_headers(error: ScriptedError) -> list[tuple[str, str]]:
    """The retry-after header a rate limit carries."""
    return [] if error.retry_after is None else [("retry-after", str(error.retry_after))]


# -- OpenAI Chat Completions ---------------------------------------------------------------------

CHAT_ERRORS = {
    ErrorKind.RATE_LIMITED: ("Rate limit reached for gpt-4o", "requests", "rate_limit_exceeded"),
    ErrorKind.AUTHENTICATION: ("Incorrect API key provided", "invalid_request_error",
                               "invalid_api_key"),
    ErrorKind.SERVER_ERROR: ("The server had an error", "server_error", None),
    ErrorKind.UNAVAILABLE: ("The engine is currently overloaded", "server_error", None),
    ErrorKind.CONTEXT_TOO_LONG: (
        "This model's maximum context length is 128000 tokens. However, your messages resulted"
        " in 130000 tokens.", "invalid_request_error", "context_length_exceeded",
    ),
}  # fmt: skip


def chat_usage(usage: Usage) -> JsonObject:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def chat_call(call: ToolCall, signature: str | None) -> JsonObject:
    function = {"name": call.name, "arguments": call.arguments}
    encoded: JsonObject = {"id": call.id, "type": "function", "function": function}
    if signature is not None:
        encoded["extra_content"] = {"google": {"thought_signature": signature}}
    return encoded


def chat_calls(answer: ScriptedAnswer, signed: bool = True) -> list[JsonObject]:
    """The calls, the first one signed when the answer reasons (as Gemini signs a step)."""
    signature = answer.reasoning.opaque if answer.reasoning and signed else None
    return [chat_call(call, signature if n == 0 else None) for n, call in enumerate(answer.calls)]


def chat_chunk(delta: JsonObject, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
                "created": 1, "choices": [choice]})  # fmt: skip


NO_REASONING = Features(images=True, cache_read_tokens=True, reasoning_tokens=True)
SIGNED = Features(reasoning=True, images=True, cache_read_tokens=True, reasoning_tokens=True)


class ChatHarness:
    """`OpenAIModel` over Chat Completions: OpenAI's own (no reasoning comes back on Chat
    Completions), or a compatible server named `provider` at `prefix` (Gemini's signs its calls:
    `features=SIGNED`)."""

    signed_calls = True  # reasoning goes as a thought signature on the first call

    def __init__(
        self,
        name: str = "openai",
        model: str = "gpt-4o",
        prefix: str = "/v1",
        features: Features = NO_REASONING,
        **options: Any,
    ) -> None:
        self.name, self.model, self.prefix, self.features = name, model, prefix, features
        self.options = options

    def build(self, base_url: str, *, idle_timeout: float) -> Any:
        url = f"{base_url}{self.prefix}"
        return OpenAIModel(
            self.model, api_key=API_KEY, base_url=url, idle_timeout=idle_timeout,
            provider=self.name, **self.options,
        )  # fmt: skip

    def render_whole(self, answer: ScriptedAnswer) -> WireReply:
        message: JsonObject = {"role": "assistant", "content": answer.text or None,
                               "refusal": None}  # fmt: skip
        if answer.calls:
            message["tool_calls"] = chat_calls(answer, self.signed_calls)
        finish = "tool_calls" if answer.calls else "stop"
        return json_reply({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o", "created": 1,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": chat_usage(answer.usage),
        })  # fmt: skip

    def render_stream(self, answer: ScriptedAnswer) -> WireReply:
        chunks = [chat_chunk({"role": "assistant", "content": ""})]
        chunks += [chat_chunk({"content": piece}) for piece in pieces(answer.text)]
        for index, call in enumerate(chat_calls(answer, self.signed_calls)):
            arguments = call["function"]["arguments"]
            opening = {**call, "index": index, "function": {"name": call["function"]["name"],
                                                            "arguments": ""}}  # fmt: skip
            chunks.append(chat_chunk({"tool_calls": [opening]}))
            for piece in pieces(arguments, 7):
                more = {"index": index, "function": {"arguments": piece}}
                chunks.append(chat_chunk({"tool_calls": [more]}))
        chunks.append(chat_chunk({}, "tool_calls" if answer.calls else "stop"))
        chunks.append(sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                           "model": "gpt-4o", "choices": [],
                           "usage": chat_usage(answer.usage)}))  # fmt: skip
        return sse_reply([*chunks, b"data: [DONE]\n\n"])

    def render_error(self, error: ScriptedError) -> WireReply:
        if error.kind is ErrorKind.MALFORMED:
            return json_reply({"id": "chatcmpl-1", "object": "chat.completion", "choices": "?"})
        message, kind, code = CHAT_ERRORS[error.kind]
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        return json_reply(body, error.status, retry_headers(error))

    def read_request(self, request: WireRequest) -> SentRequest:
        messages = request.json()["messages"]
        texts = [text for m in messages for text in text_of(m.get("content"))]
        results = [(m["tool_call_id"], "".join(text_of(m["content"])))
                   for m in messages if m["role"] == "tool"]  # fmt: skip
        signatures = [
            call["extra_content"]["google"]["thought_signature"]
            for m in messages for call in m.get("tool_calls", []) if "extra_content" in call
        ]  # fmt: skip
        images = [
            image_bytes(part["image_url"]["url"])
            for m in messages if isinstance(m.get("content"), list)
            for part in m["content"] if part["type"] == "image_url"
        ]  # fmt: skip
        return SentRequest(texts, results, signatures, images)


# -- Anthropic Messages --------------------------------------------------------------------------

ANTHROPIC_ERRORS = {
    ErrorKind.RATE_LIMITED: ("rate_limit_error", "Number of requests has exceeded your limit"),
    ErrorKind.AUTHENTICATION: ("authentication_error", "invalid x-api-key"),
    ErrorKind.SERVER_ERROR: ("api_error", "Internal server error"),
    ErrorKind.UNAVAILABLE: ("api_error", "Service unavailable"),
    ErrorKind.CONTEXT_TOO_LONG: ("invalid_request_error",
                                 "prompt is too long: 210000 tokens > 200000 maximum"),
}  # fmt: skip


def anthropic_usage(usage: Usage) -> JsonObject:
    """Anthropic's `input_tokens` leaves the cache reads out."""
    return {
        "input_tokens": usage.input_tokens - usage.cache_read_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": 0,
        "output_tokens": usage.output_tokens,
    }


def anthropic_blocks(answer: ScriptedAnswer) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    if answer.reasoning:
        blocks.append({"type": "thinking", "thinking": answer.reasoning.text,
                       "signature": answer.reasoning.opaque})  # fmt: skip
    if answer.text:
        blocks.append({"type": "text", "text": answer.text})
    blocks += [{"type": "tool_use", "id": call.id, "name": call.name,
                "input": orjson.loads(call.arguments)} for call in answer.calls]  # fmt: skip
    return blocks


def anthropic_block_events(index: int, block: JsonObject) -> list[bytes]:
    """One content block as it streams: start (empty), its deltas, stop."""
    kind = block["type"]
    empties: dict[str, JsonObject] = {"thinking": {"thinking": "", "signature": ""},
                                      "text": {"text": ""}, "tool_use": {"input": {}}}  # fmt: skip
    empty = empties[kind]
    start = {"type": "content_block_start", "index": index, "content_block": {**block, **empty}}
    events = [sse(start, "content_block_start")]
    if kind == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"])]
    else:
        arguments = orjson.dumps(block["input"]).decode()
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(arguments, 7)]
    for delta in deltas:
        event = {"type": "content_block_delta", "index": index, "delta": delta}
        events.append(sse(event, "content_block_delta"))
    return [*events, sse({"type": "content_block_stop", "index": index}, "content_block_stop")]


class AnthropicHarness:
    """`AnthropicModel` over the Messages API (no reasoning token count: Anthropic has none)."""

    name = "anthropic"
    features = Features(reasoning=True, reasoning_text=True, images=True, cache_read_tokens=True)

    def build(self, base_url: str, *, idle_timeout: float) -> Any:
        return AnthropicModel(
            "claude-sonnet-4-5", api_key=API_KEY, base_url=base_url, idle_timeout=idle_timeout
        )

    def message(self, answer: ScriptedAnswer) -> JsonObject:
        return {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": anthropic_blocks(answer), "stop_sequence": None,
            "stop_reason": "tool_use" if answer.calls else "end_turn",
            "usage": anthropic_usage(answer.usage),
        }  # fmt: skip

    def render_whole(self, answer: ScriptedAnswer) -> WireReply:
        return json_reply(self.message(answer))

    def render_stream(self, answer: ScriptedAnswer) -> WireReply:
        whole = self.message(answer)
        started = {**whole, "content": [], "stop_reason": None,
                   "usage": {**whole["usage"], "output_tokens": 1}}  # fmt: skip
        events = [sse({"type": "message_start", "message": started}, "message_start")]
        events.append(sse({"type": "ping"}, "ping"))
        for index, block in enumerate(whole["content"]):
            events += anthropic_block_events(index, block)
        stop = {"stop_reason": whole["stop_reason"], "stop_sequence": None}
        usage = {"output_tokens": answer.usage.output_tokens}
        delta = {"type": "message_delta", "delta": stop, "usage": usage}
        events.append(sse(delta, "message_delta"))
        return sse_reply([*events, sse({"type": "message_stop"}, "message_stop")])

    def render_error(self, error: ScriptedError) -> WireReply:
        if error.kind is ErrorKind.MALFORMED:
            return json_reply({"id": "msg_1", "type": "message", "content": {"text": "?"}})
        kind, message = ANTHROPIC_ERRORS[error.kind]
        body = {"type": "error", "error": {"type": kind, "message": message}}
        return json_reply(body, error.status, retry_headers(error))

    def read_request(self, request: WireRequest) -> SentRequest:
        body = request.json()
        system = body.get("system")
        texts = [system] if isinstance(system, str) else list(text_of(system))
        blocks = [block for m in body["messages"] for block in m["content"]]
        texts += [block["text"] for block in blocks if block["type"] == "text"]
        results = [(b["tool_use_id"], "".join(text_of(b["content"])))
                   for b in blocks if b["type"] == "tool_result"]  # fmt: skip
        signatures = [b.get("signature") or b.get("data") for b in blocks
                      if b["type"] in ("thinking", "redacted_thinking")]  # fmt: skip
        images = [base64.b64decode(b["source"]["data"]) for b in blocks if b["type"] == "image"]
        return SentRequest(texts, results, signatures, images)


# -- OpenAI Responses ----------------------------------------------------------------------------


def responses_usage(usage: Usage) -> JsonObject:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


def responses_output(answer: ScriptedAnswer) -> list[JsonObject]:
    """The output items: the reasoning item, the message, then the calls."""
    items: list[JsonObject] = []
    if answer.reasoning:
        summary = [{"type": "summary_text", "text": answer.reasoning.text}]
        items.append({"type": "reasoning", "id": "rs_1", "summary": summary,
                      "encrypted_content": answer.reasoning.opaque})  # fmt: skip
    if answer.text:
        content = [{"type": "output_text", "text": answer.text, "annotations": [], "logprobs": []}]
        items.append({"type": "message", "id": "msg_1", "role": "assistant",
                      "status": "completed", "content": content})  # fmt: skip
    items += [{"type": "function_call", "id": f"fc_{n}", "call_id": call.id, "name": call.name,
               "arguments": call.arguments, "status": "completed"}
              for n, call in enumerate(answer.calls, 1)]  # fmt: skip
    return items


def responses_item_events(index: int, item: JsonObject) -> list[bytes]:
    """One output item as it streams: added (empty), its deltas, done."""
    kind = item["type"]
    empties: dict[str, JsonObject] = {
        "function_call": {"arguments": "", "status": "in_progress"},
        "message": {"content": [], "status": "in_progress"},
        "reasoning": {"summary": [], "encrypted_content": None},
    }
    empty = empties[kind]
    events = [sse({"type": "response.output_item.added", "output_index": index,
                   "item": {**item, **empty}})]  # fmt: skip
    base = {"item_id": item["id"], "output_index": index}
    if kind == "function_call":
        events += [sse({"type": "response.function_call_arguments.delta", **base, "delta": p})
                   for p in pieces(item["arguments"], 7)]  # fmt: skip
    elif kind == "message":
        events += [sse({"type": "response.output_text.delta", **base, "content_index": 0,
                        "delta": p}) for p in pieces(item["content"][0]["text"])]  # fmt: skip
    else:
        events += [sse({"type": "response.reasoning_summary_text.delta", **base,
                        "summary_index": 0, "delta": p})
                   for p in pieces(item["summary"][0]["text"])]  # fmt: skip
    done = {"type": "response.output_item.done", "output_index": index, "item": item}
    return [*events, sse(done)]


class ResponsesHarness:
    """`OpenAIResponsesModel` (a reasoning family, stateless: encrypted reasoning goes back)."""

    name = "openai-responses"
    features = FULL

    def build(self, base_url: str, *, idle_timeout: float) -> Any:
        return OpenAIResponsesModel(
            "gpt-5", api_key=API_KEY, base_url=f"{base_url}/v1", idle_timeout=idle_timeout
        )

    def response(self, answer: ScriptedAnswer) -> JsonObject:
        return {
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5",
            "output": responses_output(answer), "incomplete_details": None, "error": None,
            "usage": responses_usage(answer.usage),
        }  # fmt: skip

    def render_whole(self, answer: ScriptedAnswer) -> WireReply:
        return json_reply(self.response(answer))

    def render_stream(self, answer: ScriptedAnswer) -> WireReply:
        whole = self.response(answer)
        started = {**whole, "status": "in_progress", "output": [], "usage": None}
        events = [sse({"type": "response.created", "response": started}, "response.created")]
        for index, item in enumerate(whole["output"]):
            events += responses_item_events(index, item)
        events.append(sse({"type": "response.completed", "response": whole}))
        return sse_reply(events)

    def render_error(self, error: ScriptedError) -> WireReply:
        if error.kind is ErrorKind.MALFORMED:
            return json_reply({"id": "resp_1", "object": "response", "output": "?"})
        return ChatHarness().render_error(error)  # the same error bodies as Chat Completions

    def read_request(self, request: WireRequest) -> SentRequest:
        body = request.json()
        items = body["input"]
        texts = [body["instructions"]] if body.get("instructions") else []
        texts += [text for item in items if item.get("type", "message") == "message"
                  for text in text_of(item["content"])]  # fmt: skip
        results = [(item["call_id"], "".join(text_of(item["output"])))
                   for item in items if item.get("type") == "function_call_output"]  # fmt: skip
        reasoning = [
            item["encrypted_content"]
            for item in items
            if item.get("type") == "reasoning" and item.get("encrypted_content")
        ]
        images = [image_bytes(part["image_url"]) for item in items
                  if isinstance(item.get("content"), list)
                  for part in item["content"] if part["type"] == "input_image"]  # fmt: skip
        return SentRequest(texts, results, reasoning, images)

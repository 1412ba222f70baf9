"""Conformance harnesses of the OpenAI-compatible host presets (`OpenAIModel(MODEL, host=...)`),
one per preset `reactloop.providers.HOSTS` publishes: each host speaks Chat Completions
(rendered by tests/providers/harnesses.py's `ChatHarness`) under `/{host}{the preset's path}`,
the path by which tests/helpers/vendor_schemas.py judges its bodies as that host's. OpenRouter
returns opaque `reasoning_details` (a signed thinking block) that must go back unchanged; the
other hosts' reasoning is readable text, with no opaque value, so `reasoning_sent_back` is
skipped for them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import orjson

from reactloop.providers import HOSTS as PRESETS
from reactloop.testing import Features, ScriptedAnswer, SentRequest, WireReply, WireRequest
from tests.providers.harnesses import NO_REASONING, ChatHarness, chat_chunk, pieces

JsonObject = dict[str, Any]
MODELS = {
    "openrouter": "anthropic/claude-sonnet-4.5",
    "groq": "openai/gpt-oss-120b",
    "deepseek": "deepseek-chat",
    "cerebras": "zai-glm-4.7",
    "ollama": "qwen3:8b",
    "vllm": "Qwen/Qwen3-8B",
}
SIGNED_DETAILS = Features(
    reasoning=True, reasoning_text=True, images=True, cache_read_tokens=True, reasoning_tokens=True
)
FORMAT = "anthropic-claude-v1"


def details(text: str, signature: str | None) -> JsonObject:
    """One `reasoning.text` item of `reasoning_details`."""
    item: JsonObject = {"type": "reasoning.text", "text": text, "format": FORMAT, "index": 0}
    if signature is not None:
        item["signature"] = signature
    return item


class OpenRouterHarness(ChatHarness):
    """OpenRouter: the reasoning as `reasoning` text and signed `reasoning_details`."""

    signed_calls = False

    def __init__(self, prefix: str) -> None:
        super().__init__(
            "openrouter", MODELS["openrouter"], prefix, SIGNED_DETAILS, host="openrouter"
        )

    def render_whole(self, answer: ScriptedAnswer) -> WireReply:
        reply = super().render_whole(answer)
        if answer.reasoning is None:
            return reply
        body = orjson.loads(b"".join(reply.chunks))
        message = body["choices"][0]["message"]
        message["reasoning"] = answer.reasoning.text
        message["reasoning_details"] = [details(answer.reasoning.text, answer.reasoning.opaque)]
        return WireReply(reply.status, (orjson.dumps(body),), reply.headers)

    def render_stream(self, answer: ScriptedAnswer) -> WireReply:
        reply = super().render_stream(answer)
        if answer.reasoning is None:
            return reply
        thought = [
            chat_chunk({"reasoning": piece, "reasoning_details": [details(piece, None)]})
            for piece in pieces(answer.reasoning.text)
        ]
        signed = chat_chunk({"reasoning_details": [details("", answer.reasoning.opaque)]})
        chunks = (reply.chunks[0], *thought, signed, *reply.chunks[1:])
        return WireReply(reply.status, chunks, reply.headers)

    def read_request(self, request: WireRequest) -> SentRequest:
        sent = super().read_request(request)
        messages = request.json()["messages"]
        signatures = [
            item["signature"]
            for message in messages
            for item in message.get("reasoning_details", [])
            if "signature" in item
        ]
        return SentRequest(sent.texts, sent.tool_results, signatures, sent.images)


def path_of(name: str) -> str:
    """`/{host}` and the path of the preset's URL (`/v1` when it has none)."""
    url = PRESETS[name].base_url
    return f"/{name}{urlsplit(url).path if url else '/v1'}".rstrip("/")


def harness(name: str) -> ChatHarness:
    """The harness of the preset `name`."""
    if name == "openrouter":
        return OpenRouterHarness(path_of(name))
    return ChatHarness(name, MODELS.get(name, "test-model"), path_of(name), NO_REASONING, host=name)


HOSTS = {name: harness(name) for name in PRESETS}
"""A harness per preset, by the preset's name."""

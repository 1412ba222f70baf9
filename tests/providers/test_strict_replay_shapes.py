"""The strict fakes answer in the vendors' own response shapes: each JSON answer and each streamed
event validates as the official SDK's response model (anthropic `Message` and
`RawMessageStreamEvent`, openai `ChatCompletion` and `ChatCompletionChunk`, openai `Response` and
`ResponseStreamEvent`), so a provider that reads the fakes reads what the vendors send."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
from anthropic.types import Message, RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from tests.helpers.strict_responses import StrictResponses
from tests.helpers.strict_vendor import Step, StrictAnthropic, StrictChat, StrictFake
from tests.providers.wire_server import Reply, Request

JsonObject = dict[str, Any]
STEPS = (
    Step("Think first.", "Let me look.", (("weather", {"city": "Oslo"}), ("time", {})), True),
    Step("Done thinking.", "Rain."),
)
ANTHROPIC = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": [],
             "thinking": {"type": "enabled", "budget_tokens": 2048}}  # fmt: skip
CHAT = {"model": "m", "messages": []}
RESPONSES = {"model": "gpt-5", "input": [], "store": False,
             "include": ["reasoning.encrypted_content"]}  # fmt: skip


def answer(fake: StrictFake, path: str, body: JsonObject, stream: bool) -> Reply:
    sent = {**body, "stream": stream}
    reply = fake.handle(Request("POST", path, {}, orjson.dumps(sent)))
    assert reply.status == 200
    return reply


def events(reply: Reply) -> list[tuple[str | None, str]]:
    """(event name, data) of each SSE event of a reply (one event per chunk)."""
    found = []
    for chunk in reply.chunks:
        lines = chunk.decode().strip().split("\n")
        named = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
        data = "\n".join(line.removeprefix("data: ") for line in lines if line.startswith("data: "))
        found.append((named[0] if named else None, data))
    return found


FAKES: dict[str, tuple[Callable[[], StrictFake], str, JsonObject]] = {
    "anthropic": (lambda: StrictAnthropic(STEPS), "/v1/messages", ANTHROPIC),
    "deepseek": (lambda: StrictChat(STEPS, vendor="deepseek"), "/v1/chat/completions", CHAT),
    "gemini": (lambda: StrictChat(STEPS, vendor="gemini"), "/v1/chat/completions", CHAT),
    "responses": (lambda: StrictResponses(STEPS), "/v1/responses", RESPONSES),
}
WHOLE: dict[str, Any] = {
    "anthropic": Message,
    "deepseek": ChatCompletion,
    "gemini": ChatCompletion,
    "responses": Response,
}
EVENT: dict[str, Any] = {
    "anthropic": RawMessageStreamEvent,
    "deepseek": ChatCompletionChunk,
    "gemini": ChatCompletionChunk,
    "responses": ResponseStreamEvent,
}


@pytest.mark.parametrize("vendor", sorted(FAKES))
def test_a_whole_answer_is_the_sdks_response_model(vendor: str) -> None:
    make, path, body = FAKES[vendor]
    reply = answer(make(), path, body, stream=False)
    TypeAdapter(WHOLE[vendor]).validate_json(b"".join(reply.chunks), strict=False)


@pytest.mark.parametrize("vendor", sorted(FAKES))
def test_every_streamed_event_is_the_sdks_event_model(vendor: str) -> None:
    make, path, body = FAKES[vendor]
    streamed = events(answer(make(), path, body, stream=True))
    adapter = TypeAdapter(EVENT[vendor])
    for name, data in streamed:
        if data == "[DONE]":
            continue
        event = adapter.validate_json(data)
        assert name is None or name == getattr(event, "type", None), data


@pytest.mark.parametrize("vendor", sorted(FAKES))
def test_the_answer_carries_the_opaque_reasoning_values(vendor: str) -> None:
    make, path, body = FAKES[vendor]
    whole = orjson.loads(b"".join(answer(make(), path, body, stream=False).chunks))
    raw = orjson.dumps(whole).decode()
    wanted = {
        "anthropic": ['"signature":', '"redacted_thinking"'],
        "deepseek": ['"reasoning_content":"Think first."'],
        "gemini": ['"thought_signature":'],
        "responses": ['"encrypted_content":"', '"type":"reasoning"'],
    }[vendor]
    assert all(piece in raw for piece in wanted), raw

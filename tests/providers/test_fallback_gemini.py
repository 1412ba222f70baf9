"""`FallbackModel` across Gemini and the other vendors with reasoning in the history, over real
loopback servers: a loop begins on one vendor (its reasoning signed: Gemini's thought signatures,
Claude's thinking signature, OpenAI's encrypted reasoning), the vendor fails on the next step,
and the other answers; the other never receives the first one's opaque reasoning, and Gemini
gets Google's placeholder on the call another model began."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
import pytest

from reactloop._core._messages import ToolCall
from reactloop._loop._loop import ReActLoop
from reactloop._policies._retry import RetryPolicy
from reactloop._providers import (
    AnthropicModel,
    FallbackModel,
    GeminiModel,
    OpenAIModel,
    OpenAIResponsesModel,
)
from reactloop._providers._gemini_content import SKIP_SIGNATURE
from reactloop.testing import FakeTool
from tests.providers.conftest import API_KEY
from tests.providers.render import anthropic_json, openai_json
from tests.providers.render_gemini import (
    call_part,
    gemini_answer,
    gemini_error,
    gemini_json,
    thought_part,
)
from tests.providers.render_responses import responses_json
from tests.providers.wire_server import Reply, WireServer, json_reply

pytestmark = pytest.mark.anyio

QUICK = RetryPolicy(max_retries=1, initial_delay=0, max_delay=0)
LOOKUP = ToolCall("lookup", '{"q": "tides"}', "call_1")
THOUGHT_SIG, CALL_SIG = "R0VNSU5JLXRob3VnaHQtc2ln", "R0VNSU5JLWNhbGwtc2ln"
CLAUDE_SIG = "SIG-opaque-anthropic-0123"
ANSWER = "High tide at noon."
Build = Callable[[str], Any]

OTHERS: dict[str, tuple[Build, Reply]] = {
    "anthropic": (
        lambda url: AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=url),
        json_reply(anthropic_json(ANSWER)),
    ),
    "openai": (
        lambda url: OpenAIModel("gpt-4o", api_key=API_KEY, base_url=f"{url}/v1"),
        json_reply(openai_json(ANSWER)),
    ),
    "openai-responses": (
        lambda url: OpenAIResponsesModel("gpt-5", api_key=API_KEY, base_url=f"{url}/v1"),
        json_reply(responses_json(ANSWER)),
    ),
}


def gemini(url: str) -> GeminiModel:
    return GeminiModel("gemini-3-pro-preview", api_key=API_KEY, base_url=url)


def unavailable() -> Reply:
    return json_reply(gemini_error(503, "UNAVAILABLE", "The model is overloaded."), 503)


def gemini_signed_lookup() -> Reply:
    """Gemini thinks (a signed thought summary) and calls `lookup` on a signed part."""
    parts = [thought_part("Look it up.", THOUGHT_SIG), call_part(LOOKUP, CALL_SIG, with_id=True)]
    return json_reply(gemini_json(parts))


@pytest.fixture
async def other() -> AsyncIterator[WireServer]:
    """The second vendor's server."""
    async with WireServer.running() as running:
        yield running


@pytest.mark.parametrize("vendor", list(OTHERS))
async def test_after_gemini_fails_another_vendor_gets_none_of_its_signatures(
    server: WireServer, other: WireServer, vendor: str
) -> None:
    build, answer = OTHERS[vendor]
    server.reply_with(gemini_signed_lookup(), unavailable(), unavailable())
    other.reply_with(answer)
    async with gemini(server.url) as first, build(other.url) as second:
        loop = ReActLoop(FallbackModel([first, second]), tools=[FakeTool("lookup")], retry=QUICK)
        result = await loop.run("When is high tide?")
    assert result.output == ANSWER
    assert [s.response.answered_by for s in result.steps if s.response] == [
        "google:gemini-3-pro-preview",
        second.provider + ":" + second.model,
    ]
    again = orjson.loads(server.requests[1].body)["contents"][1]["parts"]
    assert {part.get("thoughtSignature") for part in again} == {THOUGHT_SIG, CALL_SIG}
    sent = other.requests[0].body
    assert THOUGHT_SIG.encode() not in sent and CALL_SIG.encode() not in sent
    assert b"call_1" in sent  # the call and its result go on: only Gemini's signatures stay


def claude_thinking_lookup() -> Reply:
    body = anthropic_json(calls=[ToolCall(LOOKUP.name, LOOKUP.arguments, "toolu_1")])
    thought = {"type": "thinking", "thinking": "Look it up.", "signature": CLAUDE_SIG}
    return json_reply({**body, "content": [thought, *body["content"]]})


def gpt_reasoning_lookup() -> Reply:
    return json_reply(responses_json(calls=[LOOKUP], reasoning=True))


FIRSTS: dict[str, tuple[Build, Reply, bytes]] = {
    "anthropic": (
        OTHERS["anthropic"][0],
        claude_thinking_lookup(),
        CLAUDE_SIG.encode(),
    ),
    "openai-responses": (
        OTHERS["openai-responses"][0],
        gpt_reasoning_lookup(),
        b"gAAAA-encrypted-1",
    ),
}


def overloaded(vendor: str) -> Reply:
    if vendor == "anthropic":
        body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return json_reply(body, 529)
    return json_reply({"error": {"message": "down", "type": "server_error"}}, 503)


@pytest.mark.parametrize("vendor", list(FIRSTS))
async def test_after_another_vendor_fails_gemini_gets_none_of_its_reasoning(
    server: WireServer, other: WireServer, vendor: str
) -> None:
    build, first_answer, opaque = FIRSTS[vendor]
    other.reply_with(first_answer, overloaded(vendor), overloaded(vendor))
    server.reply_with(json_reply(gemini_answer(ANSWER)))
    async with build(other.url) as first, gemini(server.url) as second:
        loop = ReActLoop(FallbackModel([first, second]), tools=[FakeTool("lookup")], retry=QUICK)
        result = await loop.run("When is high tide?")
    assert result.output == ANSWER
    assert opaque in other.requests[1].body  # its own vendor got it back on the retried step
    sent = server.requests[0].body
    assert opaque not in sent and b"Look it up." not in sent and b"Thinking." not in sent
    turn = orjson.loads(sent)["contents"][1]
    assert turn["role"] == "model"
    calls = [part for part in turn["parts"] if "functionCall" in part]
    assert [part.get("thoughtSignature") for part in calls] == [SKIP_SIGNATURE]

"""OpenAI prompt caching on Chat Completions and Responses: the recorded cached requests'
`prompt_cache_key` re-encoded, usage read from their answers (a cache write, then a read), the
derived default key, extended retention where the profile takes it, caching off sending
nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from reactloop._core import (
    CachePoint,
    CacheSettings,
    ModelRequest,
    ModelSettings,
    ToolSpec,
    Usage,
    UserMessage,
)
from reactloop._loop._loop import ReActLoop
from reactloop._providers import OpenAIModel, OpenAIResponsesModel
from reactloop._providers._openai import encode_request
from reactloop._providers._openai_cache import derived_key
from tests.providers.conftest import API_KEY
from tests.providers.recorded import RECORDED, interactions
from tests.providers.render import openai_json
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

TOOL = ToolSpec("lookup", "Look a fact up.", {"type": "object", "properties": {}})
MODEL = "gpt-5.6-sol"


def _recorded(folder: str, name: str) -> list[dict[str, Any]]:
    return interactions(RECORDED / folder / f"{name}.yaml")


def _question(body: dict[str, Any], key: str) -> UserMessage:
    """The recorded user message: the catalogue (which the recording marked as the cached
    prefix), then the instruction."""
    catalogue, instruction = (part["text"] for part in body[key][0]["content"])
    return UserMessage(parts=[catalogue, CachePoint(), instruction])


@pytest.fixture
async def chat(server: WireServer) -> AsyncIterator[OpenAIModel]:
    async with OpenAIModel(MODEL, api_key=API_KEY, base_url=f"{server.url}/v1") as model:
        yield model


@pytest.fixture
async def responses_56(server: WireServer) -> AsyncIterator[OpenAIResponsesModel]:
    async with OpenAIResponsesModel(MODEL, api_key=API_KEY, base_url=f"{server.url}/v1") as model:
        yield model


async def test_chat_sends_the_recorded_cache_key(server: WireServer, chat: OpenAIModel) -> None:
    """The recorded request's key and messages, byte for byte (the cache point as the explicit
    breakpoint GPT-5.6 takes, on the catalogue), and the usage of its two answers: 4,012 tokens
    written, then read. (The recording also asked for `prompt_cache_options` explicit mode,
    which reactloop leaves at OpenAI's implicit default.)"""
    recorded = _recorded("openai-chat", "test_openai_chat_prompt_cache_e2e")
    accepted = recorded[0]["request"]["parsed_body"]
    settings = ModelSettings(cache=CacheSettings(key=accepted["prompt_cache_key"]))
    request = ModelRequest((_question(accepted, "messages"),), settings=settings)
    usages = []
    for interaction in recorded:
        server.reply_with(json_reply(interaction["response"]["parsed_body"]))
        usages.append((await chat.request(request)).usage)
        sent = server.requests[-1].json()
        assert sent["prompt_cache_key"] == accepted["prompt_cache_key"]
        assert sent["messages"] == accepted["messages"]
    assert usages == [
        Usage(input_tokens=4020, output_tokens=4, cache_write_tokens=4012),
        Usage(input_tokens=4020, output_tokens=4, cache_read_tokens=4012),
    ]


async def test_responses_sends_the_recorded_cache_key(
    server: WireServer, responses_56: OpenAIResponsesModel
) -> None:
    """The Responses API: the same key and input items (the breakpoint on the catalogue), and
    the usage of a write then a read."""
    recorded = _recorded("openai-responses", "test_openai_responses_prompt_cache_e2e")
    accepted = recorded[0]["request"]["parsed_body"]
    settings = ModelSettings(cache=CacheSettings(key=accepted["prompt_cache_key"]))
    request = ModelRequest((_question(accepted, "input"),), settings=settings)
    usages = []
    for interaction in recorded:
        server.reply_with(json_reply(interaction["response"]["parsed_body"]))
        usages.append((await responses_56.request(request)).usage)
        sent = server.requests[-1].json()
        assert sent["prompt_cache_key"] == accepted["prompt_cache_key"]
        assert sent["input"] == accepted["input"]
    assert [(u.input_tokens, u.cache_write_tokens, u.cache_read_tokens) for u in usages] == [
        (4020, 4012, 0),
        (4020, 0, 4012),
    ]


def test_the_default_key_follows_instructions_and_tools() -> None:
    """Without a key, every step of one loop (same instructions and tools, a longer history)
    shares one; other tools or instructions get another."""
    cached = ModelSettings(cache=CacheSettings())
    first = ModelRequest((UserMessage("a"),), "Be brief.", tools=(TOOL,), settings=cached)
    later = ModelRequest(
        (UserMessage("a"), UserMessage("b")), "Be brief.", (TOOL,), settings=cached
    )
    keys = {encode_request(r, "gpt-4o", stream=False)["prompt_cache_key"] for r in (first, later)}
    assert keys == {derived_key(first)}
    assert derived_key(first) != derived_key(ModelRequest(first.messages, "Be brief."))
    assert derived_key(first) != derived_key(ModelRequest(first.messages, "Other.", (TOOL,)))


def test_one_hour_asks_for_extended_retention_where_the_model_takes_it() -> None:
    """`ttl="1h"`: `prompt_cache_retention: "24h"` for GPT-5 and GPT-4.1 (their profiles'
    `cache_retention`), nothing more for GPT-4o; "5m" leaves the in-memory default."""
    hour = ModelSettings(cache=CacheSettings(ttl="1h", key="k"))
    request = ModelRequest((UserMessage("hi"),), settings=hour)
    assert encode_request(request, "gpt-5", stream=False)["prompt_cache_retention"] == "24h"
    assert encode_request(request, "gpt-4.1", stream=False)["prompt_cache_retention"] == "24h"
    assert "prompt_cache_retention" not in encode_request(request, "gpt-4o", stream=False)
    short = ModelRequest((UserMessage("hi"),), settings=ModelSettings(cache=CacheSettings()))
    assert "prompt_cache_retention" not in encode_request(short, "gpt-5", stream=False)


def test_caching_off_sends_nothing_for_it() -> None:
    """No setting and `enabled=False` give the same bytes, with no cache field; a user's
    cache point is left out."""
    user = UserMessage(parts=["a long document", CachePoint(), "the question"])
    plain = ModelRequest((user,), "Be brief.", (TOOL,))
    off = ModelRequest(
        (user,), "Be brief.", (TOOL,), settings=ModelSettings(cache=CacheSettings(False))
    )
    body = orjson.dumps(encode_request(plain, "gpt-5", stream=True))
    assert body == orjson.dumps(encode_request(off, "gpt-5", stream=True))
    assert b"prompt_cache" not in body
    assert orjson.loads(body)["messages"][1]["content"] == "a long documentthe question"


def test_a_breakpoint_goes_only_where_the_model_takes_it() -> None:
    """GPT-5.6 (its profile's `cache_breakpoints`) gets the cache point as a breakpoint, also
    with no cache setting; GPT-4o and `enabled=False` get the plain text."""
    user = UserMessage(parts=["a long document", CachePoint(), "the question"])
    expected = [
        {
            "type": "text",
            "text": "a long document",
            "prompt_cache_breakpoint": {"mode": "explicit"},
        },
        {"type": "text", "text": "the question"},
    ]
    plain = ModelRequest((user,))
    assert encode_request(plain, MODEL, stream=False)["messages"][0]["content"] == expected
    assert encode_request(plain, "gpt-4o", stream=False)["messages"][0]["content"] == user.text
    off = ModelRequest((user,), settings=ModelSettings(cache=CacheSettings(enabled=False)))
    assert encode_request(off, MODEL, stream=False)["messages"][0]["content"] == user.text


async def test_a_session_caches_under_its_id(server: WireServer, chat: OpenAIModel) -> None:
    """Through the loop: a run of a session sends the session's id as its key, a run without
    one the key derived from the loop's instructions and tools, a key given wins over both."""
    server.reply_with(json_reply(openai_json("OK")))
    cached = ModelSettings(cache=CacheSettings())
    loop = ReActLoop(chat, instructions="Be brief.", settings=cached)
    await loop.run("hi", session_id="session-7")
    await loop.run("hi")
    named = ReActLoop(chat, settings=ModelSettings(cache=CacheSettings(key="mine")))
    await named.run("hi", session_id="session-7")
    keys = [request.json()["prompt_cache_key"] for request in server.requests]
    derived = derived_key(ModelRequest((), "Be brief."))
    assert keys == ["session-7", derived, "mine"]


async def test_extended_retention_passes_the_sdk_types(
    server: WireServer, responses_56: OpenAIResponsesModel
) -> None:
    """Over the wire (the SDK's request types and the OpenAPI description check the body): the
    key, 24-hour retention and a breakpoint on a Responses request with tools."""
    recorded = _recorded("openai-responses", "test_openai_responses_prompt_cache_e2e")
    server.reply_with(json_reply(recorded[1]["response"]["parsed_body"]))
    user = UserMessage(parts=["a long document", CachePoint(), "the question"])
    settings = ModelSettings(cache=CacheSettings(ttl="1h"))
    await responses_56.request(ModelRequest((user,), "Be brief.", (TOOL,), settings=settings))
    sent = server.requests[-1].json()
    assert sent["prompt_cache_retention"] == "24h"
    assert sent["input"][0]["content"][0]["prompt_cache_breakpoint"] == {"mode": "explicit"}

"""Anthropic prompt caching: the recorded cached requests re-encoded (cache_control where the
vendor accepted it), usage read from them, at most four breakpoints, and caching off leaving the
request as it was."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop._core import (
    AssistantMessage,
    CachePoint,
    CacheSettings,
    ImagePart,
    Message,
    ModelRequest,
    ModelSettings,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from reactloop._providers import AnthropicModel
from reactloop._providers._anthropic import encode_request
from reactloop._providers._anthropic_cache import MAX_BREAKPOINTS, breakpoints
from tests.providers.conftest import API_KEY
from tests.providers.recorded import anthropic as recorded
from tests.providers.render import anthropic_json
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

CACHED = ModelSettings(cache=CacheSettings())
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
TOOL = ToolSpec("lookup", "Look a fact up.", {"type": "object", "properties": {}})


@pytest.fixture
async def opus(server: WireServer) -> AsyncIterator[AnthropicModel]:
    """Claude Opus 4.8 (system turns in the conversation) talking to the wire server."""
    async with AnthropicModel("claude-opus-4-8", api_key=API_KEY, base_url=server.url) as model:
        yield model


def _text(interaction: dict[str, Any], index: int) -> str:
    return str(interaction["request"]["parsed_body"]["messages"][index]["content"][0]["text"])


async def test_cached_turns_are_encoded_as_recorded(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    """The recorded second request, rebuilt: its turns as the vendor accepted them, the newest
    turn's last block holding the breakpoint the recording asked for with the API's automatic
    form (top-level `cache_control`, which lands on that same block), the system prompt as one
    cached text block; usage as recorded (1,111 read, 418 written)."""
    first, second = recorded("test_anthropic_cache_real_api")
    server.reply_with(json_reply(first["response"]["parsed_body"]))
    question = UserMessage(_text(first, 0))
    request = ModelRequest((question,), "You are a helpful assistant.", settings=CACHED)
    answer = await anthropic.request(request)
    server.reply_with(json_reply(second["response"]["parsed_body"]))
    follow_up = UserMessage("Can you summarize that in one sentence?")
    history = (question, answer.message, follow_up)
    response = await anthropic.request(ModelRequest(history, request.instructions, settings=CACHED))
    sent, accepted = server.requests[-1].json(), second["request"]["parsed_body"]
    last = sent["messages"][-1]["content"][-1]
    assert last.pop("cache_control") == accepted["cache_control"]
    assert sent["messages"] == accepted["messages"]
    assert sent["system"] == [
        {"type": "text", "text": accepted["system"], "cache_control": accepted["cache_control"]}
    ]
    assert response.usage == Usage(
        input_tokens=1532, output_tokens=33, cache_read_tokens=1111, cache_write_tokens=418
    )


async def test_a_cached_system_turn_is_encoded_as_recorded(
    server: WireServer, opus: AnthropicModel
) -> None:
    """A mid-conversation system message, newest in the request: the breakpoint on its block
    (byte for byte the recorded turns); the second call read the 1,590 tokens the first wrote."""
    first, second = recorded("test_inline_system_prompt_cache_prefix_is_reused")
    history = (
        UserMessage(_text(first, 0)),
        AssistantMessage("OK"),
        UserMessage("context"),
        SystemMessage("S"),
    )
    request = ModelRequest(history, "Reply with OK.", settings=CACHED)
    usages = []
    for interaction in (first, second):
        server.reply_with(json_reply(interaction["response"]["parsed_body"]))
        usages.append((await opus.request(request)).usage)
        assert (
            server.requests[-1].json()["messages"]
            == interaction["request"]["parsed_body"]["messages"]
        )
    assert [(u.cache_write_tokens, u.cache_read_tokens) for u in usages] == [(1590, 0), (0, 1590)]


def _history(points: int, tool_points: int) -> tuple[Message, ...]:
    """A conversation whose user message holds `points` cache points and whose tool result
    holds `tool_points`, each after a block."""
    user = UserMessage(
        parts=["start", *[p for i in range(points) for p in (f"t{i}", CachePoint())]]
    )
    if not tool_points:
        return (user,)
    call = ToolCall.of(TOOL.name, {})
    parts = [p for i in range(tool_points) for p in (ImagePart(PNG), f"r{i}", CachePoint())]
    return (user, AssistantMessage(tool_calls=[call]), ToolMessage(call.id, TOOL.name, parts=parts))


@given(
    points=st.integers(0, 6),
    tool_points=st.integers(0, 6),
    tools=st.booleans(),
    instructions=st.sampled_from([None, "Be brief."]),
    cache=st.sampled_from([None, CacheSettings(), CacheSettings(ttl="1h")]),
)
def test_never_more_than_four_breakpoints(
    points: int,
    tool_points: int,
    tools: bool,
    instructions: str | None,
    cache: CacheSettings | None,
) -> None:
    """However many cache points a conversation holds, a request carries at most four, the
    newest kept; with caching on the newest turn's last block is always one of them."""
    request = ModelRequest(
        _history(points, tool_points),
        instructions,
        tools=(TOOL,) if tools else (),
        settings=ModelSettings(cache=cache),
    )
    body = encode_request(request, "claude-sonnet-4-5", stream=False)
    assert breakpoints(body) <= MAX_BREAKPOINTS
    if cache is not None:
        newest = body["messages"][-1]["content"][-1]
        assert newest["cache_control"] == {"type": "ephemeral", "ttl": cache.ttl}
        other = b'"ttl":"5m"' if cache.ttl == "1h" else b'"ttl":"1h"'
        assert other not in orjson.dumps(body)
    else:
        assert breakpoints(body) == min(MAX_BREAKPOINTS, points + tool_points)


def test_caching_off_leaves_the_request_as_it_was() -> None:
    """No cache setting, and `enabled=False`, send the same bytes, without a breakpoint: a
    request that never named caching is what it was before caching existed."""
    history = (UserMessage("hi"), AssistantMessage("hello"), UserMessage("again"))
    for tools in ((), (TOOL,)):
        plain = ModelRequest(history, "Be brief.", tools=tools)
        off = ModelRequest(
            history, "Be brief.", tools=tools, settings=ModelSettings(cache=CacheSettings(False))
        )
        plain_body = orjson.dumps(encode_request(plain, "claude-sonnet-4-5", stream=True))
        assert plain_body == orjson.dumps(encode_request(off, "claude-sonnet-4-5", stream=True))
        assert b"cache_control" not in plain_body


def test_caching_off_drops_the_users_cache_points() -> None:
    """`enabled=False` removes a user's breakpoints too; no setting keeps them."""
    user = UserMessage(parts=["a long document", CachePoint(), "the question"])
    off = ModelRequest((user,), settings=ModelSettings(cache=CacheSettings(enabled=False)))
    assert breakpoints(encode_request(off, "claude-sonnet-4-5", stream=False)) == 0
    kept = encode_request(ModelRequest((user,)), "claude-sonnet-4-5", stream=False)
    blocks = kept["messages"][0]["content"]
    assert [("cache_control" in block) for block in blocks] == [True, False]
    assert blocks[0]["cache_control"] == {"type": "ephemeral"}


def test_a_one_hour_lifetime_marks_every_breakpoint() -> None:
    """`ttl="1h"`: the last tool, the system block, the user's point and the newest turn all
    say one hour (Anthropic wants the longer lifetimes first: one lifetime keeps that true)."""
    user = UserMessage(parts=["a long document", CachePoint(), "the question"])
    settings = ModelSettings(cache=CacheSettings(ttl="1h"))
    body = encode_request(
        ModelRequest((user,), "Be brief.", tools=(TOOL,), settings=settings),
        "claude-sonnet-4-5",
        stream=False,
    )
    hour = {"type": "ephemeral", "ttl": "1h"}
    assert body["tools"][-1]["cache_control"] == hour
    assert body["system"][0]["cache_control"] == hour
    assert [block["cache_control"] for block in body["messages"][0]["content"]] == [hour, hour]


async def test_every_breakpoint_place_passes_the_sdk_types(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    """Over the wire (the SDK's request types check every body the server receives): a
    breakpoint on a tool, the system block, an image inside a tool result and the newest turn,
    all with the one-hour lifetime."""
    server.reply_with(json_reply(anthropic_json("done")))
    call = ToolCall.of(TOOL.name, {})
    result = ToolMessage(call.id, TOOL.name, parts=[ImagePart(PNG), CachePoint(), "the chart"])
    history = (UserMessage("chart it"), AssistantMessage(tool_calls=[call]), result)
    settings = ModelSettings(cache=CacheSettings(ttl="1h"))
    await anthropic.request(ModelRequest(history, "Be brief.", (TOOL,), settings=settings))
    sent = server.requests[-1].json()
    assert breakpoints(sent) == 4
    image = sent["messages"][-1]["content"][0]["content"][0]
    assert image["type"] == "image"
    assert image["cache_control"] == {"type": "ephemeral", "ttl": "1h"}

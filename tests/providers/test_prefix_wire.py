"""A stable prefix on the wire: over a 50-step run with trimming active, the JSON `messages` of
each request start with the previous request's (byte for byte, serialized; with caching on, the
moving `cache_control` markers aside) except at the steps the run counts as cache breaks, on
Anthropic Messages and OpenAI Chat Completions alike, and Anthropic never gets over four markers."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from reactloop._core._messages import ToolCall
from reactloop._core._state import RunResult
from reactloop._loop._loop import ReActLoop
from reactloop._policies import ContextWindow
from reactloop._providers import AnthropicModel, OpenAIModel
from reactloop.models import CacheSettings, ModelSettings
from reactloop.testing import FakeTool
from tests.providers.render import anthropic_json, openai_json
from tests.providers.wire_server import Request, WireServer, json_reply

pytestmark = pytest.mark.anyio

STEPS = 50
WINDOW = ContextWindow(max_tokens=3_000, reserved_output=500, drop_to=0.6)


def answering(server: WireServer, render: Any) -> None:
    """Each request is answered with one `lookup` call (a fresh id), the 50th with text."""

    def answer(request: Request) -> Any:
        step = len(server.requests)
        if step >= STEPS:
            return json_reply(render("done"))
        call = ToolCall.of("lookup", {"n": step}, id=f"toolu_{step:03d}")
        return json_reply(render(f"looking {step}", [call]))

    server.handler = answer


def unmarked(value: Any) -> Any:
    """`value` without `cache_control` markers: a breakpoint moves to the newest turn each step,
    so the bytes compared are those the markers delimit, not the markers themselves."""
    if isinstance(value, dict):
        return {key: unmarked(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value


def sent_messages(server: WireServer) -> list[list[bytes]]:
    """Each request's `messages`, each message serialized on its own."""
    return [
        [orjson.dumps(unmarked(m)) for m in request.json()["messages"]]
        for request in server.requests
    ]


def assert_prefix_kept_except_at_breaks(server: WireServer, result: RunResult[Any]) -> None:
    bodies = sent_messages(server)
    assert len(bodies) == len(result.steps) == STEPS
    for before, after, step in zip(bodies, bodies[1:], result.steps[1:], strict=False):
        extends = after[: len(before)] == before
        assert step.prefix_breaks == (() if extends else ("trimmed",)), step.index
    assert result.cache_breaks >= 3


def lookup() -> FakeTool:
    return FakeTool("lookup", result="figure " * 60)


async def run_on(model: Any, cache: CacheSettings | None) -> RunResult[Any]:
    loop = ReActLoop(
        model,
        tools=[lookup()],
        context_window=WINDOW,
        max_iterations=STEPS,
        instructions="Look.",
        settings=ModelSettings(cache=cache),
    )
    return await loop.run("go")


CACHING = pytest.mark.parametrize("cache", [None, CacheSettings()], ids=["plain", "cached"])


@CACHING
async def test_anthropic_requests_extend_each_other_except_at_counted_drops(
    server: WireServer, anthropic: AnthropicModel, cache: CacheSettings | None
) -> None:
    answering(server, anthropic_json)
    assert_prefix_kept_except_at_breaks(server, await run_on(anthropic, cache))
    marked = [orjson.dumps(request.json()).count(b"cache_control") for request in server.requests]
    assert max(marked) <= 4 and (min(marked) > 0) == (cache is not None)


@CACHING
async def test_openai_requests_extend_each_other_except_at_counted_drops(
    server: WireServer, openai: OpenAIModel, cache: CacheSettings | None
) -> None:
    answering(server, openai_json)
    assert_prefix_kept_except_at_breaks(server, await run_on(openai, cache))

"""The command line's lines and trace page on recorded Anthropic thinking streams (served over a
loopback socket, tests/fixtures/recorded/anthropic): the streamed thinking becomes one
`thinking:` line before the answer, redacted thinking a `thinking (redacted)` line, and neither
the lines nor the page hold a signature or redacted data."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from reactloop._cli._lines import THOUGHT_CHARS, Kind, Line, Narrator, shorten
from reactloop._cli._timings import Timings
from reactloop._cli._trace import watched_trace, write_trace
from reactloop._core._settings import ModelSettings, ReasoningSettings
from reactloop._core._state import RunResult
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel
from tests.providers.conftest import API_KEY
from tests.providers.recorded import anthropic, anthropic_blocks_of_stream, stream_bytes
from tests.providers.wire_server import WireServer, sse_reply

pytestmark = pytest.mark.anyio

THINKING = ModelSettings(reasoning=ReasoningSettings(budget_tokens=1024))


@pytest.fixture
async def server() -> AsyncIterator[WireServer]:
    async with WireServer.running() as running:
        yield running


async def watched(server: WireServer, model: str, cassette: str) -> tuple[list[Line], Any]:
    """The recorded stream of `cassette` answering one streamed run: the narrator's lines, the
    stream's content blocks and the run's result."""
    (interaction,) = anthropic(cassette)
    raw = stream_bytes(interaction)
    server.reply_with(sse_reply([raw]))
    story, lines = Narrator(lambda: 0.0), []
    async with AnthropicModel(model, api_key=API_KEY, base_url=server.url) as claude:
        loop: ReActLoop[Any] = ReActLoop(claude, settings=THINKING)
        async with loop.stream("How do I cross the street?") as events:
            async for event in events:
                lines += story.watch(event)
            result: RunResult[Any] = await events.result()
    return lines, (anthropic_blocks_of_stream(raw), result)


def opaque_values(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(block[key]) for block in blocks for key in ("signature", "data") if key in block]


async def test_a_recorded_thinking_stream_is_one_thinking_line_before_the_answer(
    server: WireServer,
) -> None:
    lines, (blocks, _) = await watched(
        server, "claude-sonnet-4-0", "test_anthropic_model_thinking_part_stream"
    )
    thinking, said = blocks
    kinds = [line.kind for line in lines]
    assert kinds.count(Kind.THINKING) == 1
    assert kinds.index(Kind.THINKING) + 1 == kinds.index(Kind.MODEL)
    shown = lines[kinds.index(Kind.THINKING)].text
    assert shown == f"thinking: {shorten(thinking['thinking'].strip(), THOUGHT_CHARS)}"
    assert lines[kinds.index(Kind.MODEL)].text == f"model: {shorten(said['text'].strip())}"
    assert not any(value in line.text for line in lines for value in opaque_values(blocks))


async def test_recorded_redacted_thinking_is_said_to_be_redacted_when_its_step_ends(
    server: WireServer,
) -> None:
    lines, (blocks, _) = await watched(
        server, "claude-sonnet-4-5", "test_anthropic_model_thinking_part_redacted_stream"
    )
    thinking = [line.text for line in lines if line.kind is Kind.THINKING]
    assert thinking == ["thinking (redacted)"]
    assert len(opaque_values(blocks)) == 2
    assert not any(value in line.text for line in lines for value in opaque_values(blocks))


@pytest.mark.parametrize(
    ("model", "cassette"),
    [
        ("claude-sonnet-4-0", "test_anthropic_model_thinking_part_stream"),
        ("claude-sonnet-4-5", "test_anthropic_model_thinking_part_redacted_stream"),
    ],
)
async def test_a_watched_runs_trace_page_holds_no_recorded_opaque_value(
    server: WireServer, model: str, cassette: str
) -> None:
    _, (blocks, result) = await watched(server, model, cassette)
    page = write_trace(watched_trace(result, "How do I cross the street?", Timings(lambda: 0.0)))
    assert "thinking" in page
    assert opaque_values(blocks)
    assert not any(value in page for value in opaque_values(blocks))

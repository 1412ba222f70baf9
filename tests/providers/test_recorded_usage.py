"""Usage decoded from recorded vendor traffic (tests/fixtures/recorded, see its README): the same
meaning on every provider. `input_tokens` is the whole input, cache reads and writes included and
also reported apart; reasoning/thinking tokens are reported apart, counted inside the output.
Each recorded response is served over the loopback server, streams whole, one event per chunk and
split at odd byte offsets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from reactloop._core._contracts import Model
from reactloop._core._messages import ModelDelta, ModelRequest, Usage, UserMessage
from reactloop._providers import AnthropicModel, OpenAIModel
from tests.providers.conftest import FIXTURES
from tests.providers.wire_server import WireServer, events_of, json_reply, split_at, sse_reply

pytestmark = pytest.mark.anyio

RECORDED = FIXTURES / "recorded"
REQUEST = ModelRequest((UserMessage("Hello"),))
ODD_OFFSETS = (1, 3, 17, 101, 257, 1009, 4099)


def responses(path: Path) -> list[dict[str, Any]]:
    """The recorded responses of a cassette, in order."""
    cassette = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [interaction["response"] for interaction in cassette["interactions"]]


async def _ignore(delta: ModelDelta) -> None:
    return None


async def served_whole(server: WireServer, model: Model, response: dict[str, Any]) -> Usage:
    server.reply_with(json_reply(response["parsed_body"]))
    return (await model.request(REQUEST)).usage


async def served_streamed(server: WireServer, model: Model, raw: bytes) -> list[Usage]:
    """The usage of the stream served three ways: whole, an event per chunk, cut at odd bytes."""
    usages = []
    for chunks in ([raw], events_of(raw), split_at(raw, [n for n in ODD_OFFSETS if n < len(raw)])):
        server.reply_with(sse_reply(chunks))
        usages.append((await model.stream(REQUEST, _ignore)).usage)
    return usages


def _stream_bytes(path: Path) -> bytes:
    return str(responses(path)[0]["body"]["string"]).encode()


async def test_openai_prompt_cache_write_then_read(server: WireServer, openai: OpenAIModel) -> None:
    """Chat Completions: `prompt_tokens` (4,020) already holds the cached part; the first call
    wrote 4,012 tokens to the cache (`prompt_tokens_details.cache_write_tokens`), the second
    read them (`cached_tokens`)."""
    first, second = responses(RECORDED / "openai-chat" / "test_openai_chat_prompt_cache_e2e.yaml")
    written = await served_whole(server, openai, first)
    read = await served_whole(server, openai, second)
    assert written == Usage(input_tokens=4020, output_tokens=4, cache_write_tokens=4012)
    assert read == Usage(input_tokens=4020, output_tokens=4, cache_read_tokens=4012)
    assert written.uncached_input_tokens == read.uncached_input_tokens == 8


async def test_openai_cache_write_reported_at_the_top_level(
    server: WireServer, openai: OpenAIModel
) -> None:
    """A server that reports `cache_write_tokens` beside `prompt_tokens` rather than in its
    details (the recorded first answer, the figure moved): read from there too."""
    first = responses(RECORDED / "openai-chat" / "test_openai_chat_prompt_cache_e2e.yaml")[0]
    body = orjson.loads(orjson.dumps(first["parsed_body"]))
    body["usage"]["cache_write_tokens"] = body["usage"]["prompt_tokens_details"].pop(
        "cache_write_tokens"
    )
    usage = await served_whole(server, openai, {"parsed_body": body})
    assert usage == Usage(input_tokens=4020, output_tokens=4, cache_write_tokens=4012)


async def test_openai_compatible_reasoning_tokens(server: WireServer, openai: OpenAIModel) -> None:
    """`completion_tokens_details.reasoning_tokens` (DeepSeek's reasoner on the same wire),
    counted inside `completion_tokens`: non-streamed and streamed (the final usage chunk)."""
    (whole,) = responses(RECORDED / "deepseek" / "test_deepseek_model_thinking_part.yaml")
    assert await served_whole(server, openai, whole) == Usage(
        input_tokens=12, output_tokens=789, reasoning_tokens=415
    )
    raw = _stream_bytes(RECORDED / "deepseek" / "test_deepseek_model_thinking_stream.yaml")
    for usage in await served_streamed(server, openai, raw):
        assert usage == Usage(input_tokens=6, output_tokens=212, reasoning_tokens=198)


async def test_anthropic_input_includes_cache_reads_and_writes(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    """Anthropic's `input_tokens` (3) leaves the cache out; reactloop's adds the cache read
    (1,111) and the cache write (418, all of it with the five-minute lifetime)."""
    first, second = responses(RECORDED / "anthropic" / "test_anthropic_cache_real_api.yaml")
    assert await served_whole(server, anthropic, first) == Usage(
        input_tokens=1114, output_tokens=406, cache_read_tokens=1111
    )
    usage = await served_whole(server, anthropic, second)
    assert usage == Usage(
        input_tokens=1532, output_tokens=33, cache_read_tokens=1111, cache_write_tokens=418
    )
    assert usage.uncached_input_tokens == 3


async def test_anthropic_one_hour_cache_writes_are_told_apart(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    """The ttl breakdown (`usage.cache_creation`): the recording's second answer with its 418
    written tokens moved to the one-hour lifetime, as the API reports a one-hour breakpoint."""
    body = responses(RECORDED / "anthropic" / "test_anthropic_cache_real_api.yaml")[1]
    body = orjson.loads(orjson.dumps(body["parsed_body"]))
    body["usage"]["cache_creation"] = {
        "ephemeral_1h_input_tokens": 418,
        "ephemeral_5m_input_tokens": 0,
    }
    usage = await served_whole(server, anthropic, {"parsed_body": body})
    assert (usage.cache_write_tokens, usage.cache_write_1h_tokens) == (418, 418)


async def test_anthropic_thinking_tokens(server: WireServer, anthropic: AnthropicModel) -> None:
    """Opus 5 reports `output_tokens_details.thinking_tokens` (33 of the 44 output tokens)."""
    (whole,) = responses(RECORDED / "anthropic" / "test_anthropic_opus_5_features.yaml")
    assert await served_whole(server, anthropic, whole) == Usage(
        input_tokens=13, output_tokens=44, reasoning_tokens=33
    )


async def test_anthropic_streamed_usage(server: WireServer, anthropic: AnthropicModel) -> None:
    """A recorded thinking stream: input from `message_start`, output from `message_delta`."""
    raw = _stream_bytes(RECORDED / "anthropic" / "test_anthropic_model_thinking_part_stream.yaml")
    for usage in await served_streamed(server, anthropic, raw):
        assert usage == Usage(input_tokens=43, output_tokens=282)


async def test_anthropic_streamed_cache_figures_survive_the_final_delta(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    """The recorded stream with the cache figures of the recorded cache exchange in its
    `message_start` (no recorded stream read a cache) and a `message_delta` that reports only
    `output_tokens`, as the API may: the cache figures and the total input are kept."""
    raw = _stream_bytes(RECORDED / "anthropic" / "test_anthropic_model_thinking_part_stream.yaml")
    start = b'"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation"'
    assert raw.count(start) == 1
    raw = raw.replace(
        start, b'"cache_creation_input_tokens":418,"cache_read_input_tokens":1111,"cache_creation"'
    )
    delta = (
        b'"usage":{"input_tokens":43,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,'
    )
    assert raw.count(delta) == 1
    raw = raw.replace(delta, b'"usage":{')
    for usage in await served_streamed(server, anthropic, raw):
        assert usage == Usage(
            input_tokens=43 + 1111 + 418,
            output_tokens=282,
            cache_read_tokens=1111,
            cache_write_tokens=418,
        )


def test_usage_adds_every_field() -> None:
    one = Usage(10, 5, 2, 3, 1, 3)
    assert one + one == Usage(20, 10, 4, 6, 2, 6)
    assert (one + Usage()).total_tokens == 15

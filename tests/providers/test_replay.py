"""Every recorded wire fixture, replayed over a real socket: one SSE event per chunk, then split
at arbitrary byte positions; the provider must produce the same typed response every time."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from attrs import frozen
from hypothesis import HealthCheck, given, settings

from reactloop._core._contracts import Model
from reactloop._core._messages import (
    FinishReason,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    UserMessage,
)
from reactloop._errors import ModelError, ProviderUnavailableError
from reactloop._providers import AnthropicModel, OpenAIModel
from tests.helpers.strategies import Cuts, cuts, examples
from tests.providers.conftest import WIRE
from tests.providers.wire_server import WireServer, events_of, json_reply, split_at, sse_reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest((UserMessage("What is the weather?"),))
STREAMS = sorted(WIRE.glob("*/*.sse"))
RAW = {path: path.read_bytes() for path in WIRE.glob("*/*")}
Outcome = ModelResponse | tuple[type[ModelError], str]


@frozen
class Expect:
    """The facts a fixture must decode to."""

    finish: FinishReason
    text: str = ""
    calls: tuple[tuple[str, str], ...] = ()
    usage: tuple[int, int] | None = None
    refusal: str | None = None


GB = '{"city": "Edinburgh", "country": "GB", "units": "c"}'
AAPL = '{"ticker": "AAPL", "exchange": "NASDAQ"}'
TICKET = '{"title":"Login page times out for EU users","priority":"high","tags":["login","eu"]'
TICKET_OPENAI = TICKET + ',"assignee":null,"estimate_hours":null}'
TICKET_ANTHROPIC = TICKET + "}"
SF_TEXT = '\n  {\n    "location": "San Francisco, CA",'
EXPECTED = {
    "stream_parallel_tool_calls.sse": Expect(
        FinishReason.TOOL_CALLS, calls=(("GetWeatherArgs", GB), ("get_stock_price", AAPL)),
        usage=(149, 60),
    ),
    "stream_recorded_01.sse": Expect(
        FinishReason.REFUSAL, refusal="I'm sorry, I can't assist with that request."
    ),
    "stream_recorded_02.sse": Expect(
        FinishReason.TOOL_CALLS, calls=(("get_weather", '{"city":"New York City"}'),),
        usage=(44, 16),
    ),
    "stream_recorded_03.sse": Expect(FinishReason.LENGTH, text='{"', usage=(79, 1)),
    "stream_recorded_04.sse": Expect(
        FinishReason.REFUSAL, refusal="I'm very sorry, but I can't assist with that."
    ),
    "stream_recorded_05.sse": Expect(
        FinishReason.STOP, text='{"city":"San Francisco","temperature":61,"units":"f"}'
    ),
    "stream_recorded_06.sse": Expect(FinishReason.STOP, text="Foo!", usage=(9, 2)),
    "stream_recorded_07.sse": Expect(
        FinishReason.TOOL_CALLS,
        calls=(("get_weather", '{"city":"San Francisco","state":"CA"}'),),
    ),
    "stream_recorded_08.sse": Expect(
        FinishReason.STOP, text='{"city":"San Francisco","temperature":65,"units":"f"}',
        usage=(79, 42),
    ),
    "stream_recorded_09.sse": Expect(
        FinishReason.TOOL_CALLS,
        calls=(("GetWeatherArgs", '{"city":"Edinburgh","country":"UK","units":"c"}'),),
    ),
    "stream_recorded_10.sse": Expect(FinishReason.STOP, text=SF_TEXT, usage=(19, 177)),
    "stream_recorded_11.sse": Expect(
        FinishReason.STOP, text="I'm unable to provide real-time weather updates."
    ),
    "stream_text_then_tool_calls.synthetic.sse": Expect(
        FinishReason.TOOL_CALLS, text="Let me check both.",
        calls=(("get_weather", '{"city": "Edinburgh"}'), ("get_stock_price", '{"ticker": "AAPL"}')),
    ),
    "stream_basic_response.sse": Expect(FinishReason.STOP, text="Hello there!", usage=(11, 6)),
    "stream_incomplete_partial_json_response.sse": Expect(
        FinishReason.LENGTH, text="I'll create a comprehensive tax guide", usage=(450, 124)
    ),
    "stream_refusal_response.sse": Expect(
        FinishReason.REFUSAL, refusal="This request was refused due to policy."
    ),
    "stream_json_schema_answer.synthetic.sse": Expect(
        FinishReason.STOP, text=TICKET_OPENAI, usage=(96, 31)
    ),
    "stream_output_format_answer.synthetic.sse": Expect(
        FinishReason.STOP, text=TICKET_ANTHROPIC, usage=(412, 38)
    ),
    "stream_text_tool_use.sse": Expect(
        FinishReason.TOOL_CALLS, text="I'll check the current weather in Paris for you.",
        calls=(("get_weather", '{"location": "Paris"}'),), usage=(377, 65),
    ),
}  # fmt: skip


def test_every_recorded_stream_is_kept_inside_the_project() -> None:
    project = Path(__file__).resolve().parents[2]
    assert WIRE.is_relative_to(project)
    error_stream = "stream_midstream_error.synthetic.sse"
    assert sorted(path.name for path in STREAMS) == sorted([*EXPECTED, error_stream])


def _model(path: Path, openai: OpenAIModel, anthropic: AnthropicModel) -> Model:
    return openai if path.parent.name == "openai" else anthropic


async def replay(
    server: WireServer, model: Model, chunks: list[bytes]
) -> tuple[Outcome, list[ModelDelta]]:
    server.reply_with(sse_reply(chunks))
    deltas: list[ModelDelta] = []

    async def sink(delta: ModelDelta) -> None:
        deltas.append(delta)

    try:
        return await model.stream(REQUEST, sink), deltas
    except ModelError as error:
        return (type(error), str(error)), deltas


def check(expect: Expect, response: ModelResponse) -> None:
    message = response.message
    assert response.finish_reason is expect.finish
    assert message.text.startswith(expect.text)
    assert bool(message.text) == bool(expect.text)
    assert [(call.name, call.arguments) for call in message.tool_calls] == list(expect.calls)
    assert message.refusal == expect.refusal
    if expect.usage is not None:
        assert (response.usage.input_tokens, response.usage.output_tokens) == expect.usage


def check_deltas(response: ModelResponse, deltas: list[ModelDelta]) -> None:
    """The streamed pieces add up to the returned answer."""
    text = "".join(d.text for d in deltas if isinstance(d, TextDelta))
    assert text == response.message.text
    for index, call in enumerate(response.message.tool_calls):
        pieces = [d for d in deltas if isinstance(d, ToolCallDelta) and d.index == index]
        assert "".join(d.arguments_delta for d in pieces) == call.arguments
        assert (pieces[0].id, pieces[0].name) == (call.id, call.name)


@pytest.mark.parametrize("path", STREAMS, ids=lambda path: path.name)
async def test_each_event_as_its_own_chunk(
    path: Path, server: WireServer, openai: OpenAIModel, anthropic: AnthropicModel
) -> None:
    outcome, deltas = await replay(server, _model(path, openai, anthropic), events_of(RAW[path]))
    if path.name == "stream_midstream_error.synthetic.sse":
        assert isinstance(outcome, tuple)
        assert outcome[0] is ProviderUnavailableError
        return
    assert isinstance(outcome, ModelResponse)
    check(EXPECTED[path.name], outcome)
    check_deltas(outcome, deltas)


async def test_the_mid_stream_error_carries_its_type(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    raw = RAW[WIRE / "anthropic" / "stream_midstream_error.synthetic.sse"]
    server.reply_with(sse_reply(events_of(raw)))
    with pytest.raises(ProviderUnavailableError, match="overloaded_error") as caught:
        await anthropic.stream(REQUEST, _ignore)
    assert (caught.value.status, caught.value.provider) == (529, "anthropic")


async def _ignore(delta: ModelDelta) -> None:
    return None


_baselines: dict[str, tuple[Outcome, list[ModelDelta]]] = {}


@pytest.mark.parametrize("path", STREAMS, ids=lambda path: path.name)
@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(where=cuts)
async def test_any_split_gives_the_same_response(
    path: Path, server: WireServer, openai: OpenAIModel, anthropic: AnthropicModel, where: Cuts
) -> None:
    raw, model = RAW[path], _model(path, openai, anthropic)
    if path.name not in _baselines:
        _baselines[path.name] = await replay(server, model, events_of(raw))
    chunks = split_at(raw, where.points(len(raw)))
    assert await replay(server, model, chunks) == _baselines[path.name]


async def test_openai_whole_completion(server: WireServer, openai: OpenAIModel) -> None:
    body = orjson.loads(RAW[WIRE / "openai" / "nonstream_parallel_tool_calls.json"])
    server.reply_with(json_reply(body))
    response = await openai.request(REQUEST)
    check(EXPECTED["stream_parallel_tool_calls.sse"], response)
    assert response.message.tool_calls[0].id == "call_fdNz3vOBKYgOIpMdWotB9MjY"


async def test_anthropic_whole_message(server: WireServer, anthropic: AnthropicModel) -> None:
    body = orjson.loads(RAW[WIRE / "anthropic" / "nonstream_text_tool_use.json"])
    server.reply_with(json_reply(body))
    response = await anthropic.request(REQUEST)
    expect = Expect(
        FinishReason.TOOL_CALLS,
        text="Now let me check New York.",
        calls=(("get_weather", '{"location":"New York, NY","units":"f"}'),),
        usage=(834, 81),
    )
    check(expect, response)
    assert response.model == "claude-haiku-4-5-20251001"


WHOLE = sorted(WIRE.glob("*/nonstream_*.json"))
ANSWERED = [path for path in STREAMS if "midstream_error" not in path.name]


def _recorded_id(path: Path) -> str:
    """The response id the recorded bytes carry: a whole body's `id`, an OpenAI chunk's `id`, an
    Anthropic `message_start`'s message id."""
    if path.suffix == ".json":
        found: str = orjson.loads(RAW[path])["id"]
        return found
    for line in RAW[path].decode().splitlines():
        data = orjson.loads(line[6:]) if line.startswith("data: {") else {}
        inner = data.get("message", {}) if data.get("type") == "message_start" else data
        if isinstance(inner.get("id"), str):
            return str(inner["id"])
    raise AssertionError(f"{path.name} carries no response id")


@pytest.mark.parametrize("path", ANSWERED + WHOLE, ids=lambda path: path.name)
async def test_the_response_carries_the_providers_own_id_streamed_or_not(
    path: Path, server: WireServer, openai: OpenAIModel, anthropic: AnthropicModel
) -> None:
    model = _model(path, openai, anthropic)
    if path.suffix == ".json":
        server.reply_with(json_reply(orjson.loads(RAW[path])))
        response = await model.request(REQUEST)
    else:
        outcome, _ = await replay(server, model, events_of(RAW[path]))
        assert isinstance(outcome, ModelResponse)
        response = outcome
    assert response.id == _recorded_id(path)

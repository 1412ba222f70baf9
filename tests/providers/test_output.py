"""Structured output over real HTTP on both providers: each strategy's request (checked against
the provider's protocol) and the typed answer, streamed and not, after a tool step, including an
answer that is sent back once before a valid one."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal, TypedDict

import attrs
import orjson
import pytest

from reactloop._core._events import OutputStreamed
from reactloop._core._messages import ToolCall
from reactloop._errors import StrictSchemaError
from reactloop._loop._loop import ReActLoop
from reactloop._output._spec import FINAL_TOOL, OutputRetry, OutputStrategy
from reactloop._providers import AnthropicModel, OpenAIModel
from reactloop.output import OutputOptions
from tests.providers.protocol import OpenAIRequestSchema, check_anthropic_request
from tests.providers.render import anthropic_json, anthropic_stream, openai_json, openai_stream
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio


@attrs.frozen
class Forecast:
    city: str
    celsius: int
    rain: bool = False


ANSWER = {"city": "Paris", "celsius": 18}
WEATHER = ToolCall("get_weather", '{"city": "Paris"}', "call_1")


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    return "18 C, dry"


def final_step(
    strategy: OutputStrategy, answer: dict[str, Any]
) -> tuple[str, tuple[ToolCall, ...]]:
    """What the model says last: the final-answer tool call, or the JSON as text."""
    if strategy is OutputStrategy.TOOL:
        return "", (ToolCall(FINAL_TOOL, orjson.dumps(answer).decode(), "call_9"),)
    return orjson.dumps(answer).decode(), ()


def scripted(
    strategy: OutputStrategy,
    streamed: Callable[..., list[bytes]],
    whole: Callable[..., object],
    answers: list[dict[str, Any]],
) -> Callable[[Request], Reply]:
    """A tool step first, then the given answers in turn."""
    steps = [("", (WEATHER,)), *(final_step(strategy, answer) for answer in answers)]

    def answer(request: Request) -> Reply:
        text, calls = steps.pop(0)
        if request.json().get("stream"):
            return sse_reply(streamed(text, calls))
        return json_reply(whole(text, calls))

    return answer


async def structured(
    model: OpenAIModel | AnthropicModel, strategy: OutputStrategy, stream: bool
) -> Forecast | None:
    loop = ReActLoop(
        model, tools=[get_weather], output_type=Forecast, output=OutputOptions(strategy=strategy)
    )
    if not stream:
        result = await loop.run("Forecast for Paris?")
        assert result.error is None
        return result.output
    async with loop.stream("Forecast for Paris?") as events:
        async for _ in events:
            pass
    streamed = await events.result()
    assert streamed.error is None and isinstance(streamed.output, Forecast | None)
    return streamed.output


STRATEGIES = [OutputStrategy.NATIVE, OutputStrategy.TOOL, OutputStrategy.PROMPTED]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_openai_ends_with_the_typed_answer(
    server: WireServer,
    openai: OpenAIModel,
    openai_schema: OpenAIRequestSchema,
    strategy: OutputStrategy,
    stream: bool,
) -> None:
    server.handler = scripted(strategy, openai_stream, openai_json, [ANSWER])
    assert await structured(openai, strategy, stream) == Forecast("Paris", 18)
    bodies = [request.json() for request in server.requests]
    for body in bodies:
        openai_schema.check(body)
    check_openai_strategy(strategy, bodies[-1])


def check_openai_strategy(strategy: OutputStrategy, body: dict[str, Any]) -> None:
    tools = [tool["function"]["name"] for tool in body.get("tools", [])]
    if strategy is OutputStrategy.NATIVE:
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        schema = fmt["json_schema"]["schema"]
        assert set(schema["properties"]) == set(schema["required"]) == {"city", "celsius", "rain"}
        assert schema["additionalProperties"] is False
    else:
        assert "response_format" not in body
    assert (FINAL_TOOL in tools) is (strategy is OutputStrategy.TOOL)
    system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
    assert ('"celsius"' in system) is (strategy is OutputStrategy.PROMPTED)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_anthropic_ends_with_the_typed_answer(
    server: WireServer, anthropic: AnthropicModel, strategy: OutputStrategy, stream: bool
) -> None:
    server.handler = scripted(strategy, anthropic_stream, anthropic_json, [ANSWER])
    assert await structured(anthropic, strategy, stream) == Forecast("Paris", 18)
    bodies = [request.json() for request in server.requests]
    for body in bodies:
        check_anthropic_request(body)
    last = bodies[-1]
    native = strategy is OutputStrategy.NATIVE
    assert ("output_config" in last) is native
    if native:
        assert last["output_config"]["format"]["type"] == "json_schema"
    tools = [tool["name"] for tool in last.get("tools", [])]
    assert (FINAL_TOOL in tools) is (strategy is OutputStrategy.TOOL)
    assert ('"celsius"' in last.get("system", "")) is (strategy is OutputStrategy.PROMPTED)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_an_invalid_answer_is_sent_back_once_then_the_valid_one_ends(
    server: WireServer, openai: OpenAIModel, strategy: OutputStrategy
) -> None:
    wrong = {"city": "Paris", "celsius": "warm"}
    server.handler = scripted(strategy, openai_stream, openai_json, [wrong, ANSWER])
    assert await structured(openai, strategy, stream=False) == Forecast("Paris", 18)
    retry = server.requests[2].json()["messages"][-1]
    assert "celsius" in str(retry["content"]) and "integer" in str(retry["content"])


async def test_auto_picks_native_on_openai_and_the_tool_on_a_compatible_server(
    server: WireServer,
) -> None:
    async with OpenAIModel("m", api_key="k", base_url=f"{server.url}/v1") as own:
        assert ReActLoop(own, output_type=Forecast).config.output is not None
    compatible = OpenAIModel("m", base_url=f"{server.url}/v1", provider="openai-compatible")
    async with compatible:
        for model, expected in ((own, OutputStrategy.NATIVE), (compatible, OutputStrategy.TOOL)):
            output = ReActLoop(model, output_type=Forecast).config.output
            assert output is not None and output.strategy is expected


async def test_a_type_strict_mode_cannot_express_falls_back_to_the_tool_unless_native_is_asked(
    openai: OpenAIModel,
) -> None:
    output = ReActLoop(openai, output_type=dict[str, int]).config.output
    assert output is not None and output.strategy is OutputStrategy.TOOL
    with pytest.raises(StrictSchemaError) as caught:
        ReActLoop(
            openai, output_type=dict[str, int], output=OutputOptions(strategy=OutputStrategy.NATIVE)
        )
    assert caught.value.provider == "OpenAI" and caught.value.location == "#"


@attrs.frozen
class Cat:
    kind: Literal["cat"]
    name: str


@attrs.frozen
class Dog:
    kind: Literal["dog"]
    name: str


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Span:
    start: int
    end: int = 0


KINDS: list[tuple[Any, Any, Any]] = [
    (int, 42, 42),
    (list[str], ["a", "b"], ["a", "b"]),
    (Literal["yes", "no"], "no", "no"),
    (Cat | Dog, {"kind": "dog", "name": "Rex"}, Dog("dog", "Rex")),
    (Point, {"x": 1, "y": 2}, {"x": 1, "y": 2}),
    (Span, {"start": 3}, Span(3)),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}, {"a": 1}),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: repr(kind[0])[:24])
async def test_every_kind_of_type_over_http(
    server: WireServer,
    anthropic: AnthropicModel,
    strategy: OutputStrategy,
    kind: tuple[Any, Any, Any],
) -> None:
    output_type, value, expected = kind
    loop = ReActLoop[Any](
        anthropic, output_type=output_type, output=OutputOptions(strategy=strategy)
    )
    spec = loop.config.output
    assert spec is not None
    bare = strategy is OutputStrategy.PROMPTED or not spec.spec.wrapped
    answer = value if bare else {"result": value}
    text, calls = final_step(strategy, answer)
    server.reply_with(json_reply(anthropic_json(text, calls)))
    result = await loop.run("go")
    assert result.error is None and result.output == expected


async def test_a_validator_retry_over_http(server: WireServer, openai: OpenAIModel) -> None:
    def not_too_cold(forecast: Forecast) -> Forecast:
        if forecast.celsius < 0:
            raise OutputRetry("below zero is not plausible in Paris in June")
        return forecast

    cold = {"city": "Paris", "celsius": -40}
    server.handler = scripted(OutputStrategy.TOOL, openai_stream, openai_json, [cold, ANSWER])
    loop = ReActLoop(
        openai,
        tools=[get_weather],
        output_type=Forecast,
        output=OutputOptions(strategy=OutputStrategy.TOOL, validators=[not_too_cold]),
    )
    result = await loop.run("Forecast?")
    assert result.output == Forecast("Paris", 18)
    retry = server.requests[2].json()["messages"][-1]
    assert retry["role"] == "tool" and "not plausible" in retry["content"]


async def test_a_capped_run_forces_the_final_answer_tool_over_http(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    server.handler = scripted(OutputStrategy.TOOL, anthropic_stream, anthropic_json, [ANSWER])
    tool_output = OutputOptions(strategy=OutputStrategy.TOOL)
    loop = ReActLoop(anthropic, tools=[get_weather], output_type=Forecast,
                     output=tool_output, max_iterations=1)  # fmt: skip
    result = await loop.run("Forecast?")
    last = server.requests[-1].json()
    check_anthropic_request(last)
    assert [tool["name"] for tool in last["tools"]] == [FINAL_TOOL]
    assert last["tool_choice"] == {"type": "tool", "name": FINAL_TOOL}
    assert result.output == Forecast("Paris", 18)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_partial_answers_stream_over_http(
    server: WireServer, openai: OpenAIModel, strategy: OutputStrategy
) -> None:
    server.handler = scripted(strategy, openai_stream, openai_json, [ANSWER])
    loop = ReActLoop(
        openai, tools=[get_weather], output_type=Forecast, output=OutputOptions(strategy=strategy)
    )
    async with loop.stream("Forecast?") as events:
        partials = [e.partial async for e in events if isinstance(e, OutputStreamed)]
    result = await events.result()
    assert partials and partials[-1] == ANSWER and result.output == Forecast("Paris", 18)
    assert all(set(p) <= set(ANSWER) for p in partials)

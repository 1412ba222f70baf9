"""Structured output over real HTTP on the Responses provider, as on the other providers: each
strategy's request (checked against the vendor's definitions) and the typed answer, streamed and
not, after a tool step; an invalid answer sent back once; AUTO's choice; partial answers."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop._core._events import OutputStreamed
from reactloop._loop._loop import ReActLoop
from reactloop._output._spec import FINAL_TOOL, OutputStrategy
from reactloop._providers import OpenAIResponsesModel
from reactloop.output import OutputOptions
from tests.helpers.vendor_schemas import check_openai_responses_body
from tests.providers.render_responses import responses_json, responses_stream
from tests.providers.test_output import (
    ANSWER,
    STRATEGIES,
    Forecast,
    get_weather,
    scripted,
    structured,
)
from tests.providers.wire_server import WireServer

pytestmark = pytest.mark.anyio


def check_strategy(strategy: OutputStrategy, body: dict[str, Any]) -> None:
    tools = [tool["name"] for tool in body.get("tools", [])]
    if strategy is OutputStrategy.NATIVE:
        fmt = body["text"]["format"]
        assert (fmt["type"], fmt["strict"]) == ("json_schema", True)
        schema = fmt["schema"]
        assert set(schema["properties"]) == set(schema["required"]) == {"city", "celsius", "rain"}
        assert schema["additionalProperties"] is False
    else:
        assert "text" not in body
    assert (FINAL_TOOL in tools) is (strategy is OutputStrategy.TOOL)
    assert ('"celsius"' in body.get("instructions", "")) is (strategy is OutputStrategy.PROMPTED)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_ends_with_the_typed_answer(
    server: WireServer, responses: OpenAIResponsesModel, strategy: OutputStrategy, stream: bool
) -> None:
    server.handler = scripted(strategy, responses_stream, responses_json, [ANSWER])
    assert await structured(responses, strategy, stream) == Forecast("Paris", 18)  # type: ignore[arg-type]
    bodies = [request.json() for request in server.requests]
    for body in bodies:
        check_openai_responses_body(body)
    check_strategy(strategy, bodies[-1])


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_an_invalid_answer_is_sent_back_once_then_the_valid_one_ends(
    server: WireServer, responses: OpenAIResponsesModel, strategy: OutputStrategy
) -> None:
    wrong = {"city": "Paris", "celsius": "warm"}
    server.handler = scripted(strategy, responses_stream, responses_json, [wrong, ANSWER])
    assert await structured(responses, strategy, stream=False) == Forecast("Paris", 18)  # type: ignore[arg-type]
    retry = server.requests[2].json()["input"][-1]
    said = str(retry.get("content", retry.get("output")))
    assert "celsius" in said and "integer" in said


async def test_auto_picks_native(responses: OpenAIResponsesModel) -> None:
    output = ReActLoop(responses, output_type=Forecast).config.output
    assert output is not None and output.strategy is OutputStrategy.NATIVE


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_partial_answers_stream_over_http(
    server: WireServer, responses: OpenAIResponsesModel, strategy: OutputStrategy
) -> None:
    server.handler = scripted(strategy, responses_stream, responses_json, [ANSWER])
    loop = ReActLoop(
        responses,
        tools=[get_weather],
        output_type=Forecast,
        output=OutputOptions(strategy=strategy),
    )
    async with loop.stream("Forecast?") as events:
        partials = [e.partial async for e in events if isinstance(e, OutputStreamed)]
    result = await events.result()
    assert partials and partials[-1] == ANSWER and result.output == Forecast("Paris", 18)

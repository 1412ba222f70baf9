"""`ReActLoop` end to end on the OpenAI Responses provider, over the loopback server: the same
matrix as the other providers (three tool steps with parallel calls, streamed and not, a model
string, a retried 429, a 401 that ends the run), every request checked against the vendor's own
definitions, and reasoning items sent back before the item that followed them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reactloop._core._decisions import StopReason
from reactloop._core._events import ReasoningStreamed, TextStreamed, ToolCallStreamed
from reactloop._loop._loop import ReActLoop
from reactloop._providers import OpenAIResponsesModel
from tests.helpers.vendor_schemas import check_openai_responses_body
from tests.providers.conftest import API_KEY
from tests.providers.render_responses import responses_json, responses_stream
from tests.providers.test_loop import (
    FINAL,
    STEPS,
    check_result,
    failing_first,
    get_time,
    get_weather,
    run_both_ways,
)
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio


def results_in(request: Request) -> int:
    """How many tool results the request's input carries."""
    return sum(item.get("type") == "function_call_output" for item in request.json()["input"])


def conversation(reasoning: bool = True) -> Callable[[Request], Reply]:
    """Answer by how far the conversation got, each answer led by a reasoning item."""
    by_results = {0: STEPS[0], 1: STEPS[1], 3: STEPS[2], 4: STEPS[3]}

    def answer(request: Request) -> Reply:
        text, calls = by_results[results_in(request)]
        if request.json().get("stream"):
            return sse_reply(responses_stream(text, calls, reasoning=reasoning))
        return json_reply(responses_json(text, calls, reasoning=reasoning))

    return answer


def check_request(request: Request) -> dict[str, Any]:
    body = request.json()
    check_openai_responses_body(body)
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    return body


async def test_runs_three_tool_steps_streamed_and_not(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    server.handler = conversation()
    _, events = await run_both_ways(ReActLoop(responses, tools=[get_weather, get_time]))
    texts = "".join(e.text for e in events if isinstance(e, TextStreamed))
    assert texts == "Let me look.One more check." + FINAL
    names = {e.name for e in events if isinstance(e, ToolCallStreamed) and e.name}
    assert names == {"get_weather", "get_time"}
    assert any(isinstance(e, ReasoningStreamed) for e in events)
    assert len(server.requests) == 8
    for request in server.requests:
        check_request(request)


async def test_the_parallel_calls_and_their_results_go_back_in_order(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    server.handler = conversation()
    await ReActLoop(responses, tools=[get_weather, get_time]).run("Weather and time?")
    third = check_request(server.requests[2])["input"]
    kinds = [item.get("type", item.get("role")) for item in third]
    assert kinds == [
        "user",
        "reasoning", "message", "function_call", "function_call_output",
        "reasoning", "function_call", "function_call", "function_call_output",
        "function_call_output",
    ]  # fmt: skip
    calls = [item["call_id"] for item in third if item.get("type") == "function_call"]
    outputs = [item["call_id"] for item in third if item.get("type") == "function_call_output"]
    assert calls == outputs == ["call_1", "call_2", "call_3"]


async def test_each_reasoning_item_goes_back_unchanged_before_its_item(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    server.handler = conversation()
    await ReActLoop(responses, tools=[get_weather, get_time]).run("Weather?")
    second = check_request(server.requests[1])["input"]
    sent = responses_json(*STEPS[0], reasoning=True)["output"]
    assert second[1] == sent[0]  # the reasoning item, encrypted content and all
    assert second[2]["id"] == "msg_1" and second[3]["id"] == "fc_1"


async def test_a_model_string_drives_the_loop(
    server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    server.handler = conversation(reasoning=False)
    loop = ReActLoop(model="openai-responses:gpt-5-mini", tools=[get_weather, get_time])
    model = loop.config.model
    assert isinstance(model, OpenAIResponsesModel)
    try:
        result, _ = await run_both_ways(loop)
    finally:
        await model.aclose()
    assert result.output == FINAL
    assert server.requests[0].json()["model"] == "gpt-5-mini"
    assert server.requests[0].headers["authorization"] == "Bearer sk-env"


async def test_a_429_is_retried_after_its_wait_and_the_run_completes(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    error = {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}
    busy = json_reply({"error": error}, 429, [("retry-after", "2")])
    server.handler = failing_first(busy, conversation())
    loop = ReActLoop(responses, tools=[get_weather, get_time], sleep=sleep)
    check_result(await loop.run("Weather?"))
    assert waits == [2.0] and len(server.requests) == 5


async def test_a_401_is_not_retried_and_fails_the_run(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    denied = {"error": {"message": "bad key", "type": "invalid_request_error", "code": None}}
    server.handler = failing_first(json_reply(denied, 401), conversation())
    result = await ReActLoop(responses, tools=[get_weather, get_time]).run("Weather?")
    assert result.stop_reason is StopReason.ERROR and len(server.requests) == 1
    assert result.error is not None and result.error.code.value == "authentication"


async def test_previous_response_mode_chains_the_run(server: WireServer) -> None:
    answered: list[int] = []

    def answer(request: Request) -> Reply:
        text, calls = STEPS[len(answered)]
        answered.append(1)
        rid = f"resp_{len(answered)}"
        return json_reply(responses_json(text, calls, reasoning=True, response_id=rid))

    server.handler = answer
    url = f"{server.url}/v1"
    mode = "previous_response"
    async with OpenAIResponsesModel(
        "gpt-5", api_key=API_KEY, base_url=url, conversation=mode
    ) as model:
        check_result(await ReActLoop(model, tools=[get_weather, get_time]).run("Weather?"))
    bodies = [request.json() for request in server.requests]
    for body in bodies:
        check_openai_responses_body(body)
    chained = [body.get("previous_response_id") for body in bodies]
    assert chained == [None, "resp_1", "resp_2", "resp_3"]
    assert [len(body["input"]) for body in bodies] == [1, 1, 2, 1]
    assert all(body["store"] is True for body in bodies)

"""The Responses provider on recorded OpenAI traffic (tests/fixtures/recorded/openai-responses, see
tests/fixtures/README.md): requests the API accepted and what it answered.

- decode: each recorded answer served over the loopback server (whole, one SSE event per chunk,
  and cut at odd byte offsets) gives the same typed response: text, reasoning parts with their
  encrypted content, tool calls, usage, finish.
- encode: the conversation rebuilt from answer k (and the recorded tool results) makes reactloop
  send what the client sent as request k+1, over the keys the provider owns: input items in order
  with their types, reasoning items with `encrypted_content` byte-identical, call ids and
  arguments, tools, tool choice, reasoning, include. Where a recorded request has what reactloop
  does not send by design, the test says so and compares the rest.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import yaml

from reactloop._core._messages import (
    FinishReason,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from reactloop._core._parts import ReasoningPart, TextPart
from reactloop._core._records import ResponseSaved
from reactloop._core._settings import ModelSettings, ReasoningSettings
from reactloop._durable._codec import decode, encode
from reactloop._providers import OpenAIResponsesModel
from tests.helpers.vendor_schemas import check_openai_responses_body
from tests.providers.conftest import API_KEY, FIXTURES
from tests.providers.wire_server import Reply, WireServer, events_of, split_at, sse_reply

pytestmark = pytest.mark.anyio

RECORDED = FIXTURES / "recorded" / "openai-responses"
ODD_OFFSETS = (1, 3, 17, 101, 257, 1009, 4099, 16411)
JSON = (("content-type", "application/json"),)


def interactions(name: str) -> list[dict[str, Any]]:
    cassette = yaml.safe_load((RECORDED / name).read_text(encoding="utf-8"))
    return list(cassette["interactions"])


def served(response: dict[str, Any]) -> list[Reply]:
    """The recorded answer three ways: whole, one event (or the body) per chunk, odd cuts."""
    if "body" in response:
        raw = str(response["body"]["string"]).encode()
        cuts = split_at(raw, [n for n in ODD_OFFSETS if n < len(raw)])
        return [sse_reply([raw]), sse_reply(events_of(raw)), sse_reply(cuts)]
    raw = orjson.dumps(response["parsed_body"])
    cuts = split_at(raw, [n for n in ODD_OFFSETS if n < len(raw)])
    return [Reply(200, (raw,), JSON), Reply(200, tuple(cuts), JSON)]


@pytest.fixture
async def model(server: WireServer) -> AsyncIterator[OpenAIResponsesModel]:
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel("gpt-5", api_key=API_KEY, base_url=url) as responses:
        yield responses


async def answer(
    server: WireServer,
    model: OpenAIResponsesModel,
    reply: Reply,
    request: ModelRequest,
    deltas: list[ModelDelta] | None = None,
) -> ModelResponse:
    server.reply_with(reply)
    if reply.headers == JSON:
        return await model.request(request)
    sink = [] if deltas is None else deltas

    async def collect(delta: ModelDelta) -> None:
        sink.append(delta)

    return await model.stream(request, collect)


async def decoded(
    server: WireServer, model: OpenAIResponsesModel, name: str, k: int = 0
) -> ModelResponse:
    """Interaction k's answer decoded every way; all the ways give the same response."""
    request = ModelRequest((UserMessage("hi"),))
    replies = served(interactions(name)[k]["response"])
    results = [await answer(server, model, reply, request) for reply in replies]
    assert all(result == results[0] for result in results[1:])
    return results[0]


def recorded_output(name: str, k: int = 0) -> list[dict[str, Any]]:
    """The output items of interaction k: the finished items of a stream, in order."""
    response = interactions(name)[k]["response"]
    if "parsed_body" in response:
        return list(response["parsed_body"]["output"])
    events = [orjson.loads(line[6:]) for line in response["body"]["string"].splitlines()
              if line.startswith("data: ")]  # fmt: skip
    return [e["item"] for e in events if e["type"] == "response.output_item.done"]


async def test_decode_a_function_call_stream(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    response = await decoded(server, model, "test_openai_responses_stream.yaml")
    (call,) = response.message.tool_calls
    assert (call.name, call.arguments, call.id) == (
        "get_capital",
        '{"country":"France"}',
        "call_kL0PCQV7M2WMoVX8V8OtYSAL",
    )
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.usage == Usage(input_tokens=255, output_tokens=16)
    assert response.id == "resp_67e554a155508191900ee113293c4c830794405d35281ae2"


async def test_decode_the_text_stream_after_the_tool(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    response = await decoded(server, model, "test_openai_responses_stream.yaml", 1)
    (item,) = recorded_output("test_openai_responses_stream.yaml", 1)
    assert response.message.parts == (TextPart(item["content"][0]["text"]),)
    assert response.finish_reason is FinishReason.STOP


async def test_decode_reasoning_with_summaries_and_encrypted_content(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    name = "test_openai_responses_model_thinking_part.yaml"
    response = await decoded(server, model, name)
    reasoning, message = recorded_output(name)
    assert response.message.parts == (
        ReasoningPart(
            summary=tuple(s["text"] for s in reasoning["summary"]),
            encrypted=reasoning["encrypted_content"],
            id=reasoning["id"],
            followed_by=message["id"],  # the API pairs the two by it
            provider="openai-responses",
            model="gpt-5",
        ),
        TextPart(message["content"][0]["text"]),
    )
    assert response.usage == Usage(input_tokens=13, output_tokens=2199, reasoning_tokens=1920)
    assert response.model == "gpt-5-2025-08-07"


async def test_decode_a_reasoning_stream_keeps_the_finished_items_encrypted_content(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    name = "test_openai_responses_thinking_part_iter.yaml"
    response = await decoded(server, model, name)
    reasoning, message = recorded_output(name)
    (part,) = response.message.reasoning
    assert part.encrypted == reasoning["encrypted_content"]  # output_item.done's, byte for byte
    assert part.summary == tuple(s["text"] for s in reasoning["summary"]) and len(part.summary) == 4
    assert response.message.text == message["content"][0]["text"]
    assert response.usage.reasoning_tokens == 1408


async def test_a_reasoning_stream_streams_its_summary(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    name = "test_openai_responses_thinking_part_iter.yaml"
    deltas: list[ModelDelta] = []
    (reply, *_) = served(interactions(name)[0]["response"])
    response = await answer(server, model, reply, ModelRequest((UserMessage("hi"),)), deltas)
    thought = "".join(d.text for d in deltas if isinstance(d, ReasoningDelta))
    assert thought == "".join(response.message.reasoning[0].summary)


async def test_decode_streamed_usage_and_a_call_after_reasoning(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    name = "test_openai_responses_streaming_usage.yaml"
    response = await decoded(server, model, name)
    reasoning, call = recorded_output(name)
    parts = response.message.parts
    assert [type(part).__name__ for part in parts] == ["ReasoningPart", "ToolCall"]
    assert response.message.reasoning[0].encrypted == reasoning["encrypted_content"]
    assert response.message.tool_calls[0].id == call["call_id"]
    assert response.usage == Usage(input_tokens=53, output_tokens=469, reasoning_tokens=448)


async def test_decode_the_previous_response_answers(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    response = await decoded(server, model, "test_openai_previous_response_id.yaml")
    assert response.message.text == "Open sesame! What would you like to unlock?"
    assert response.id == "resp_1234" and response.finish_reason is FinishReason.STOP


async def _ignore(delta: ModelDelta) -> None:
    return None


async def test_encode_reasoning_goes_back_as_the_api_accepted_it(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    name = "test_openai_responses_model_thinking_part.yaml"
    recorded_next = interactions(name)[1]["request"]["parsed_body"]
    first, *_, last = recorded_next["input"]
    settings = ModelSettings(reasoning=ReasoningSettings(effort="high", summary="detailed"))
    (reply, *_) = served(interactions(name)[0]["response"])
    answered = await answer(server, model, reply, ModelRequest((UserMessage(first["content"]),)))
    history = (UserMessage(first["content"]), answered.message, UserMessage(last["content"]))
    server.reply_with(*served(interactions(name)[1]["response"]))
    await model.request(ModelRequest(history, settings=settings))
    ours = server.requests[-1].json()
    check_openai_responses_body(ours)
    assert ours["input"] == recorded_next["input"]
    assert ours["input"][1]["encrypted_content"] == recorded_next["input"][1]["encrypted_content"]
    for key in ("model", "reasoning", "include"):
        assert ours[key] == recorded_next[key]
    # By design: reactloop sends `store: false` (the recorded client left the vendor's default,
    # true) and leaves `stream` out of a plain request (the recorded client sent false).
    assert ours["store"] is False and "stream" not in ours


async def test_a_run_resumed_elsewhere_sends_the_reasoning_back_as_the_api_accepted_it(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    """The answer goes through the journal's codec and a fresh model instance (another process
    resuming the run) encodes the next request: the same input items, ids and encrypted
    reasoning included, since the part carries the id of the item that followed it."""
    name = "test_openai_responses_model_thinking_part.yaml"
    recorded_next = interactions(name)[1]["request"]["parsed_body"]
    first, *_, last = recorded_next["input"]
    (reply, *_) = served(interactions(name)[0]["response"])
    answered = await answer(server, model, reply, ModelRequest((UserMessage(first["content"]),)))
    stored = decode(encode(ResponseSaved(1, answered, Usage())))
    assert isinstance(stored, ResponseSaved)
    history = (UserMessage(first["content"]), stored.response.message, UserMessage(last["content"]))
    settings = ModelSettings(reasoning=ReasoningSettings(effort="high", summary="detailed"))
    server.reply_with(*served(interactions(name)[1]["response"]))
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel("gpt-5", api_key=API_KEY, base_url=url) as elsewhere:
        await elsewhere.request(ModelRequest(history, settings=settings))
    assert server.requests[-1].json()["input"] == recorded_next["input"]


CAPITAL = ToolSpec(
    "get_capital",
    "",
    {
        "additionalProperties": False,
        "properties": {"country": {"type": "string"}},
        "required": ["country"],
        "type": "object",
    },
)


async def test_encode_a_function_call_and_its_output(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    name = "test_openai_responses_stream.yaml"
    recorded_next = interactions(name)[1]["request"]["parsed_body"]
    question, call, result = recorded_next["input"]
    (reply, *_) = served(interactions(name)[0]["response"])
    request = ModelRequest((UserMessage(question["content"]),), tools=(CAPITAL,))
    answered = await answer(server, model, reply, request)
    (tool_call,) = answered.message.tool_calls
    history = (
        *request.messages,
        answered.message,
        ToolMessage(tool_call.id, "get_capital", result["output"]),
    )
    server.reply_with(*served(interactions(name)[1]["response"]))
    await model.stream(ModelRequest(history, tools=(CAPITAL,)), _ignore)
    ours = server.requests[-1].json()
    check_openai_responses_body(ours)
    assert [item.get("type") for item in ours["input"]] == [
        None,
        "function_call",
        "function_call_output",
    ]
    assert ours["input"][0] == question
    sent_call, sent_result = ours["input"][1:]
    assert (sent_call["name"], sent_call["arguments"]) == (call["name"], call["arguments"])
    assert sent_result["output"] == result["output"]
    assert sent_call["call_id"] == sent_result["call_id"]
    # The recorded client sent the item id (fc_...) as the call id; reactloop sends the model's
    # call id (call_...), as the API documents it, and no item id (no reasoning came before the
    # call, so none pairs with it).
    assert call["call_id"].startswith("fc_") and "id" not in sent_call
    assert sent_call["call_id"] == "call_kL0PCQV7M2WMoVX8V8OtYSAL"
    for key in ("tools", "tool_choice", "stream"):
        assert ours[key] == recorded_next[key]
    # By design: no `instructions` when there are none (the recorded client sent "").
    assert "instructions" not in ours and recorded_next["instructions"] == ""


async def test_encode_the_first_request_with_tools_reasoning_and_service_tier(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    recorded = interactions("test_openai_responses_streaming_usage.yaml")[0]["request"]
    body = recorded["parsed_body"]
    (tool,) = body["tools"]
    spec = ToolSpec(tool["name"], tool["description"], tool["parameters"])
    settings = ModelSettings(reasoning=ReasoningSettings(effort="low"), service_tier="flex")
    request = ModelRequest(
        (UserMessage(body["input"][0]["content"]),),
        tools=(spec,),
        tool_choice=ToolChoice.REQUIRED,
        settings=settings,
    )
    server.reply_with(
        *served(interactions("test_openai_responses_streaming_usage.yaml")[0]["response"])
    )
    await model.stream(request, _ignore)
    ours = server.requests[-1].json()
    check_openai_responses_body(ours)
    for key in ("input", "tools", "tool_choice", "include", "service_tier", "stream", "model"):
        assert ours[key] == body[key]
    # By design: a summary left unset is not sent (the recorded client sent `summary: null`), nor
    # a `previous_response_id` in stateless mode (the recorded client sent null).
    assert (
        ours["reasoning"] == {"effort": "low"} == {k: v for k, v in body["reasoning"].items() if v}
    )
    assert "previous_response_id" not in ours and body["previous_response_id"] is None


async def test_encode_previous_response_id_mode(server: WireServer) -> None:
    name = "test_openai_previous_response_id.yaml"
    recorded_next = interactions(name)[1]["request"]["parsed_body"]
    first = interactions(name)[0]["request"]["parsed_body"]["input"][0]
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel(
        "gpt-5", api_key=API_KEY, base_url=url, conversation="previous_response"
    ) as chained:
        (reply, *_) = served(interactions(name)[0]["response"])
        answered = await answer(
            server, chained, reply, ModelRequest((UserMessage(first["content"]),))
        )
        question = recorded_next["input"][0]["content"]
        history = (UserMessage(first["content"]), answered.message, UserMessage(question))
        server.reply_with(*served(interactions(name)[1]["response"]))
        await chained.request(ModelRequest(history))
    ours = server.requests[-1].json()
    check_openai_responses_body(ours)
    for key in ("input", "previous_response_id", "model"):
        assert ours[key] == recorded_next[key]
    # By design: `store: true` said outright (the recorded client left the vendor's default,
    # true); no `instructions` when there are none and no `text.format` for plain text (the
    # recorded client sent "" and {"type": "text"}, the API's defaults).
    assert ours["store"] is True
    assert "instructions" not in ours and "text" not in ours

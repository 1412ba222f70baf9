"""Answers shaped as vendors were published sending them, over a loopback socket: each test
names where its shape comes from (an issue thread quoting the vendor's bytes, or the vendor's
documentation). None of these bodies ran against a live API; they pin what the decoders make
of shapes other clients met in real traffic.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import orjson
import pytest

from reactloop import ConfigurationError, ReActLoop
from reactloop._core import (
    AssistantMessage,
    FinishReason,
    ModelRequest,
    ReasoningPart,
    TextPart,
    ToolCall,
    UserMessage,
)
from reactloop._errors import AuthenticationError, RateLimitedError
from reactloop._providers import GeminiModel, OpenAIModel
from reactloop._providers._gemini import encode_request
from reactloop.output import OutputOptions, OutputStrategy
from tests.providers.recorded import Deltas
from tests.providers.render import sse
from tests.providers.test_output import Forecast, get_weather
from tests.providers.wire_server import WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

KEY = "sk-published-SECRET-0123456789"
REQUEST = ModelRequest((UserMessage("hi"),))
GEMINI_3 = "gemini-3-pro-preview"
USAGE = {"promptTokenCount": 29, "candidatesTokenCount": 10, "totalTokenCount": 39}


@pytest.fixture
async def gemini3(server: WireServer) -> AsyncIterator[GeminiModel]:
    async with GeminiModel(GEMINI_3, api_key=KEY, base_url=server.url) as model:
        yield model


def _event(body: dict[str, Any]) -> bytes:
    return sse(body)


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {"id": "chatcmpl-B0C3q", "object": "chat.completion.chunk", "choices": [choice]}


CALL = {"index": 0, "id": "call_1", "type": "function"}
ARGS = '{"location": "Lima"}'


# Chat Completions: calls that finish with "stop" -------------------------------------------
# ollama/ollama#7963 quotes gpt-4o ending a forced-tool stream with finish_reason "stop";
# googleapis/python-genai#2868: Gemini's OpenAI-compatible endpoint streams "stop" for calls.


async def test_streamed_calls_that_finish_with_stop_finish_as_tool_calls(
    server: WireServer, openai: OpenAIModel
) -> None:
    function = {"name": "get_weather", "arguments": ARGS}
    chunks = [
        _event(_chat_chunk({"role": "assistant", "tool_calls": [{**CALL, "function": function}]})),
        _event(_chat_chunk({}, "stop")),
        b"data: [DONE]\n\n",
    ]
    server.reply_with(sse_reply(chunks))
    response = await openai.stream(REQUEST, Deltas())
    assert response.message.parts == (ToolCall("get_weather", ARGS, "call_1"),)
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_whole_calls_that_finish_with_stop_finish_as_tool_calls(
    server: WireServer, openai: OpenAIModel
) -> None:
    call = {**CALL, "function": {"name": "get_weather", "arguments": ARGS}}
    del call["index"]
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o"}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    server.reply_with(json_reply({**body, "choices": [choice]}))
    response = await openai.request(REQUEST)
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_text_that_finishes_with_stop_still_stops(
    server: WireServer, openai: OpenAIModel
) -> None:
    chunks = [_event(_chat_chunk({"content": "Hi."})), _event(_chat_chunk({}, "stop"))]
    server.reply_with(sse_reply([*chunks, b"data: [DONE]\n\n"]))
    response = await openai.stream(REQUEST, Deltas())
    assert response.finish_reason is FinishReason.STOP


# OpenRouter: SSE comments while it waits, then the usage chunk with its cost ---------------
# openrouter.ai/docs/api-reference/streaming ("OPENROUTER PROCESSING" comments) and
# /docs/use-cases/usage-accounting (the last chunk's usage with cost, choices empty).


async def test_openrouter_processing_comments_are_ignored_and_the_cost_read(
    server: WireServer,
) -> None:
    usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15, "cost": 0.00095}
    chunks = [
        b": OPENROUTER PROCESSING\n\n",
        _event(_chat_chunk({"role": "assistant", "content": "Hel"})),
        b": OPENROUTER PROCESSING\n\n",
        _event(_chat_chunk({"content": "lo"}, "stop")),
        _event({"id": "gen-1", "object": "chat.completion.chunk", "choices": [], "usage": usage}),
        b"data: [DONE]\n\n",
    ]
    server.reply_with(sse_reply(chunks))
    url = f"{server.url}/openrouter/api/v1"
    async with OpenAIModel("openai/gpt-4o", host="openrouter", api_key=KEY, base_url=url) as m:
        response = await m.stream(REQUEST, Deltas())
    assert response.message.parts == (TextPart("Hello"),)
    assert (response.usage.input_tokens, response.usage.cost) == (12, Decimal("0.00095"))


# Gemini: where the finish reason comes, and parts reactloop does not keep ------------------


def _gemini(candidate: dict[str, Any], **body: Any) -> bytes:
    return sse({"candidates": [candidate], "modelVersion": GEMINI_3, **body})


async def test_a_finish_chunk_whose_content_has_no_parts_ends_a_call(
    server: WireServer, gemini3: GeminiModel
) -> None:
    # pydantic/pydantic-ai#2631 logs a functionCall chunk, then a candidate of
    # content=Content(role='model') (no parts) with finish_reason STOP.
    call = {"functionCall": {"name": "write_todo", "args": {"update_by": "id"}}}
    chunks = [
        _gemini({"content": {"parts": [{**call, "thoughtSignature": "c2ln"}], "role": "model"}}),
        _gemini({"content": {"role": "model"}, "finishReason": "STOP"}, usageMetadata=USAGE),
    ]
    server.reply_with(sse_reply(chunks))
    response = await gemini3.stream(REQUEST, Deltas())
    (signature, made) = response.message.parts
    assert isinstance(signature, ReasoningPart) and signature.signature == "c2ln"
    assert isinstance(made, ToolCall) and orjson.loads(made.arguments) == {"update_by": "id"}
    assert (response.finish_reason, response.usage.input_tokens) == (FinishReason.TOOL_CALLS, 29)


async def test_a_finish_chunk_without_content_ends_the_text_with_its_usage(
    server: WireServer, gemini3: GeminiModel
) -> None:
    # agentjido/req_llm#638: a last event {"candidates": [{"finishReason": "STOP"}],
    # "usageMetadata": {...}}, its content sent in earlier events.
    chunks = [
        _gemini({"content": {"parts": [{"text": "The capital"}], "role": "model"}, "index": 0}),
        _gemini({"finishReason": "STOP"}, usageMetadata=USAGE),
    ]
    server.reply_with(sse_reply(chunks))
    response = await gemini3.stream(REQUEST, Deltas())
    assert response.message.parts == (TextPart("The capital"),)
    assert (response.finish_reason, response.usage.output_tokens) == (FinishReason.STOP, 10)


CODE_ANSWER = [
    # ai.google.dev/gemini-api/docs/code-execution: executableCode {language, code} and
    # codeExecutionResult {outcome, output} parts between text parts.
    {"text": "Let me compute it."},
    {"executableCode": {"language": "PYTHON", "code": "print(7 * 6)"}, "thoughtSignature": "Y29k"},
    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
    {"text": "It is 42."},
]
GROUNDING = {"webSearchQueries": ["seven times six"], "groundingChunks": []}


async def test_code_execution_and_grounding_parts_are_read_past_to_the_text(
    server: WireServer, gemini3: GeminiModel
) -> None:
    body = {"content": {"parts": CODE_ANSWER, "role": "model"}, "finishReason": "STOP"}
    server.reply_with(sse_reply([_gemini({**body, "groundingMetadata": GROUNDING})]))
    response = await gemini3.stream(REQUEST, Deltas())
    assert response.message.text == "Let me compute it.It is 42."
    assert not any(isinstance(part, ReasoningPart) for part in response.message.parts)


async def test_a_skipped_parts_signature_is_not_moved_onto_another_part(
    server: WireServer, gemini3: GeminiModel
) -> None:
    # The code part is not kept, so neither is its signature: sent on another part it would
    # sign what it never signed (Gemini 3 validates the signatures it finds on calls).
    body = {"content": {"parts": CODE_ANSWER, "role": "model"}, "finishReason": "STOP"}
    server.reply_with(sse_reply([_gemini(body, usageMetadata=USAGE)]))
    answer = (await gemini3.stream(REQUEST, Deltas())).message
    sent = encode_request(ModelRequest((UserMessage("hi"), answer, UserMessage("ok"))), GEMINI_3)
    model_turn = sent["contents"][1]
    assert model_turn["role"] == "model"
    assert all("thoughtSignature" not in part for part in model_turn["parts"])


async def test_an_image_output_part_does_not_break_the_answer(
    server: WireServer, gemini3: GeminiModel
) -> None:
    # ai.google.dev/gemini-api/docs/image-generation: the answer's image as an inlineData
    # part (with its signature on Gemini 3 image models) beside the text.
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    parts = [{"text": "Here it is."}, {**image, "thoughtSignature": "aW1n"}]
    body = {"content": {"parts": parts, "role": "model"}, "finishReason": "STOP"}
    server.reply_with(sse_reply([_gemini(body, usageMetadata=USAGE)]))
    response = await gemini3.stream(REQUEST, Deltas())
    assert response.message == AssistantMessage(parts=(TextPart("Here it is."),))


# Google's streaming endpoint answers an error as a list of one error body -----------------
# googleapis/python-genai commit 2629fb42 ("Handle single-element list responses in error
# details") unwraps `[{"error": {...}}]` for that reason.

RETRY = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "22s"}
BAD_KEY = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}


async def test_a_listed_rate_limit_keeps_its_type_and_retry_delay(
    server: WireServer, gemini3: GeminiModel
) -> None:
    error = {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}
    server.reply_with(json_reply([{"error": {**error, "details": [RETRY]}}], status=429))
    with pytest.raises(RateLimitedError) as caught:
        await gemini3.stream(REQUEST, Deltas())
    assert caught.value.retry_after == 22


async def test_a_listed_bad_key_is_an_authentication_error(
    server: WireServer, gemini3: GeminiModel
) -> None:
    error = {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}
    server.reply_with(json_reply([{"error": {**error, "details": [BAD_KEY]}}], status=400))
    with pytest.raises(AuthenticationError):
        await gemini3.stream(REQUEST, Deltas())


# Gemini before 3 refuses a JSON response format beside function declarations -------------
# googleapis/python-genai#867, symfony/ai#1777 (gemini-2.5-flash): 400 INVALID_ARGUMENT
# "Function calling with a response mime type: 'application/json' is unsupported".


async def test_a_gemini_2_5_tool_loop_takes_the_output_tool(server: WireServer) -> None:
    async with GeminiModel("gemini-2.5-flash", api_key=KEY, base_url=server.url) as model:
        loop = ReActLoop(model, tools=[get_weather], output_type=Forecast)
        assert loop.config.output is not None
        assert loop.config.output.strategy is OutputStrategy.TOOL
        native = OutputOptions(strategy=OutputStrategy.NATIVE)
        with pytest.raises(ConfigurationError, match="native_output=False"):
            ReActLoop(model, tools=[get_weather], output_type=Forecast, output=native)
    assert server.requests == []


async def test_gemini_3_keeps_the_native_format_beside_functions(
    server: WireServer, gemini3: GeminiModel
) -> None:
    loop = ReActLoop(gemini3, tools=[get_weather], output_type=Forecast)
    assert loop.config.output is not None
    assert loop.config.output.strategy is OutputStrategy.NATIVE

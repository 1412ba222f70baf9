"""Every failure of the Responses API becomes the typed error a retry policy acts on, as on the
other providers: statuses, a 400 about a parameter the model rejects, failed responses, error
events, cut streams; and the finishes that are not failures (incomplete, refusal)."""

from __future__ import annotations

import pytest

from reactloop._core._messages import (
    FinishReason,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    UserMessage,
)
from reactloop._core._settings import ModelSettings
from reactloop._errors import (
    AuthenticationError,
    ContextTooLongError,
    InvalidRequestError,
    ProviderConfigurationError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._providers import OpenAIResponsesModel
from tests.providers.conftest import API_KEY
from tests.providers.render import sse
from tests.providers.render_responses import message_item, responses_json, responses_stream
from tests.providers.wire_server import Ending, Reply, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest((UserMessage("hi"),))
MODES = ["request", "stream"]


async def _ignore(delta: ModelDelta) -> None:
    return None


async def call(
    model: OpenAIResponsesModel, mode: str, request: ModelRequest = REQUEST
) -> ModelResponse:
    if mode == "stream":
        return await model.stream(request, _ignore)
    return await model.request(request)


def failing(status: int, message: str, kind: str, code: str | None = None) -> Reply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json_reply(body, status)


@pytest.mark.parametrize("mode", MODES)
async def test_401_is_authentication(
    server: WireServer, responses: OpenAIResponsesModel, mode: str
) -> None:
    server.reply_with(failing(401, "Incorrect API key", "invalid_request_error", "invalid_api_key"))
    with pytest.raises(AuthenticationError) as caught:
        await call(responses, mode)
    assert caught.value.status == 401 and API_KEY not in str(caught.value)


@pytest.mark.parametrize("mode", MODES)
async def test_429_is_rate_limited_with_its_wait(
    server: WireServer, responses: OpenAIResponsesModel, mode: str
) -> None:
    body = {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}
    server.reply_with(json_reply(body, 429, [("retry-after", "3")]))
    with pytest.raises(RateLimitedError) as caught:
        await call(responses, mode)
    assert caught.value.retry_after == 3.0


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_is_unavailable(
    server: WireServer, responses: OpenAIResponsesModel, status: int
) -> None:
    server.reply_with(failing(status, "upstream", "server_error"))
    with pytest.raises(ProviderUnavailableError) as caught:
        await call(responses, "request")
    assert caught.value.status == status


async def test_a_400_is_an_invalid_request(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    server.reply_with(failing(400, "Invalid 'input[0]': empty", "invalid_request_error"))
    with pytest.raises(InvalidRequestError):
        await call(responses, "request")


async def test_a_400_about_an_unsupported_parameter_names_it_and_the_model(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    body = {
        "error": {
            "message": "Unsupported parameter: 'temperature' is not supported with this model.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_parameter",
        }
    }
    server.reply_with(json_reply(body, 400))
    request = ModelRequest((UserMessage("hi"),), settings=ModelSettings(temperature=0.2))
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel("my-model", api_key=API_KEY, base_url=url) as model:
        with pytest.raises(ProviderConfigurationError) as caught:
            await model.request(request)
    assert (caught.value.option, caught.value.value) == ("temperature", 0.2)
    assert "'my-model'" in str(caught.value)


async def test_a_context_overflow_is_context_too_long(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    message = "Your input exceeds the context window of this model."
    server.reply_with(failing(400, message, "invalid_request_error", "context_length_exceeded"))
    with pytest.raises(ContextTooLongError):
        await call(responses, "request")


@pytest.mark.parametrize("mode", MODES)
async def test_a_failed_response_is_its_typed_error(
    server: WireServer, responses: OpenAIResponsesModel, mode: str
) -> None:
    failed = {**responses_json(), "status": "failed", "output": []}
    failed["error"] = {"code": "server_error", "message": "The model failed."}
    if mode == "stream":
        server.reply_with(sse_reply([sse({"type": "response.failed", "response": failed})]))
    else:
        server.reply_with(json_reply(failed))
    with pytest.raises(ProviderUnavailableError, match="The model failed"):
        await call(responses, mode)


async def test_an_error_event_is_typed_by_its_code(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    event = {"type": "error", "code": "rate_limit_exceeded", "message": "slow", "param": None}
    server.reply_with(sse_reply([*responses_stream("Hel")[:2], sse(event)]))
    with pytest.raises(RateLimitedError):
        await call(responses, "stream")


async def test_a_stream_cut_before_its_final_event_is_unavailable(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    server.reply_with(sse_reply(responses_stream("Hello there")[:-1]))
    with pytest.raises(ProviderUnavailableError, match=r"response\.completed"):
        await call(responses, "stream")


async def test_a_stream_cut_mid_body_is_unavailable(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    server.reply_with(sse_reply(responses_stream("Hello there")[:4], Ending.CUT))
    with pytest.raises(ProviderUnavailableError):
        await call(responses, "stream")


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("max_output_tokens", FinishReason.LENGTH),
        ("content_filter", FinishReason.CONTENT_FILTER),
        ("something_new", FinishReason.OTHER),
    ],
)
async def test_an_incomplete_response_finishes_by_its_reason(
    server: WireServer, responses: OpenAIResponsesModel, reason: str, finish: FinishReason
) -> None:
    server.reply_with(json_reply(responses_json("Partial", status="incomplete", incomplete=reason)))
    answer = await call(responses, "request")
    assert (answer.finish_reason, answer.message.text) == (finish, "Partial")


async def test_a_streamed_incomplete_response_is_length(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    server.reply_with(sse_reply(responses_stream("Partial", final="response.incomplete")))
    answer = await call(responses, "stream")
    assert (answer.finish_reason, answer.message.text) == (FinishReason.LENGTH, "Partial")


async def test_a_call_cut_by_the_token_limit_is_dropped(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    body = responses_json("Let me", status="incomplete", incomplete="max_output_tokens")
    body["output"].append(
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": '{"a'}
    )
    server.reply_with(json_reply(body))
    answer = await call(responses, "request")
    assert answer.message.tool_calls == () and answer.message.text == "Let me"


@pytest.mark.parametrize("mode", MODES)
async def test_a_refusal_is_the_message_refusal(
    server: WireServer, responses: OpenAIResponsesModel, mode: str
) -> None:
    item = message_item("")
    item["content"] = [{"type": "refusal", "refusal": "I can't help with that."}]
    body = {**responses_json(), "output": [item]}
    if mode == "stream":
        done = {"type": "response.output_item.done", "output_index": 0, "item": item}
        chunks = [sse(done), sse({"type": "response.completed", "response": body})]
        server.reply_with(sse_reply(chunks))
    else:
        server.reply_with(json_reply(body))
    answer = await call(responses, mode)
    assert answer.finish_reason is FinishReason.REFUSAL
    assert (answer.message.refusal, answer.message.text) == ("I can't help with that.", "")

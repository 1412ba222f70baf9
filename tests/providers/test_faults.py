"""Every failure the server can produce becomes the typed error a retry policy acts on."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import anyio
import pytest
from anyio.abc import SocketAttribute
from attrs import frozen

from reactloop._core._contracts import Model
from reactloop._core._decisions import StopReason
from reactloop._core._messages import ModelDelta, ModelRequest, ModelResponse, UserMessage
from reactloop._errors import (
    AuthenticationError,
    ConfigurationError,
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    InvalidResponseError,
    ModelError,
    ModelTimeoutError,
    ProviderConfigurationError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel, OpenAIResponsesModel
from reactloop._resolver import DEFAULT_MESSAGES
from tests.providers.conftest import API_KEY
from tests.providers.render import anthropic_stream, openai_stream, sse
from tests.providers.render_gemini import gemini_answer_stream, gemini_error
from tests.providers.render_responses import responses_stream
from tests.providers.wire_server import Ending, Reply, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest((UserMessage("hi"),))
MODES = ["request", "stream"]


async def _ignore(delta: ModelDelta) -> None:
    return None


async def call(model: Model, mode: str) -> ModelResponse:
    """One call in the given mode."""
    if mode == "stream":
        return await model.stream(REQUEST, _ignore)
    return await model.request(REQUEST)


PATHS = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "openai-responses": "/v1/responses",
    "google": "/v1beta/models/gemini-2.5-flash:generateContent",
}
STREAM_PATHS = {"google": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"}
"""Where a provider streams from another path than its plain calls' (Gemini)."""


def endpoint(server: WireServer, model: Model, mode: str = "request") -> str:
    """The URL each provider posts to on the wire server, in the given mode."""
    provider = _provider(model)
    path = STREAM_PATHS.get(provider) if mode == "stream" else None
    return server.url + (path or PATHS[provider])


@pytest.fixture(params=["openai", "anthropic", "openai-responses", "gemini"])
def model(
    request: pytest.FixtureRequest,
    openai: OpenAIModel,
    anthropic: AnthropicModel,
    responses: OpenAIResponsesModel,
    gemini: GeminiModel,
) -> Model:
    """Each provider in turn."""
    models: dict[str, Model] = {"openai": openai, "anthropic": anthropic, "gemini": gemini}
    return models.get(request.param, responses)


def openai_error(message: str, kind: str, code: str | None = None) -> dict[str, object]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def anthropic_error(message: str, kind: str) -> dict[str, object]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}


@pytest.mark.parametrize("mode", MODES)
async def test_429_is_rate_limited_with_its_wait(
    server: WireServer, model: Model, mode: str
) -> None:
    body = anthropic_error("Too many requests", "rate_limit_error")
    server.reply_with(json_reply(body, 429, [("retry-after", "7")]))
    with pytest.raises(RateLimitedError) as caught:
        await call(model, mode)
    error = caught.value
    assert (error.status, error.retry_after, error.retryable, error.quota_exhausted) == (
        429,
        7.0,
        True,
        False,
    )
    assert error.provider == _provider(model)


async def test_insufficient_quota_is_not_retryable(server: WireServer, openai: OpenAIModel) -> None:
    body = openai_error(
        "You exceeded your current quota", "insufficient_quota", "insufficient_quota"
    )
    server.reply_with(json_reply(body, 429))
    with pytest.raises(RateLimitedError) as caught:
        await openai.request(REQUEST)
    assert caught.value.quota_exhausted
    assert not caught.value.retryable


@pytest.mark.parametrize("mode", MODES)
async def test_529_overloaded_is_unavailable(
    server: WireServer, anthropic: AnthropicModel, mode: str
) -> None:
    server.reply_with(json_reply(anthropic_error("Overloaded", "overloaded_error"), 529))
    with pytest.raises(ProviderUnavailableError) as caught:
        await call(anthropic, mode)
    assert (caught.value.status, caught.value.provider) == (529, "anthropic")


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_is_unavailable(server: WireServer, model: Model, status: int) -> None:
    server.reply_with(
        Reply(status, (b"<html>Bad Gateway</html>",), (("content-type", "text/html"),))
    )
    with pytest.raises(ProviderUnavailableError, match="Bad Gateway") as caught:
        await model.request(REQUEST)
    assert caught.value.status == status


@pytest.mark.parametrize("mode", MODES)
async def test_401_is_authentication(server: WireServer, openai: OpenAIModel, mode: str) -> None:
    echoed = f"Incorrect API key provided: {API_KEY}."
    server.reply_with(
        json_reply(openai_error(echoed, "invalid_request_error", "invalid_api_key"), 401)
    )
    with pytest.raises(AuthenticationError) as caught:
        await call(openai, mode)
    assert caught.value.status == 401
    assert API_KEY not in str(caught.value)
    assert API_KEY not in repr(caught.value.args)


async def test_openai_context_length_code_is_context_too_long(
    server: WireServer, openai: OpenAIModel
) -> None:
    body = openai_error("This model's maximum context length is 128000 tokens.",
                        "invalid_request_error", "context_length_exceeded")  # fmt: skip
    server.reply_with(json_reply(body, 400))
    with pytest.raises(ContextTooLongError) as caught:
        await openai.request(REQUEST)
    assert caught.value.status == 400


async def test_anthropic_prompt_too_long_is_context_too_long(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    body = anthropic_error(
        "prompt is too long: 250000 tokens > 200000 maximum", "invalid_request_error"
    )
    server.reply_with(json_reply(body, 400))
    with pytest.raises(ContextTooLongError, match="prompt is too long"):
        await anthropic.stream(REQUEST, _ignore)


@pytest.mark.parametrize("status", [400, 418])
async def test_other_4xx_is_invalid_request(server: WireServer, model: Model, status: int) -> None:
    server.reply_with(
        json_reply(anthropic_error("messages: field required", "invalid_request_error"), status)
    )
    with pytest.raises(InvalidRequestError, match="field required") as caught:
        await model.request(REQUEST)
    assert caught.value.status == status


async def test_malformed_json_body_is_invalid_response(server: WireServer, model: Model) -> None:
    server.reply_with(Reply(200, (b'{"choices": [',), (("content-type", "application/json"),)))
    with pytest.raises(InvalidResponseError, match="malformed JSON"):
        await model.request(REQUEST)


async def test_malformed_json_event_is_invalid_response(server: WireServer, model: Model) -> None:
    server.reply_with(sse_reply([b"event: message_start\ndata: {oops\n\n"]))
    with pytest.raises(InvalidResponseError, match="malformed JSON"):
        await model.stream(REQUEST, _ignore)


async def test_a_json_answer_to_a_stream_request_is_its_error(
    server: WireServer, openai: OpenAIModel
) -> None:
    server.reply_with(json_reply(openai_error("server busy", "server_error")))
    with pytest.raises(ProviderUnavailableError, match="server busy"):
        await openai.stream(REQUEST, _ignore)


@pytest.mark.parametrize("mode", MODES)
async def test_connection_refused_is_unavailable(mode: str) -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    async with OpenAIModel("m", api_key=API_KEY, base_url=f"http://127.0.0.1:{port}/v1") as model:
        with pytest.raises(ProviderUnavailableError, match="connection failed") as caught:
            await call(model, mode)
    assert caught.value.provider == "openai"


@pytest.mark.parametrize("mode", MODES)
async def test_connection_closed_without_answer_is_unavailable(
    server: WireServer, model: Model, mode: str
) -> None:
    server.reply_with(Reply(ending=Ending.RESET))
    with pytest.raises(ProviderUnavailableError):
        await call(model, mode)


STREAMS: dict[str, Callable[[], list[bytes]]] = {
    "openai": lambda: openai_stream("Hello there, friend."),
    "anthropic": lambda: anthropic_stream("Hello there, friend."),
    "openai-responses": lambda: responses_stream("Hello there, friend."),
    "google": lambda: gemini_answer_stream("Hello there, friend."),
}


def _provider(model: Model) -> str:
    if isinstance(model, GeminiModel):
        return "google"
    if isinstance(model, OpenAIResponsesModel):
        return "openai-responses"
    return "openai" if isinstance(model, OpenAIModel) else "anthropic"


async def test_a_stream_cut_mid_body_is_unavailable(server: WireServer, model: Model) -> None:
    chunks = STREAMS[_provider(model)]()
    server.reply_with(sse_reply(chunks[:4], Ending.CUT))
    with pytest.raises(ProviderUnavailableError):
        await model.stream(REQUEST, _ignore)


async def test_a_stream_that_ends_before_its_finish_is_unavailable(
    server: WireServer, model: Model
) -> None:
    chunks = STREAMS[_provider(model)]()
    server.reply_with(sse_reply(chunks[:4]))
    with pytest.raises(ProviderUnavailableError, match="ended before the response was complete"):
        await model.stream(REQUEST, _ignore)


async def test_an_openai_error_chunk_mid_stream_is_typed(
    server: WireServer, openai: OpenAIModel
) -> None:
    chunks = openai_stream("Hello there")[:2]
    chunks.append(sse(openai_error("The server had an error", "server_error")))
    server.reply_with(sse_reply(chunks))
    with pytest.raises(ProviderUnavailableError, match="server had an error"):
        await openai.stream(REQUEST, _ignore)


async def test_an_anthropic_error_event_is_typed_by_its_type(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    chunks = anthropic_stream("Hello")[:3]
    chunks.append(sse(anthropic_error("slow down", "rate_limit_error"), "error"))
    server.reply_with(sse_reply(chunks))
    with pytest.raises(RateLimitedError, match="slow down"):
        await anthropic.stream(REQUEST, _ignore)


@pytest.fixture
async def impatient(server: WireServer) -> AsyncIterator[OpenAIModel]:
    """A model whose stream may stay silent for 0.2 s at most."""
    url = f"{server.url}/v1"
    async with OpenAIModel("m", api_key=API_KEY, base_url=url, idle_timeout=0.2) as model:
        yield model


@pytest.mark.parametrize("sent", [0, 3])
async def test_a_stalled_stream_times_out(
    server: WireServer, impatient: OpenAIModel, sent: int
) -> None:
    server.reply_with(sse_reply(openai_stream("Hello there")[:sent], Ending.STALL))
    with pytest.raises(ModelTimeoutError, match="idle timeout") as caught:
        await impatient.stream(REQUEST, _ignore)
    assert caught.value.retryable


async def test_a_server_that_never_answers_times_out(
    server: WireServer, impatient: OpenAIModel
) -> None:
    server.reply_with(Reply(ending=Ending.SILENT))
    with pytest.raises(ModelTimeoutError, match="idle timeout"):
        await impatient.stream(REQUEST, _ignore)


@pytest.mark.parametrize(
    ("headers", "after", "should"),
    [
        ([("retry-after-ms", "1500"), ("retry-after", "9")], 1.5, None),
        ([("x-should-retry", "false")], None, False),
        ([("x-should-retry", "true"), ("retry-after", "2")], 2.0, True),
    ],
)
async def test_retry_headers_ride_on_the_error(
    server: WireServer,
    model: Model,
    headers: list[tuple[str, str]],
    after: float | None,
    should: bool | None,
) -> None:
    server.reply_with(json_reply(anthropic_error("boom", "api_error"), 500, headers))
    with pytest.raises(ModelError) as caught:
        await model.request(REQUEST)
    assert (caught.value.retry_after, caught.value.should_retry) == (after, should)


async def test_retry_after_as_an_http_date(server: WireServer, openai: OpenAIModel) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server.reply_with(json_reply(openai_error("slow", "requests"), 429, [("retry-after", when)]))
    with pytest.raises(RateLimitedError) as caught:
        await openai.request(REQUEST)
    assert caught.value.retry_after is not None
    assert 25 < caught.value.retry_after <= 30


async def test_reprs_never_show_the_key(
    openai: OpenAIModel, anthropic: AnthropicModel, gemini: GeminiModel
) -> None:
    for model in (openai, anthropic, gemini):
        assert API_KEY not in repr(model)
        assert API_KEY not in repr(vars(model))
        assert API_KEY not in repr(vars(model._channel))


async def test_debug_logs_never_show_the_key(
    server: WireServer, model: Model, caplog: pytest.LogCaptureFixture
) -> None:
    server.reply_with(
        json_reply(anthropic_error(f"bad key {API_KEY}", "authentication_error"), 401)
    )
    with caplog.at_level(logging.DEBUG), pytest.raises(AuthenticationError):
        await model.request(REQUEST)
    assert caplog.records
    assert API_KEY not in caplog.text


HTML_NOT_FOUND = Reply(
    404, (b"<html><body>Not Found</body></html>",), (("content-type", "text/html"),)
)


@pytest.mark.parametrize("mode", MODES)
async def test_a_wrong_base_url_is_a_configuration_error_naming_the_url(
    server: WireServer, model: Model, mode: str
) -> None:
    server.reply_with(HTML_NOT_FOUND)
    with pytest.raises(ProviderConfigurationError) as caught:
        await call(model, mode)
    error = caught.value
    assert f"HTTP 404 for POST {endpoint(server, model, mode)}" in str(error)
    assert "check the base URL" in str(error)
    assert (error.status, error.url, error.code) == (
        404,
        endpoint(server, model, mode),
        ErrorCode.CONFIGURATION,
    )
    assert not error.retryable
    assert isinstance(error, ConfigurationError)


async def test_a_wrong_base_url_ends_the_run_without_asking_to_rephrase(
    server: WireServer, model: Model
) -> None:
    server.reply_with(HTML_NOT_FOUND)
    result = await ReActLoop(model).run("hi")
    assert result.stop_reason is StopReason.ERROR
    assert isinstance(result.error, ProviderConfigurationError)
    assert result.user_message == DEFAULT_MESSAGES[ErrorCode.CONFIGURATION]
    assert "rephrase" not in (result.user_message or "")
    assert len(server.requests) == 1


STATUSES: dict[int, type[ModelError]] = {
    301: ProviderConfigurationError,
    307: ProviderConfigurationError,
    400: InvalidRequestError,
    401: AuthenticationError,
    402: RateLimitedError,
    403: AuthenticationError,
    404: ProviderConfigurationError,
    405: ProviderConfigurationError,
    408: ModelTimeoutError,
    409: ProviderUnavailableError,
    410: ProviderConfigurationError,
    413: ContextTooLongError,
    415: ProviderConfigurationError,
    418: InvalidRequestError,
    422: ProviderConfigurationError,
    429: RateLimitedError,
    500: ProviderUnavailableError,
    502: ProviderUnavailableError,
    503: ProviderUnavailableError,
    504: ProviderUnavailableError,
    529: ProviderUnavailableError,
}


@pytest.mark.parametrize(("status", "expected"), sorted(STATUSES.items()))
async def test_every_status_is_a_typed_error_naming_the_status_and_url(
    server: WireServer, model: Model, status: int, expected: type[ModelError]
) -> None:
    server.reply_with(Reply(status, (b"nope",), (("location", "/elsewhere"),)))
    with pytest.raises(ModelError) as caught:
        await model.request(REQUEST)
    assert type(caught.value) is expected
    assert f"HTTP {status} for POST {endpoint(server, model)}" in str(caught.value)
    assert caught.value.status == status


async def test_a_redirect_names_where_it_leads(server: WireServer, model: Model) -> None:
    server.reply_with(Reply(308, (), (("location", "https://api.example.com/v1/x"),)))
    with pytest.raises(
        ProviderConfigurationError, match=re.escape("redirects to https://api.example.com/v1/x")
    ):
        await model.request(REQUEST)


@pytest.mark.parametrize("mode", MODES)
async def test_a_refused_connection_names_the_url(mode: str) -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    url = f"http://127.0.0.1:{port}/v1"
    async with OpenAIModel("m", api_key=API_KEY, base_url=url) as model:
        with pytest.raises(
            ProviderUnavailableError, match=re.escape(f"for POST {url}/chat/completions")
        ):
            await call(model, mode)


async def test_a_web_page_instead_of_json_names_the_url(server: WireServer, model: Model) -> None:
    server.reply_with(Reply(200, (b"<html>hello</html>",), (("content-type", "text/html"),)))
    with pytest.raises(InvalidResponseError, match=re.escape(f"from {endpoint(server, model)}")):
        await model.request(REQUEST)
    streamed = endpoint(server, model, "stream")
    with pytest.raises(InvalidResponseError, match=re.escape(f"to {streamed}")):
        await model.stream(REQUEST, _ignore)


@frozen
class GoogleError:
    """One error as Google sends it (its HTTP status, canonical status name, message and an
    ErrorInfo reason) and the type it must be."""

    status: int
    name: str
    message: str
    expected: type[ModelError]
    reason: str | None = None

    def body(self) -> dict[str, object]:
        detail = {} if self.reason is None else {"reason": self.reason, "domain": "googleapis.com"}
        return gemini_error(self.status, self.name, self.message, **detail)


GOOGLE_ERRORS = [
    GoogleError(400, "INVALID_ARGUMENT", "Request contains an invalid argument.",
                InvalidRequestError),
    GoogleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                AuthenticationError, "API_KEY_INVALID"),
    GoogleError(400, "INVALID_ARGUMENT", "The input token count (1054016) exceeds the maximum"
                " number of tokens allowed (1048576).", ContextTooLongError),
    GoogleError(400, "FAILED_PRECONDITION", "User location is not supported for the API use.",
                ProviderConfigurationError),
    GoogleError(402, "RESOURCE_EXHAUSTED", "Your prepayment credits are depleted.",
                RateLimitedError),
    GoogleError(403, "PERMISSION_DENIED", "The caller does not have permission",
                AuthenticationError),
    GoogleError(404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta",
                ProviderConfigurationError),
    GoogleError(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota", RateLimitedError),
    GoogleError(500, "INTERNAL", "An internal error has occurred.", ProviderUnavailableError),
    GoogleError(503, "UNAVAILABLE", "The model is overloaded. Please try again later.",
                ProviderUnavailableError),
    GoogleError(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.",
                ProviderUnavailableError),
]  # fmt: skip
"""Google's documented error statuses (ai.google.dev/gemini-api/docs/troubleshooting, "Gemini API
backend service error codes"; 402 from its API errors page), each as Google sends it, and the type
it must be; a bad key comes as a 400 whose details say API_KEY_INVALID."""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", GOOGLE_ERRORS, ids=lambda c: f"{c.status}-{c.reason or c.name}")
async def test_every_documented_gemini_error_is_typed(
    server: WireServer, gemini: GeminiModel, mode: str, case: GoogleError
) -> None:
    server.reply_with(json_reply(case.body(), case.status))
    with pytest.raises(ModelError) as caught:
        await call(gemini, mode)
    assert type(caught.value) is case.expected
    assert (caught.value.status, caught.value.provider) == (case.status, "google")
    assert case.message in str(caught.value) and case.name in str(caught.value)


async def test_a_gemini_failed_precondition_says_what_to_check(
    server: WireServer, gemini: GeminiModel
) -> None:
    body = gemini_error(400, "FAILED_PRECONDITION", "User location is not supported.")
    server.reply_with(json_reply(body, 400))
    with pytest.raises(ProviderConfigurationError, match=r"billing, region, project"):
        await gemini.request(REQUEST)


async def test_a_gemini_retry_delay_in_the_body_is_the_errors_wait(
    server: WireServer, gemini: GeminiModel
) -> None:
    body = gemini_error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota")
    retry = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "22s"}
    body["error"]["details"] = [retry]
    server.reply_with(json_reply(body, 429))
    with pytest.raises(RateLimitedError) as caught:
        await gemini.request(REQUEST)
    assert (caught.value.retry_after, caught.value.retryable) == (22.0, True)


async def test_a_retry_after_header_wins_over_a_gemini_retry_delay(
    server: WireServer, gemini: GeminiModel
) -> None:
    body = gemini_error(429, "RESOURCE_EXHAUSTED", "slow down")
    body["error"]["details"] = [{"retryDelay": "22s"}]
    server.reply_with(json_reply(body, 429, [("retry-after", "3")]))
    with pytest.raises(RateLimitedError) as caught:
        await gemini.request(REQUEST)
    assert caught.value.retry_after == 3.0

"""Azure OpenAI over loopback: the URL of each API style and protocol, the `api-key` header or a
token provider's bearer token (asked for on every request), the body as the vendor's types take
it, and Azure's streams with their content-filter chunks (tests/providers/azure_examples.py)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from reactloop._core._messages import FinishReason, ModelRequest, TextDelta, UserMessage
from reactloop._errors import AuthenticationError, ConfigurationError
from reactloop._providers import (
    AzureOpenAIModel,
    AzureOpenAIResponsesModel,
    model_from_string,
    model_profile,
)
from tests.providers.azure_examples import (
    DONE,
    UNAUTHORIZED,
    annotation,
    answer_stream,
    chunk,
    completion,
)
from tests.providers.render_responses import responses_json
from tests.providers.wire_server import WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

KEY = "az-key-SECRET-0123456789"
HI = ModelRequest((UserMessage("hi"),))
AzureModel = AzureOpenAIModel | AzureOpenAIResponsesModel
VERSION = "2024-10-21"


def _reply(responses: bool) -> Any:
    return json_reply(responses_json("ok") if responses else completion("ok"))


@pytest.mark.parametrize(
    ("responses", "api_version", "path"),
    [
        (False, None, "/openai/v1/chat/completions"),
        (False, VERSION, f"/openai/deployments/prod-gpt/chat/completions?api-version={VERSION}"),
        (True, None, "/openai/v1/responses"),
        (True, "2025-04-01-preview", "/openai/responses?api-version=2025-04-01-preview"),
    ],
)
async def test_each_api_style_and_protocol_posts_to_its_url_with_the_api_key(
    server: WireServer, responses: bool, api_version: str | None, path: str
) -> None:
    cls = AzureOpenAIResponsesModel if responses else AzureOpenAIModel
    server.reply_with(_reply(responses))
    async with cls(
        "prod-gpt", model="gpt-4.1", endpoint=f"{server.url}/", api_version=api_version,
        api_key=KEY,
    ) as model:  # fmt: skip
        await model.request(HI)
    sent = server.requests[0]
    assert sent.path == path
    assert sent.headers["api-key"] == KEY
    assert "authorization" not in sent.headers
    assert sent.json()["model"] == "prod-gpt"


async def test_the_environment_names_endpoint_key_and_dated_version(
    server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_VERSION", VERSION)
    server.reply_with(_reply(False))
    model = model_from_string("azure:prod-gpt")
    assert isinstance(model, AzureOpenAIModel)
    async with model:
        await model.request(HI)
    deployment = "/openai/deployments/prod-gpt/chat/completions"
    assert server.requests[0].path == f"{deployment}?api-version={VERSION}"
    assert server.requests[0].headers["api-key"] == KEY


async def test_azure_responses_strings_name_a_deployment_on_the_v1_api(
    server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    server.reply_with(_reply(True))
    model = model_from_string("azure-responses:prod-gpt")
    assert isinstance(model, AzureOpenAIResponsesModel)
    async with model:
        response = await model.request(HI)
    assert response.message.text == "ok"
    assert server.requests[0].path == "/openai/v1/responses"


def _counting_sync() -> tuple[Callable[[], str], list[str]]:
    given: list[str] = []
    numbers = itertools.count(1)

    def provider() -> str:
        given.append(f"entra-token-{next(numbers)}")
        return given[-1]

    return provider, given


def _counting_async() -> tuple[Callable[[], Awaitable[str]], list[str]]:
    given: list[str] = []
    numbers = itertools.count(1)

    async def provider() -> str:
        given.append(f"entra-token-{next(numbers)}")
        return given[-1]

    return provider, given


@pytest.mark.parametrize("responses", [False, True])
@pytest.mark.parametrize("make", [_counting_sync, _counting_async], ids=["sync", "async"])
async def test_a_token_provider_is_asked_for_every_request(
    server: WireServer, responses: bool, make: Callable[[], tuple[Any, list[str]]]
) -> None:
    provider, given = make()
    cls = AzureOpenAIResponsesModel if responses else AzureOpenAIModel
    server.reply_with(_reply(responses), _reply(responses))
    async with cls("prod-gpt", endpoint=server.url, token_provider=provider) as model:
        await model.request(HI)
        await model.request(HI)
    assert given == ["entra-token-1", "entra-token-2"]
    sent = [request.headers for request in server.requests]
    assert [h["authorization"] for h in sent] == ["Bearer entra-token-1", "Bearer entra-token-2"]
    assert all("api-key" not in h for h in sent)


async def test_a_streamed_request_asks_for_its_own_token(server: WireServer) -> None:
    provider, given = _counting_async()
    server.reply_with(sse_reply(answer_stream("Hel", "lo")))
    async with AzureOpenAIModel("prod-gpt", endpoint=server.url, token_provider=provider) as model:
        response = await model.stream(HI, _ignore)
    assert response.message.text == "Hello"
    assert server.requests[0].headers["authorization"] == f"Bearer {given[0]}"


async def test_a_sync_token_provider_runs_off_the_event_loops_thread(server: WireServer) -> None:
    threads: list[int] = []

    def provider() -> str:
        threads.append(threading.get_ident())
        return "entra-token"

    server.reply_with(_reply(False))
    async with AzureOpenAIModel("prod-gpt", endpoint=server.url, token_provider=provider) as model:
        await model.request(HI)
    assert threads and threads[0] != threading.get_ident()


def _failing() -> str:
    raise RuntimeError("no credential in this environment")


async def _blank() -> str:
    return " "


@pytest.mark.parametrize("provider", [_failing, _blank], ids=["raises", "blank"])
@pytest.mark.parametrize("stream", [False, True])
async def test_a_failing_token_provider_is_an_authentication_error_and_nothing_is_sent(
    server: WireServer, provider: Callable[[], Any], stream: bool
) -> None:
    async with AzureOpenAIModel("prod-gpt", endpoint=server.url, token_provider=provider) as model:
        with pytest.raises(AuthenticationError, match="token provider") as caught:
            await (model.stream(HI, _ignore) if stream else model.request(HI))
    assert caught.value.provider == "azure"
    assert server.requests == []


async def test_the_token_is_masked_in_an_error_that_echoes_it(server: WireServer) -> None:
    token = "eyJ0eXAi-entra-SECRET-token"
    echo = {"error": {"code": "401", "message": f"Token {token} is expired."}}
    server.reply_with(json_reply(echo, 401))
    model = AzureOpenAIModel("prod-gpt", endpoint=server.url, token_provider=lambda: token)
    async with model:
        with pytest.raises(AuthenticationError) as caught:
            await model.request(HI)
    assert token not in str(caught.value)
    assert "Token *** is expired" in str(caught.value)


async def test_the_key_is_masked_in_an_error_that_echoes_it(server: WireServer) -> None:
    echo = {"error": {"code": "401", "message": f"Key {KEY} is not valid."}}
    server.reply_with(json_reply(echo, 401))
    async with AzureOpenAIModel("prod-gpt", endpoint=server.url, api_key=KEY) as model:
        with pytest.raises(AuthenticationError) as caught:
            await model.request(HI)
    assert KEY not in str(caught.value)
    assert UNAUTHORIZED["error"]["code"] == "401"


def test_exactly_one_credential_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="both api_key and token_provider"):
        AzureOpenAIModel("d", endpoint="https://r.openai.azure.com", api_key=KEY,
                         token_provider=lambda: "t")  # fmt: skip
    with pytest.raises(ConfigurationError, match="needs a credential"):
        AzureOpenAIResponsesModel("d", endpoint="https://r.openai.azure.com")
    with pytest.raises(ConfigurationError, match="token_provider must be a callable"):
        AzureOpenAIModel("d", endpoint="https://r.openai.azure.com", token_provider="t")  # type: ignore[arg-type]


def test_a_token_provider_wins_over_a_key_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    model = AzureOpenAIModel("d", endpoint="https://r.openai.azure.com", token_provider=_blank)
    assert model.provider == "azure"


@pytest.mark.parametrize(
    "endpoint",
    [
        "r.openai.azure.com",
        "https://r.openai.azure.com/openai/v1",
        "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
        "",
    ],
)
def test_an_endpoint_must_be_the_resource_url(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(ConfigurationError, match=r"AzureOpenAIModel\.endpoint must be"):
        AzureOpenAIModel("d", endpoint=endpoint or None, api_key=KEY)


@pytest.mark.parametrize("version", ["2024-10", "latest", "v2"])
def test_an_api_version_is_v1_or_dated(version: str) -> None:
    with pytest.raises(ConfigurationError, match="api_version must be"):
        AzureOpenAIModel("d", endpoint="https://r.openai.azure.com", api_version=version,
                         api_key=KEY)  # fmt: skip


def test_v1_asked_by_name_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_VERSION", VERSION)
    model = AzureOpenAIModel("d", endpoint="https://r.cognitiveservices.azure.com",
                             api_version="v1", api_key=KEY)  # fmt: skip
    assert model.base_url == "https://r.cognitiveservices.azure.com/openai/v1"


def test_the_profile_follows_the_model_hint_else_the_deployment_name() -> None:
    def make(deployment: str, hint: str | None = None) -> AzureModel:
        return AzureOpenAIResponsesModel(deployment, model=hint, api_key=KEY,
                                         endpoint="https://r.openai.azure.com")  # fmt: skip

    assert make("prod", "o4-mini").profile == model_profile("o4-mini")
    assert make("gpt-4.1").profile == model_profile("gpt-4.1")
    assert make("prod", "o4-mini").profile != make("prod", "gpt-4.1").profile


async def test_extra_body_and_headers_go_with_the_request(server: WireServer) -> None:
    server.reply_with(_reply(False))
    async with AzureOpenAIModel(
        "prod-gpt", endpoint=server.url, api_key=KEY, extra_body={"user": "u-1"},
        extra_headers={"x-ms-client-request-id": "req-1"},
    ) as model:  # fmt: skip
        await model.request(HI)
    assert server.requests[0].json()["user"] == "u-1"
    assert server.requests[0].headers["x-ms-client-request-id"] == "req-1"


def test_the_repr_shows_the_deployment_and_never_the_key() -> None:
    model = AzureOpenAIModel("prod", endpoint="https://r.openai.azure.com", api_key=KEY)
    assert KEY not in repr(model)
    assert repr(model) == (
        "AzureOpenAIModel(deployment='prod', base_url='https://r.openai.azure.com/openai/v1')"
    )


async def _ignore(delta: object) -> None:
    return None


async def test_a_stream_with_azures_filter_chunks_reads_as_a_plain_answer(
    server: WireServer,
) -> None:
    deltas: list[object] = []

    async def keep(delta: object) -> None:
        deltas.append(delta)

    server.reply_with(sse_reply(answer_stream("Blue", " sky")))
    async with AzureOpenAIModel("prod-gpt", endpoint=server.url, api_key=KEY) as model:
        response = await model.stream(HI, keep)
    assert response.message.text == "Blue sky"
    assert response.finish_reason is FinishReason.STOP
    assert response.model == "gpt-4o-2024-11-20"
    assert response.id == "chatcmpl-az1"
    assert deltas == [TextDelta("Blue"), TextDelta(" sky")]


async def test_asynchronous_filter_annotations_after_the_finish_are_read(
    server: WireServer,
) -> None:
    chunks = answer_stream("Blue", " sky")[:-1]
    server.reply_with(sse_reply([*chunks, annotation(0, 8), DONE]))
    async with AzureOpenAIModel("prod-gpt", endpoint=server.url, api_key=KEY) as model:
        response = await model.stream(HI, _ignore)
    assert response.message.text == "Blue sky"
    assert response.finish_reason is FinishReason.STOP


async def test_a_chunk_with_only_filter_results_and_no_delta_is_accepted(
    server: WireServer,
) -> None:
    chunks = answer_stream("Blue")
    only_verdicts = chunk(None, content_filter_results={"hate": {"filtered": False}})
    server.reply_with(sse_reply([*chunks[:3], only_verdicts, *chunks[3:]]))
    async with AzureOpenAIModel("prod-gpt", endpoint=server.url, api_key=KEY) as model:
        response = await model.stream(HI, _ignore)
    assert response.message.text == "Blue"

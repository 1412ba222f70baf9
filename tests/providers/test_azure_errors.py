"""Azure OpenAI's errors, each typed (shapes: tests/providers/azure_examples.py): the content
filter on the prompt (HTTP 400 `content_filter`) and on the answer (`finish_reason:
"content_filter"`, or a Responses answer `incomplete` for it), a bad key, a missing deployment,
an operation the deployment's model does not do, and rate limits with Azure's retry headers."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop._core._messages import FinishReason, ModelRequest, UserMessage
from reactloop._errors import (
    AuthenticationError,
    ProviderConfigurationError,
    RateLimitedError,
)
from reactloop._providers import (
    AzureOpenAIModel,
    AzureOpenAIResponsesModel,
    ContentFilteredError,
    FilterVerdict,
)
from tests.providers.azure_examples import (
    DEPLOYMENT_NOT_FOUND,
    OPERATION_NOT_SUPPORTED,
    RATE_LIMITED,
    UNAUTHORIZED,
    answer_stream,
    completion,
    prompt_blocked,
)
from tests.providers.render import sse
from tests.providers.render_responses import responses_json, responses_stream
from tests.providers.wire_server import WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

KEY = "az-key-SECRET-0123456789"
HI = ModelRequest((UserMessage("hi"),))


async def _ignore(delta: object) -> None:
    return None


def _model(server: WireServer, responses: bool) -> AzureOpenAIModel | AzureOpenAIResponsesModel:
    cls = AzureOpenAIResponsesModel if responses else AzureOpenAIModel
    return cls("prod-gpt", endpoint=server.url, api_key=KEY)


async def _call(model: Any, stream: bool) -> Any:
    return await (model.stream(HI, _ignore) if stream else model.request(HI))


BOTH = pytest.mark.parametrize(
    ("responses", "stream"), [(False, False), (False, True), (True, False), (True, True)]
)


@BOTH
async def test_a_prompt_the_filter_refuses_is_content_filtered_with_its_verdicts(
    server: WireServer, responses: bool, stream: bool
) -> None:
    server.reply_with(json_reply(prompt_blocked(hate="medium"), 400))
    async with _model(server, responses) as model:
        with pytest.raises(ContentFilteredError) as caught:
            await _call(model, stream)
    error = caught.value
    assert (error.where, error.status, error.reason) == ("prompt", 400, "content_filter")
    assert error.blocked == ("hate", "jailbreak")
    assert FilterVerdict("hate", True, "medium") in error.verdicts
    assert FilterVerdict("jailbreak", True, "detected") in error.verdicts
    assert FilterVerdict("violence", False, "safe") in error.verdicts
    assert "blocked: hate, jailbreak" in str(error)
    assert error.code == "content_filtered"


async def test_a_prompt_verdict_without_any_block_still_says_content_filter(
    server: WireServer,
) -> None:
    body = prompt_blocked(jailbreak=False)
    del body["error"]["innererror"]
    server.reply_with(json_reply(body, 400))
    async with _model(server, False) as model:
        with pytest.raises(ContentFilteredError) as caught:
            await model.request(HI)
    assert caught.value.verdicts == ()
    assert caught.value.where == "prompt"


@pytest.mark.parametrize("stream", [False, True])
async def test_an_answer_the_filter_cut_before_any_text_is_content_filtered(
    server: WireServer, stream: bool
) -> None:
    if stream:
        server.reply_with(sse_reply(answer_stream(finish="content_filter", violence="high")))
    else:
        server.reply_with(json_reply(completion(None, "content_filter", violence="high")))
    async with _model(server, False) as model:
        with pytest.raises(ContentFilteredError) as caught:
            await _call(model, stream)
    assert caught.value.where == "answer"
    assert caught.value.blocked == ("violence",)
    assert caught.value.verdicts[0] == FilterVerdict("violence", True, "high")


@pytest.mark.parametrize("stream", [False, True])
async def test_a_partial_answer_the_filter_cut_keeps_its_text_and_says_why(
    server: WireServer, stream: bool
) -> None:
    if stream:
        chunks = answer_stream("Once", " upon", finish="content_filter", violence="medium")
        server.reply_with(sse_reply(chunks))
    else:
        server.reply_with(json_reply(completion("Once upon", "content_filter", violence="medium")))
    async with _model(server, False) as model:
        response = await _call(model, stream)
    assert response.message.text == "Once upon"
    assert response.finish_reason is FinishReason.CONTENT_FILTER


@pytest.mark.parametrize("stream", [False, True])
async def test_a_responses_answer_incomplete_for_the_filter_before_any_text_is_content_filtered(
    server: WireServer, stream: bool
) -> None:
    whole = responses_json(status="incomplete", incomplete="content_filter")
    if stream:
        started = {**whole, "status": "in_progress", "incomplete_details": None}
        events = [sse({"type": "response.created", "response": started}, "response.created")]
        events.append(sse({"type": "response.incomplete", "response": whole}))
        server.reply_with(sse_reply(events))
    else:
        server.reply_with(json_reply(whole))
    async with _model(server, True) as model:
        with pytest.raises(ContentFilteredError) as caught:
            await _call(model, stream)
    assert caught.value.where == "answer"
    assert "incomplete_details.reason content_filter" in str(caught.value)


async def test_a_partial_responses_answer_cut_by_the_filter_is_kept(server: WireServer) -> None:
    body = responses_json("Once upon", status="incomplete", incomplete="content_filter")
    server.reply_with(json_reply(body))
    async with _model(server, True) as model:
        response = await model.request(HI)
    assert response.message.text == "Once upon"
    assert response.finish_reason is FinishReason.CONTENT_FILTER


async def test_a_plain_responses_stream_still_reads(server: WireServer) -> None:
    server.reply_with(sse_reply(responses_stream("fine")))
    async with _model(server, True) as model:
        response = await model.stream(HI, _ignore)
    assert response.message.text == "fine"


@BOTH
async def test_a_wrong_key_is_an_authentication_error(
    server: WireServer, responses: bool, stream: bool
) -> None:
    server.reply_with(json_reply(UNAUTHORIZED, 401))
    async with _model(server, responses) as model:
        with pytest.raises(AuthenticationError, match="Access denied") as caught:
            await _call(model, stream)
    assert caught.value.status == 401
    assert KEY not in str(caught.value)


@BOTH
async def test_a_missing_deployment_is_a_configuration_error_naming_it(
    server: WireServer, responses: bool, stream: bool
) -> None:
    server.reply_with(json_reply(DEPLOYMENT_NOT_FOUND, 404))
    async with _model(server, responses) as model:
        with pytest.raises(ProviderConfigurationError, match="check the deployment name") as caught:
            await _call(model, stream)
    assert caught.value.status == 404
    assert caught.value.url is not None
    assert "DeploymentNotFound" in str(caught.value)


@BOTH
async def test_an_operation_the_deployments_model_does_not_do_is_a_configuration_error(
    server: WireServer, responses: bool, stream: bool
) -> None:
    server.reply_with(json_reply(OPERATION_NOT_SUPPORTED, 400))
    async with _model(server, responses) as model:
        with pytest.raises(ProviderConfigurationError, match="cannot do this operation") as caught:
            await _call(model, stream)
    assert caught.value.status == 400
    assert not caught.value.retryable


@pytest.mark.parametrize(
    ("header", "seconds"), [(("retry-after-ms", "1500"), 1.5), (("retry-after", "7"), 7.0)]
)
@pytest.mark.parametrize("responses", [False, True])
async def test_a_rate_limit_carries_azures_retry_hint(
    server: WireServer, responses: bool, header: tuple[str, str], seconds: float
) -> None:
    server.reply_with(json_reply(RATE_LIMITED, 429, [header]))
    async with _model(server, responses) as model:
        with pytest.raises(RateLimitedError) as caught:
            await model.request(HI)
    assert caught.value.retry_after == seconds
    assert caught.value.retryable

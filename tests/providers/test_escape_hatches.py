"""The provider escape hatches: `top_p`, stop sequences, `seed` and `service_tier` in
`ModelSettings`, extra body fields and extra headers on the provider. Each request is sent over
the loopback server (answered with a recorded vendor response) and read back as the server got it;
the fields reactloop owns are never overridden by an extra body field."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reactloop._core._messages import ModelRequest, UserMessage
from reactloop._core._settings import ModelSettings, ResponseFormat, ResponseFormatKind
from reactloop._errors import ConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._output._spec import OutputStrategy
from reactloop._providers import AnthropicModel, OpenAIModel
from reactloop.output import OutputOptions
from reactloop.testing import ScriptedModel
from tests.providers.conftest import API_KEY
from tests.providers.protocol import OpenAIRequestSchema, check_anthropic_request
from tests.providers.render import anthropic_stream, openai_stream
from tests.providers.test_recorded_usage import RECORDED, responses
from tests.providers.wire_server import WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

SETTINGS = ModelSettings(top_p=0.5, stop_sequences=["END", "###"], seed=7, service_tier="flex")
OPENAI_ANSWER = responses(RECORDED / "openai-chat" / "test_openai_chat_prompt_cache_e2e.yaml")[0]
ANTHROPIC_ANSWER = responses(RECORDED / "anthropic" / "test_anthropic_opus_5_features.yaml")[0]


def ask(settings: ModelSettings = ModelSettings()) -> ModelRequest:
    return ModelRequest((UserMessage("Hi"),), settings=settings)


async def test_openai_sends_the_settings_and_extra_fields(
    server: WireServer, openai_schema: OpenAIRequestSchema
) -> None:
    extra: dict[str, Any] = {"prompt_cache_key": "k1", "metadata": {"run": "r1"}}
    async with OpenAIModel(
        "gpt-4o", api_key=API_KEY, base_url=f"{server.url}/v1", extra_body=extra,
        extra_headers={"x-team": "ml"},
    ) as model:  # fmt: skip
        server.reply_with(json_reply(OPENAI_ANSWER["parsed_body"]))
        await model.request(ask(SETTINGS))
        server.reply_with(sse_reply(openai_stream("ok")))
        await model.stream(ask(SETTINGS), _ignore)
    for sent in server.requests:
        body = sent.json()
        assert (body["top_p"], body["stop"], body["seed"]) == (0.5, ["END", "###"], 7)
        assert body["service_tier"] == "flex"
        assert (body["prompt_cache_key"], body["metadata"]) == ("k1", {"run": "r1"})
        assert sent.headers["x-team"] == "ml"
        openai_schema.check(body)


async def test_openai_leaves_out_what_is_not_set(server: WireServer, openai: OpenAIModel) -> None:
    server.reply_with(json_reply(OPENAI_ANSWER["parsed_body"]))
    await openai.request(ask())
    assert not {"top_p", "stop", "seed", "service_tier"} & set(server.requests[0].json())


async def test_anthropic_sends_the_settings_and_extra_fields(server: WireServer) -> None:
    settings = ModelSettings(stop_sequences=("END",), service_tier="standard_only")
    thinking = {"type": "enabled", "budget_tokens": 1024}
    async with AnthropicModel(
        "claude-sonnet-4-5", api_key=API_KEY, base_url=server.url,
        extra_body={"thinking": thinking}, extra_headers={"anthropic-beta": "b1"},
    ) as model:  # fmt: skip
        server.reply_with(json_reply(ANTHROPIC_ANSWER["parsed_body"]))
        answer = await model.request(ask(settings))
        server.reply_with(sse_reply(anthropic_stream("ok")))
        await model.stream(ask(settings), _ignore)
    assert answer.message.text == "2 + 2 = 4"
    for sent in server.requests:
        body = sent.json()
        assert body["stop_sequences"] == ["END"] and "top_p" not in body
        assert body["service_tier"] == "standard_only"
        assert body["thinking"] == thinking
        assert sent.headers["anthropic-beta"] == "b1"
        check_anthropic_request({k: v for k, v in body.items() if k != "thinking"})


async def test_anthropic_refuses_top_p_before_sending(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    """The Messages API defines no sampling parameters (the anthropic SDK's request types)."""
    with pytest.raises(ConfigurationError, match=r"ModelSettings\.top_p .*defines none"):
        await anthropic.request(ask(ModelSettings(top_p=0.5)))
    assert server.requests == []


async def test_anthropic_refuses_a_seed_before_sending(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    with pytest.raises(ConfigurationError, match=r"ModelSettings\.seed .*takes no seed"):
        await anthropic.request(ask(ModelSettings(seed=7)))
    assert server.requests == []


@pytest.mark.parametrize(
    ("cls", "key"),
    [(OpenAIModel, "messages"), (OpenAIModel, "temperature"), (OpenAIModel, "stop"),
     (OpenAIModel, "max_completion_tokens"), (AnthropicModel, "system"),
     (AnthropicModel, "max_tokens"), (AnthropicModel, "stop_sequences")],
)  # fmt: skip
def test_an_extra_field_reactloop_sets_is_refused_at_construction(
    cls: type[OpenAIModel | AnthropicModel], key: str
) -> None:
    with pytest.raises(
        ConfigurationError, match=rf"{cls.__name__}\.extra_body .*{key!r}"
    ) as caught:
        cls("m", api_key=API_KEY, base_url="http://127.0.0.1:9", extra_body={key: 1, "fine": 2})
    assert caught.value.option == f"{cls.__name__}.extra_body"


async def test_an_extra_field_reactloop_sets_for_this_request_is_refused(
    server: WireServer,
) -> None:
    """`output_config` is Anthropic's only when a structured output asks for it: an extra body
    with it works for plain requests and is refused (naming it) when reactloop sets it."""
    extra = {"output_config": {"effort": "high"}}
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    structured = ModelSettings(
        response_format=ResponseFormat(ResponseFormatKind.JSON_SCHEMA, "x", schema, True)
    )
    async with AnthropicModel(
        "claude-sonnet-4-5", api_key=API_KEY, base_url=server.url, extra_body=extra
    ) as model:
        server.reply_with(json_reply(ANTHROPIC_ANSWER["parsed_body"]))
        await model.request(ask())
        assert server.requests[0].json()["output_config"] == {"effort": "high"}
        message = re.escape("in this request ('output_config' is one)")
        with pytest.raises(ConfigurationError, match=message):
            await model.request(ask(structured))
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("cls", "model"), [(OpenAIModel, "gpt-5"), (AnthropicModel, "claude-opus-4-7")]
)
async def test_top_p_is_refused_for_a_model_that_takes_no_sampling(
    server: WireServer, cls: type[OpenAIModel | AnthropicModel], model: str
) -> None:
    """Like `temperature`: the model's profile says it takes none, so nothing is sent."""
    async with cls(model, api_key=API_KEY, base_url=f"{server.url}/v1") as chosen:
        with pytest.raises(
            ConfigurationError, match=r"ModelSettings\.top_p must be unset"
        ) as caught:
            await chosen.request(ask(ModelSettings(top_p=0.5)))
    assert caught.value.option == "ModelSettings.top_p"
    assert server.requests == []


async def test_a_native_structured_output_keeps_every_setting() -> None:
    """The NATIVE strategy adds its response format to the settings and drops none of them."""
    model = ScriptedModel(['{"result": ["a"]}'])
    native = OutputOptions(strategy=OutputStrategy.NATIVE)
    loop = ReActLoop(model, output_type=list[str], output=native, settings=SETTINGS)
    assert (await loop.run("list")).output == ["a"]
    sent = model.requests[0].settings
    assert sent.response_format is not None
    assert (sent.top_p, sent.stop_sequences, sent.seed) == (0.5, ("END", "###"), 7)
    assert sent.service_tier == "flex"


async def _ignore(delta: object) -> None:
    return None

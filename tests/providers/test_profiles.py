"""Model profiles over the loopback server (ADR-0025): what a model accepts comes from its
family's profile or the user's; a vendor's 400 about a parameter names it and the model; a model
that refuses a forced tool choice never gets the forced final-answer tool; a `pause_turn` is
continued with the paused content sent back as it came."""

from __future__ import annotations

from typing import Any

import attrs
import orjson
import pytest

from reactloop._core._messages import (
    FinishReason,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    TextDelta,
    UserMessage,
)
from reactloop._core._settings import ModelSettings
from reactloop._errors import ConfigurationError, ProviderConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._output._spec import FINAL_TOOL, OutputStrategy
from reactloop._providers import AnthropicModel, OpenAIModel
from reactloop._providers._anthropic import MAX_CONTINUATIONS
from reactloop.output import OutputOptions
from reactloop.providers import ModelProfile, model_profile
from tests.providers.conftest import API_KEY
from tests.providers.protocol import check_anthropic_request
from tests.providers.render import anthropic_json, anthropic_stream, sse
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

HOT = ModelRequest((UserMessage("hi"),), settings=ModelSettings(temperature=0.5))
MODES = ["request", "stream"]


async def _ignore(delta: ModelDelta) -> None:
    return None


async def call(model: OpenAIModel | AnthropicModel, request: ModelRequest, mode: str) -> Any:
    if mode == "stream":
        return await model.stream(request, _ignore)
    return await model.request(request)


def anthropic(server: WireServer, name: str, **options: Any) -> AnthropicModel:
    return AnthropicModel(name, api_key=API_KEY, base_url=server.url, **options)


def openai(server: WireServer, name: str, **options: Any) -> OpenAIModel:
    return OpenAIModel(name, api_key=API_KEY, base_url=f"{server.url}/v1", **options)


# -- profiles by family ---------------------------------------------------------------------

NO_SAMPLING = [
    "claude-sonnet-4-5", "claude-opus-4-1", "claude-3-7-sonnet-latest", "claude-haiku-4-5",
    "claude-opus-5", "claude-opus-5-1-20270101", "claude-sonnet-5", "claude-sonnet-5-20261001",
    "claude-haiku-5", "claude-opus-4-7", "claude-opus-4-8", "gpt-5", "gpt-5.4-mini", "o3",
    "o4-mini", "anthropic/claude-opus-5",
]  # fmt: skip
SAMPLING = [
    "gpt-4.1-mini", "gpt-4o", "llama-3.3-70b", "my-local-model",
]  # fmt: skip


@pytest.mark.parametrize("name", NO_SAMPLING)
def test_a_model_of_a_family_that_dropped_sampling_takes_none(name: str) -> None:
    assert model_profile(name).sampling is False


@pytest.mark.parametrize("name", SAMPLING)
def test_older_families_and_unknown_models_take_sampling(name: str) -> None:
    assert model_profile(name).sampling is True


def test_an_anthropic_model_of_no_known_family_takes_no_sampling() -> None:
    """The Messages API defines no sampling parameters, whatever the model id."""
    model = AnthropicModel("acme-llm", api_key=API_KEY, base_url="http://127.0.0.1:9")
    assert model.profile == attrs.evolve(ModelProfile(), sampling=False)


def test_an_unknown_model_gets_the_permissive_profile() -> None:
    assert model_profile("my-local-model") == ModelProfile()


def test_newer_claude_families_refuse_forced_tool_choice_older_ones_take_it() -> None:
    assert not model_profile("claude-sonnet-5").forced_tool_choice
    assert model_profile("claude-sonnet-4-5").forced_tool_choice
    assert model_profile("claude-opus-4-8").system_turns
    assert not model_profile("claude-opus-5").system_turns


async def test_a_profile_is_checked_at_construction(server: WireServer) -> None:
    with pytest.raises(ConfigurationError, match=r"ModelProfile\.sampling"):
        ModelProfile(sampling="no")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"AnthropicModel\.profile"):
        anthropic(server, "claude-opus-5", profile={"sampling": True})
    with pytest.raises(ConfigurationError, match=r"OpenAIModel\.profile"):
        openai(server, "gpt-5", profile="permissive")


# -- sampling: refused before sending, unless the profile is overridden ----------------------


@pytest.mark.parametrize("mode", MODES)
async def test_a_new_claude_family_refuses_temperature_before_sending(
    server: WireServer, mode: str
) -> None:
    async with anthropic(server, "claude-sonnet-5-20261001") as model:
        with pytest.raises(ProviderConfigurationError) as caught:
            await call(model, HOT, mode)
    assert caught.value.option == "ModelSettings.temperature"
    assert "claude-sonnet-5-20261001" in str(caught.value)
    assert server.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_an_openai_reasoning_family_refuses_temperature_before_sending(
    server: WireServer, mode: str
) -> None:
    async with openai(server, "gpt-5.4-mini") as model:
        with pytest.raises(ProviderConfigurationError, match=r"gpt-5\.4-mini"):
            await call(model, HOT, mode)
    assert server.requests == []


async def test_an_override_sends_what_the_family_would_refuse(server: WireServer) -> None:
    server.reply_with(json_reply(anthropic_json("ok")))
    profile = attrs.evolve(model_profile("claude-opus-5"), sampling=True)
    async with anthropic(server, "claude-opus-5", profile=profile) as model:
        assert (await model.request(HOT)).message.text == "ok"
    assert server.requests[0].json()["temperature"] == 0.5


async def test_an_unknown_model_sends_what_the_user_set(server: WireServer) -> None:
    body = {
        "id": "c1",
        "model": "my-local-model",
        "choices": [{"index": 0, "message": {"content": "ok"}, "finish_reason": "stop"}],
    }
    server.reply_with(json_reply(body))
    async with openai(server, "my-local-model") as model:
        assert (await model.request(HOT)).message.text == "ok"
    assert server.requests[0].json()["temperature"] == 0.5


# -- a vendor's 400 about a parameter names it and the model ---------------------------------

OPENAI_400 = {
    "error": {
        "message": "Unsupported parameter: 'temperature' is not supported with this model.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_parameter",
    }
}
ANTHROPIC_400 = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "`service_tier` is deprecated for this model.",
    },
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
async def test_a_400_about_a_parameter_names_the_parameter_and_the_model(
    server: WireServer, vendor: str, mode: str
) -> None:
    # An id of no known family: what the user set is sent, and the vendor judges (a service
    # tier on Anthropic, whose API defines no sampling parameters at all).
    value: object
    if vendor == "openai":
        server.reply_with(json_reply(OPENAI_400, 400))
        model: OpenAIModel | AnthropicModel = openai(server, "future-model-9")
        request, name, value = HOT, "temperature", 0.5
    else:
        server.reply_with(json_reply(ANTHROPIC_400, 400))
        model = anthropic(server, "future-model-9")
        tier = ModelSettings(service_tier="standard_only")
        request, name, value = attrs.evolve(HOT, settings=tier), "service_tier", "standard_only"
    async with model:
        with pytest.raises(ConfigurationError) as caught:
            await call(model, request, mode)
    error = caught.value
    assert isinstance(error, ProviderConfigurationError)
    assert error.option == name and error.value == value
    assert f"'future-model-9' does not take the parameter '{name}'" in str(error)
    assert error.status == 400


# -- structured output where forced tool choice is refused -----------------------------------


@attrs.frozen
class Forecast:
    city: str
    celsius: int


async def test_auto_never_picks_the_forced_tool_for_a_model_that_refuses_forcing(
    server: WireServer,
) -> None:
    async with anthropic(server, "claude-opus-5") as refusing:
        output = ReActLoop(refusing, output_type=Forecast).config.output
        assert output is not None and output.strategy is OutputStrategy.NATIVE
        # A type strict mode cannot express: the schema in the prompt, not the forced tool.
        loose = ReActLoop(refusing, output_type=dict[str, int]).config.output
        assert loose is not None and loose.strategy is OutputStrategy.PROMPTED
    async with anthropic(server, "claude-sonnet-4-5") as forcing:
        loose = ReActLoop(forcing, output_type=dict[str, int]).config.output
        assert loose is not None and loose.strategy is OutputStrategy.TOOL
    no_native = ModelProfile(native_output=False, forced_tool_choice=False)
    async with openai(server, "gpt-5", profile=no_native) as plain:
        output = ReActLoop(plain, output_type=Forecast).config.output
        assert output is not None and output.strategy is OutputStrategy.PROMPTED


async def test_a_prompted_answer_ends_the_run_without_forcing_a_tool(server: WireServer) -> None:
    server.reply_with(json_reply(anthropic_json('{"a": 1}')))
    async with anthropic(server, "claude-opus-5") as model:
        result = await ReActLoop(model, output_type=dict[str, int]).run("Count?")
    assert result.error is None and result.output == {"a": 1}
    sent = server.requests[0].json()
    check_anthropic_request(sent)
    assert "tool_choice" not in sent and "JSON schema" in sent["system"]


async def test_a_capped_tool_run_does_not_force_on_a_model_that_refuses_forcing(
    server: WireServer,
) -> None:
    def weather(city: str) -> str:
        """The weather in a city."""
        return "18 C"

    call = {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}
    first = {**anthropic_json(), "content": [call], "stop_reason": "tool_use"}
    answer = {"type": "tool_use", "id": "t2", "name": FINAL_TOOL,
              "input": {"city": "Paris", "celsius": 18}}  # fmt: skip
    last = {**anthropic_json(), "content": [answer], "stop_reason": "tool_use"}
    server.reply_with(json_reply(first), json_reply(last))
    async with anthropic(server, "claude-opus-5") as model:
        loop = ReActLoop(model, tools=[weather], output_type=Forecast, max_iterations=1,
                         output=OutputOptions(strategy=OutputStrategy.TOOL))  # fmt: skip
        result = await loop.run("Forecast?")
    capped = server.requests[-1].json()
    assert [tool["name"] for tool in capped["tools"]] == [FINAL_TOOL]
    assert capped["tool_choice"] == {"type": "auto"}
    assert result.output == Forecast("Paris", 18)


# -- pause_turn continues the turn -----------------------------------------------------------

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
          "input": {"query": "weather Paris"}}  # fmt: skip
FOUND = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": [{"type": "web_search_result", "url": "https://example.org/paris",
                      "title": "Paris", "encrypted_content": "EqgfCioIARgBIiQ3"}]}  # fmt: skip
THINKING = {"type": "thinking", "thinking": "Look it up.", "signature": "sig+/=AbC"}


def paused_json() -> dict[str, Any]:
    content = [THINKING, {"type": "text", "text": "Searching. "}, SEARCH, FOUND]
    return {**anthropic_json(), "content": content, "stop_reason": "pause_turn"}


def paused_stream() -> list[bytes]:
    start = {"type": "message_start", "message": {**anthropic_json(), "content": [],
             "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}  # fmt: skip
    chunks = [sse(start, "message_start")]

    def block(index: int, first: dict[str, Any], *deltas: dict[str, Any]) -> None:
        chunks.append(sse({"type": "content_block_start", "index": index,
                           "content_block": first}, "content_block_start"))  # fmt: skip
        for delta in deltas:
            chunks.append(sse({"type": "content_block_delta", "index": index, "delta": delta},
                              "content_block_delta"))  # fmt: skip
        chunks.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))

    block(0, {"type": "thinking", "thinking": "", "signature": ""},
          {"type": "thinking_delta", "thinking": "Look it "},
          {"type": "thinking_delta", "thinking": "up."},
          {"type": "signature_delta", "signature": "sig+/=AbC"})  # fmt: skip
    block(1, {"type": "text", "text": ""}, {"type": "text_delta", "text": "Searching. "})
    query = orjson.dumps(SEARCH["input"]).decode()
    block(2, {**SEARCH, "input": {}},
          {"type": "input_json_delta", "partial_json": query[:7]},
          {"type": "input_json_delta", "partial_json": query[7:]})  # fmt: skip
    block(3, FOUND)
    delta = {"type": "message_delta", "delta": {"stop_reason": "pause_turn"},
             "usage": {"output_tokens": 7}}  # fmt: skip
    chunks.append(sse(delta, "message_delta"))
    return [*chunks, sse({"type": "message_stop"}, "message_stop")]


def pausing_once(request: Request) -> Reply:
    """A pause for the first request, the answer for the next."""
    streamed = request.json().get("stream")
    if len(request.json()["messages"]) == 1:
        return sse_reply(paused_stream()) if streamed else json_reply(paused_json())
    if streamed:
        return sse_reply(anthropic_stream("Sunny."))
    return json_reply(anthropic_json("Sunny."))


@pytest.mark.parametrize("mode", MODES)
async def test_a_paused_turn_is_continued_with_its_content_sent_back_as_it_came(
    server: WireServer, mode: str
) -> None:
    server.handler = pausing_once
    heard: list[str] = []

    async def listen(delta: ModelDelta) -> None:
        if isinstance(delta, TextDelta):
            heard.append(delta.text)

    request = ModelRequest((UserMessage("Weather in Paris?"),))
    async with anthropic(server, "claude-sonnet-5") as model:
        if mode == "stream":
            response: ModelResponse = await model.stream(request, listen)
        else:
            response = await model.request(request)
    assert len(server.requests) == 2
    again = server.requests[1].json()
    assert again["messages"][0] == {"role": "user", "content": [
        {"type": "text", "text": "Weather in Paris?"}]}  # fmt: skip
    assert again["messages"][1] == {
        "role": "assistant",
        "content": [THINKING, {"type": "text", "text": "Searching. "}, SEARCH, FOUND],
    }
    assert response.finish_reason is FinishReason.STOP
    assert response.message.text == "Searching. Sunny."
    assert response.usage.input_tokens == 20  # both parts, summed
    if mode == "stream":
        assert "".join(heard) == "Searching. Sunny."


@pytest.mark.parametrize("mode", MODES)
async def test_continuations_are_bounded(server: WireServer, mode: str) -> None:
    def always(request: Request) -> Reply:
        if request.json().get("stream"):
            return sse_reply(paused_stream())
        return json_reply(paused_json())

    server.handler = always
    async with anthropic(server, "claude-sonnet-5") as model:
        response = await call(model, ModelRequest((UserMessage("hi"),)), mode)
    assert len(server.requests) == MAX_CONTINUATIONS + 1
    assert response.finish_reason is FinishReason.OTHER
    # One assistant turn, holding every paused part in order.
    last = server.requests[-1].json()["messages"]
    assert len(last) == 2 and len(last[1]["content"]) == 4 * MAX_CONTINUATIONS


async def test_a_paused_run_goes_on_to_its_answer(server: WireServer) -> None:
    server.handler = pausing_once
    async with anthropic(server, "claude-sonnet-5") as model:
        result = await ReActLoop(model).run("Weather in Paris?")
    assert result.error is None and result.output == "Searching. Sunny."
    assert len(server.requests) == 2

"""Structured output through the loop on issue 27's providers, as a user builds it from the public
API: `ReActLoop(model, output_type=...)` under each `OutputStrategy` on Gemini (2.5 and 3), Azure
OpenAI (Chat Completions and Responses) and a host preset, plain and streamed over loopback: the
request carries what the vendor documents for the strategy and the typed answer comes back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reactloop import ReActLoop
from reactloop.errors import ConfigurationError
from reactloop.output import OutputOptions, OutputStrategy
from reactloop.providers import (
    AzureOpenAIModel,
    AzureOpenAIResponsesModel,
    GeminiModel,
    ModelProfile,
    OpenAIModel,
)
from tests.providers.render import openai_json, openai_stream
from tests.providers.render_gemini import gemini_answer, gemini_answer_stream
from tests.providers.render_responses import responses_json, responses_stream
from tests.providers.test_output import ANSWER, WEATHER, Forecast, final_step, get_weather
from tests.providers.test_output import check_openai_strategy as check_chat
from tests.providers.test_responses_output import check_strategy as check_responses
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

KEY = "sk-test-SECRET-0123456789abcdef"
FINAL_TOOL = "final_answer"
Build = Callable[[str], Any]
PROVIDERS: dict[str, Build] = {
    "gemini-2.5": lambda url: GeminiModel("gemini-2.5-flash", api_key=KEY, base_url=url),
    "gemini-3": lambda url: GeminiModel("gemini-3-pro-preview", api_key=KEY, base_url=url),
    "azure": lambda url: AzureOpenAIModel("prod", model="gpt-4.1", endpoint=url, api_key=KEY),
    "azure-responses": lambda url: AzureOpenAIResponsesModel(
        "prod", model="gpt-5", endpoint=url, api_key=KEY
    ),
    "openrouter": lambda url: OpenAIModel(
        "openai/gpt-4o", host="openrouter", api_key=KEY, base_url=f"{url}/openrouter/api/v1"
    ),
    "openrouter-told": lambda url: OpenAIModel(
        "openai/gpt-4o",
        host="openrouter",
        api_key=KEY,
        base_url=f"{url}/openrouter/api/v1",
        profile=ModelProfile(native_output=True),
    ),
}
RENDER: dict[str, tuple[Callable[..., list[bytes]], Callable[..., object]]] = {
    "gemini": (gemini_answer_stream, gemini_answer),
    "responses": (responses_stream, responses_json),
    "chat": (openai_stream, openai_json),
}
PROTOCOL = {
    "gemini-2.5": "gemini",
    "gemini-3": "gemini",
    "azure": "chat",
    "azure-responses": "responses",
    "openrouter": "chat",
    "openrouter-told": "chat",
}
AUTO_PICKS = {
    "gemini-2.5": OutputStrategy.TOOL,  # no JSON response format beside function declarations
    "gemini-3": OutputStrategy.NATIVE,
    "azure": OutputStrategy.NATIVE,
    "azure-responses": OutputStrategy.NATIVE,
    "openrouter": OutputStrategy.TOOL,  # a compatible host: native only with a profile saying so
    "openrouter-told": OutputStrategy.NATIVE,
}
REFUSED = {("openrouter", OutputStrategy.NATIVE), ("gemini-2.5", OutputStrategy.NATIVE)}
CASES = [(n, s) for n in PROVIDERS for s in OutputStrategy if (n, s) not in REFUSED]


def scripted(protocol: str, strategy: OutputStrategy) -> Callable[[Request], Reply]:
    """A tool step, then the final answer in the strategy's form; streamed when asked."""
    streamed, whole = RENDER[protocol]
    steps = [("", (WEATHER,)), final_step(strategy, ANSWER)]

    def answer(request: Request) -> Reply:
        text, calls = steps.pop(0)
        asked = "streamGenerateContent" in request.path or request.json().get("stream")
        return sse_reply(streamed(text, calls)) if asked else json_reply(whole(text, calls))

    return answer


def check_gemini(strategy: OutputStrategy, body: dict[str, Any]) -> None:
    """Gemini's structured output guide: `responseMimeType` application/json with
    `responseJsonSchema`; the tool form a function declaration beside the user's."""
    config = body.get("generationConfig", {})
    native = strategy is OutputStrategy.NATIVE
    assert (config.get("responseMimeType") == "application/json") is native
    schema = config.get("responseJsonSchema", {})
    assert (set(schema.get("properties", {})) == {"city", "celsius", "rain"}) is native
    names = [d["name"] for tool in body["tools"] for d in tool["functionDeclarations"]]
    assert (FINAL_TOOL in names) is (strategy is OutputStrategy.TOOL)
    assert ('"celsius"' in str(body.get("systemInstruction", ""))) is (
        strategy is OutputStrategy.PROMPTED
    )


CHECKS = {"gemini": check_gemini, "chat": check_chat, "responses": check_responses}


async def ask(loop: ReActLoop[Forecast], stream: bool) -> object:
    if not stream:
        result = await loop.run("Forecast for Paris?")
        assert result.error is None
        return result.output
    async with loop.stream("Forecast for Paris?") as events:
        async for _ in events:
            pass
    streamed = await events.result()
    assert streamed.error is None
    return streamed.output


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize(("name", "strategy"), CASES, ids=[f"{n}-{s.value}" for n, s in CASES])
async def test_each_strategy_sends_the_vendor_form_and_ends_typed(
    server: WireServer, name: str, strategy: OutputStrategy, stream: bool
) -> None:
    protocol = PROTOCOL[name]
    server.handler = scripted(
        protocol, AUTO_PICKS[name] if strategy is OutputStrategy.AUTO else strategy
    )
    async with PROVIDERS[name](server.url) as model:
        options = OutputOptions(strategy=strategy)
        loop = ReActLoop(model, tools=[get_weather], output_type=Forecast, output=options)
        assert loop.config.output is not None
        picked = loop.config.output.strategy
        assert picked is (AUTO_PICKS[name] if strategy is OutputStrategy.AUTO else strategy)
        assert await ask(loop, stream) == Forecast("Paris", 18)
    assert len(server.requests) == 2
    CHECKS[protocol](picked, server.requests[-1].json())


@pytest.mark.parametrize("name", list(PROVIDERS))
async def test_native_on_a_model_without_it_fails_when_the_loop_is_built(
    server: WireServer, name: str
) -> None:
    """A model whose profile takes no JSON-schema format refuses an explicit NATIVE, typed and
    naming the strategy, before anything is sent; AUTO then picks the final tool."""
    async with PROVIDERS[name](server.url) as model:
        model.supports_native_output = False
        with pytest.raises(ConfigurationError, match="output strategy 'native'") as caught:
            ReActLoop(
                model, output_type=Forecast, output=OutputOptions(strategy=OutputStrategy.NATIVE)
            )
        assert caught.value.option == "output_strategy"
        loop = ReActLoop(model, output_type=Forecast)
        assert loop.config.output is not None
        assert loop.config.output.strategy is OutputStrategy.TOOL
    assert server.requests == []


async def test_a_host_preset_refuses_native_until_its_profile_says_the_server_takes_it(
    server: WireServer,
) -> None:
    url = f"{server.url}/openrouter/api/v1"
    native = OutputOptions(strategy=OutputStrategy.NATIVE)
    async with OpenAIModel("openai/gpt-4o", host="openrouter", api_key=KEY, base_url=url) as model:
        with pytest.raises(ConfigurationError, match="native_output=False"):
            ReActLoop(model, output_type=Forecast, output=native)
    told = ModelProfile(native_output=True)
    async with OpenAIModel(
        "openai/gpt-4o", host="openrouter", api_key=KEY, base_url=url, profile=told
    ) as model:
        loop = ReActLoop(model, output_type=Forecast, output=native)
        assert loop.config.output is not None
        assert loop.config.output.strategy is OutputStrategy.NATIVE

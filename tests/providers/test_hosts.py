"""The OpenAI-compatible host presets (`OpenAIModel(host=...)`) over the loopback server: each
host's documented request (its limit field, its reasoning fields, its stream options), its
answers' extra fields (reasoning, reasoning details, usage, cost) and its error shapes.

Each model points at `{server}/{host}/...`, so the autouse vendor check of conftest.py validates
every body against OpenAI's request types plus that host's documented fields
(tests/helpers/vendor_schemas.py). The shapes come from the hosts' documentation (named in
reactloop/_providers/_hosts.py); none of this ran against a live API.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest

from reactloop._core import ModelSettings, ReasoningDelta, ReasoningPart, TextPart
from reactloop._core._messages import (
    AssistantMessage,
    ModelRequest,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._core._settings import ReasoningSettings
from reactloop._errors import (
    ProviderConfigurationError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._providers import OpenAIModel
from reactloop._providers._hosts import HOSTS
from tests.providers.recorded import Deltas, stream_bytes
from tests.providers.recorded import deepseek as recorded_deepseek
from tests.providers.render import openai_json, sse
from tests.providers.wire_server import WireServer, events_of, json_reply, sse_reply

pytestmark = pytest.mark.anyio

KEY = "sk-host-SECRET-0123456789"
PATHS = {
    "openrouter": "/openrouter/api/v1",
    "groq": "/groq/openai/v1",
    "deepseek": "/deepseek",
    "cerebras": "/cerebras/v1",
    "ollama": "/ollama/v1",
    "vllm": "/vllm/v1",
}
MODELS = {
    "openrouter": "deepseek/deepseek-r1",
    "groq": "openai/gpt-oss-120b",
    "deepseek": "deepseek-chat",
    "cerebras": "zai-glm-4.7",
    "ollama": "qwen3:8b",
    "vllm": "Qwen/Qwen3-8B",
}
WEATHER = ToolSpec("get_weather", "The weather in a city.", {"type": "object", "properties": {}})


def hosted(server: WireServer, host: str, model: str | None = None, **options: Any) -> OpenAIModel:
    url = f"{server.url}{PATHS[host]}"
    return OpenAIModel(model or MODELS[host], host=host, api_key=KEY, base_url=url, **options)


@pytest.fixture
async def openrouter(server: WireServer) -> AsyncIterator[OpenAIModel]:
    async with hosted(server, "openrouter") as model:
        yield model


@pytest.fixture
async def groq(server: WireServer) -> AsyncIterator[OpenAIModel]:
    async with hosted(server, "groq") as model:
        yield model


@pytest.fixture
async def deepseek(server: WireServer) -> AsyncIterator[OpenAIModel]:
    async with hosted(server, "deepseek") as model:
        yield model


def ask(**settings: Any) -> ModelRequest:
    return ModelRequest((UserMessage("Weather in Rome?"),), tools=(WEATHER,),
                        settings=ModelSettings(**settings))  # fmt: skip


def thinking(**reasoning: Any) -> ModelRequest:
    return ask(reasoning=ReasoningSettings(**reasoning))


def stream_of(*chunks: dict[str, Any]) -> list[bytes]:
    return [*(sse(chunk) for chunk in chunks), b"data: [DONE]\n\n"]


def delta(finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"id": "gen-1", "choices": [{"index": 0, "delta": fields, "finish_reason": finish}]}


# -- what each host is sent ---------------------------------------------------------------------

LIMITS = {  # host: (limit field, stream_options sent)
    "openrouter": ("max_tokens", False),  # usage-accounting: include_usage deprecated, no effect
    "groq": ("max_completion_tokens", False),  # not in Groq's request; x_groq.usage instead
    "deepseek": ("max_tokens", True),
    "cerebras": ("max_completion_tokens", True),
    "ollama": ("max_tokens", True),
    "vllm": ("max_tokens", True),
}


@pytest.mark.parametrize("host", sorted(LIMITS))
async def test_each_host_gets_its_limit_field_and_stream_options(
    server: WireServer, host: str
) -> None:
    field, usage = LIMITS[host]
    server.reply_with(sse_reply(stream_of(delta(content="Sunny."), delta("stop"))))
    async with hosted(server, host) as model:
        await model.stream(ask(max_output_tokens=300), Deltas())
    body = server.requests[-1].json()
    other = ({"max_tokens", "max_completion_tokens"} - {field}).pop()
    assert body[field] == 300 and other not in body
    assert ("stream_options" in body) is usage
    assert server.requests[-1].path == f"{PATHS[host]}/chat/completions"


async def test_explicit_options_beat_the_preset(server: WireServer) -> None:
    server.reply_with(sse_reply(stream_of(delta(content="Sunny."), delta("stop"))))
    async with hosted(
        server, "openrouter", max_tokens_field="max_completion_tokens", include_usage=True,
        provider="router",
    ) as model:  # fmt: skip
        answer = await model.stream(ask(max_output_tokens=50), Deltas())
    body = server.requests[-1].json()
    assert body["max_completion_tokens"] == 50 and body["stream_options"] == {"include_usage": True}
    assert model.provider == "router" and answer.message.text == "Sunny."


REASONING_BODIES = [  # host, reasoning settings, the fields sent (and only those)
    ("openrouter", {"effort": "high"}, {"reasoning": {"effort": "high"}}),
    ("openrouter", {"budget_tokens": 2000}, {"reasoning": {"max_tokens": 2000}}),
    ("groq", {"effort": "low"}, {"reasoning_effort": "low", "reasoning_format": "parsed"}),
    ("groq", {"effort": "none"}, {"reasoning_effort": "none"}),  # on qwen3 (gpt-oss: low-high)
    ("deepseek", {"effort": "high"},
     {"thinking": {"type": "enabled"}, "reasoning_effort": "high"}),
    ("deepseek", {"effort": "none"}, {"thinking": {"type": "disabled"}}),
    ("cerebras", {"effort": "high"}, {"reasoning_effort": "high", "reasoning_format": "parsed"}),
    ("ollama", {"effort": "medium"}, {"reasoning_effort": "medium"}),
]  # fmt: skip
REASONING_FIELDS = {"reasoning", "reasoning_effort", "reasoning_format", "thinking"}


@pytest.mark.parametrize(("host", "reasoning", "sent"), REASONING_BODIES)
async def test_reasoning_goes_in_the_hosts_own_fields(
    server: WireServer, host: str, reasoning: dict[str, Any], sent: dict[str, Any]
) -> None:
    server.reply_with(json_reply(openai_json("Sunny.")))
    qwen = "qwen/qwen3-32b" if reasoning.get("effort") == "none" and host == "groq" else None
    async with hosted(server, host, qwen) as model:
        await model.request(thinking(**reasoning))
    body = server.requests[-1].json()
    assert {key: body[key] for key in REASONING_FIELDS & set(body)} == sent


REFUSED = [  # host, reasoning settings, the setting at fault
    ("openrouter", {"effort": "high", "budget_tokens": 2000}, "budget_tokens"),
    ("openrouter", {"effort": "max"}, "effort"),
    ("groq", {"effort": "xhigh"}, "effort"),
    ("groq", {"effort": "none"}, "effort"),  # gpt-oss: "low", "medium" or "high" (its profile)
    ("groq", {"budget_tokens": 2000}, "budget_tokens"),
    ("vllm", {"effort": "low"}, "effort"),
]


@pytest.mark.parametrize(("host", "reasoning", "option"), REFUSED)
async def test_reasoning_a_host_does_not_take_is_refused_before_sending(
    server: WireServer, host: str, reasoning: dict[str, Any], option: str
) -> None:
    async with hosted(server, host) as model:
        with pytest.raises(ProviderConfigurationError) as caught:
            await model.request(thinking(**reasoning))
    assert caught.value.option == f"ModelSettings.reasoning.{option}"
    assert caught.value.provider == host and server.requests == []


# -- what each host answers ---------------------------------------------------------------------

DETAILS = [{"type": "reasoning.text", "text": "Rome is sunny.", "signature": "sig-1", "index": 0}]


async def test_openrouter_reasoning_details_and_cost_are_read_and_go_back(
    server: WireServer, openrouter: OpenAIModel
) -> None:
    call = ToolCall("get_weather", '{"city": "Rome"}', "call_1")
    body = openai_json("", [call])
    body["choices"][0]["message"] |= {"reasoning": "Rome is sunny.", "reasoning_details": DETAILS}
    body["usage"] |= {"cost": 0.00078, "prompt_tokens_details": {"cached_tokens": 4}}
    server.reply_with(json_reply(body), json_reply(openai_json("Sunny.")))
    answer = await openrouter.request(ask())
    (thought,) = answer.message.reasoning
    assert thought.text == "Rome is sunny." and thought.provider == "openrouter"
    assert answer.usage.cost == Decimal("0.00078") and answer.usage.cache_read_tokens == 4
    result = ToolMessage("call_1", "get_weather", "Sunny, 24 C.")
    history = (UserMessage("Weather in Rome?"), answer.message, result)
    await openrouter.request(ModelRequest(history, tools=(WEATHER,)))
    assistant = server.requests[-1].json()["messages"][1]
    assert assistant["reasoning_details"] == DETAILS and "reasoning_content" not in assistant


async def test_openrouter_streamed_reasoning_details_are_joined_by_index(
    server: WireServer, openrouter: OpenAIModel
) -> None:
    first = [{"type": "reasoning.text", "text": "Rome is ", "index": 0}]
    second = [{"type": "reasoning.text", "text": "sunny.", "signature": "sig-1", "index": 0}]
    usage = {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12, "cost": 0.5}
    server.reply_with(sse_reply(stream_of(
        delta(reasoning="Rome is ", reasoning_details=first),
        delta(reasoning="sunny.", reasoning_details=second),
        delta(content="Sunny."),
        delta("stop"),
        {"id": "gen-1", "choices": [], "usage": usage},
    )))  # fmt: skip
    deltas = Deltas()
    answer = await openrouter.stream(ask(), deltas)
    assert [d.text for d in deltas.seen if isinstance(d, ReasoningDelta)] == ["Rome is ", "sunny."]
    (thought,) = answer.message.reasoning
    assert thought.text == "Rome is sunny." and thought.encrypted is not None
    assert answer.usage.cost == Decimal("0.5") and answer.usage.input_tokens == 9
    assert answer.message.parts[1:] == (TextPart("Sunny."),)


async def test_groq_stream_usage_comes_from_x_groq(server: WireServer, groq: OpenAIModel) -> None:
    usage = {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27, "queue_time": 0.01,
             "prompt_tokens_details": {"cached_tokens": 8},
             "completion_tokens_details": {"reasoning_tokens": 5}}  # fmt: skip
    server.reply_with(sse_reply(stream_of(
        delta(reasoning="Check Rome."),
        delta(content="Sunny."),
        {**delta("stop"), "x_groq": {"id": "req_1", "usage": usage}},
    )))  # fmt: skip
    answer = await groq.stream(ask(), Deltas())
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (20, 7)
    assert (answer.usage.cache_read_tokens, answer.usage.reasoning_tokens) == (8, 5)
    assert answer.message.parts == (
        ReasoningPart("Check Rome.", provider="groq", model=MODELS["groq"]),
        TextPart("Sunny."),
    )


async def test_groq_reasoning_goes_back_as_reasoning(server: WireServer, groq: OpenAIModel) -> None:
    thought = ReasoningPart("Check Rome.", provider="groq", model=MODELS["groq"])
    call = ToolCall("get_weather", '{"city": "Rome"}', "call_1")
    history = (
        UserMessage("Weather in Rome?"),
        AssistantMessage(parts=[thought, call]),
        ToolMessage("call_1", "get_weather", "Sunny."),
    )
    server.reply_with(json_reply(openai_json("Sunny.")))
    await groq.request(ModelRequest(history, tools=(WEATHER,)))
    assistant = server.requests[-1].json()["messages"][1]
    assert assistant["reasoning"] == "Check Rome." and "reasoning_content" not in assistant


async def test_ollama_sends_no_reasoning_back(server: WireServer) -> None:
    """Ollama documents no assistant field for earlier reasoning: none is sent."""
    thought = ReasoningPart("Check Rome.", provider="ollama", model=MODELS["ollama"])
    call = ToolCall("get_weather", '{"city": "Rome"}', "call_1")
    history = (UserMessage("Weather?"), AssistantMessage(parts=[thought, call]),
               ToolMessage("call_1", "get_weather", "Sunny."))  # fmt: skip
    server.reply_with(json_reply(openai_json("Sunny.")))
    async with hosted(server, "ollama") as model:
        await model.request(ModelRequest(history, tools=(WEATHER,)))
    assistant = server.requests[-1].json()["messages"][1]
    assert not {"reasoning", "reasoning_content"} & set(assistant)


async def test_deepseek_cache_hits_are_cache_reads(
    server: WireServer, deepseek: OpenAIModel
) -> None:
    body = openai_json("Sunny.")
    body["usage"] |= {"prompt_cache_hit_tokens": 6, "prompt_cache_miss_tokens": 4}
    server.reply_with(json_reply(body))
    answer = await deepseek.request(ask())
    assert answer.usage.cache_read_tokens == 6 and answer.usage.uncached_input_tokens == 4
    assert answer.usage.cost is None  # DeepSeek reports no cost


@pytest.mark.parametrize(
    "name", ["test_deepseek_model_thinking_part", "test_deepseek_model_thinking_stream"]
)
async def test_the_deepseek_preset_sends_what_deepseek_accepted(
    server: WireServer, name: str
) -> None:
    """Recorded DeepSeek traffic (tests/fixtures/recorded/deepseek): the preset's request is the
    one DeepSeek answered (less the recording client's `n: 1` and `stream: false`), at
    `/chat/completions` under `https://api.deepseek.com`, and its answer decodes."""
    (interaction,) = recorded_deepseek(name)
    accepted = interaction["request"]["parsed_body"]
    assert interaction["request"]["uri"] == "https://api.deepseek.com/chat/completions"
    question = ModelRequest((UserMessage(accepted["messages"][0]["content"]),))
    async with hosted(server, "deepseek", accepted["model"]) as model:
        if accepted["stream"]:
            server.reply_with(sse_reply(events_of(stream_bytes(interaction))))
            answer = await model.stream(question, Deltas())
        else:
            server.reply_with(json_reply(interaction["response"]["parsed_body"]))
            answer = await model.request(question)
    expected = {k: v for k, v in accepted.items() if k != "n" and v is not False}
    assert server.requests[-1].json() == expected
    assert answer.message.reasoning and answer.message.text and answer.usage.input_tokens > 0


# -- each host's errors -------------------------------------------------------------------------


async def test_an_openrouter_credit_error_is_quota_exhausted(
    server: WireServer, openrouter: OpenAIModel
) -> None:
    error = {"error": {"code": 402, "message": "Insufficient credits",
                       "metadata": {"limit_source": "openrouter_credits"}}}  # fmt: skip
    server.reply_with(json_reply(error, status=402))
    with pytest.raises(RateLimitedError) as caught:
        await openrouter.request(ask())
    assert caught.value.quota_exhausted and caught.value.status == 402
    assert "Insufficient credits" in str(caught.value) and KEY not in str(caught.value)


async def test_an_openrouter_error_inside_a_200_stream_is_typed(
    server: WireServer, openrouter: OpenAIModel
) -> None:
    """Mid-stream, OpenRouter sends the error beside a choice that finished with "error"."""
    error = {"code": "server_error", "message": "Provider disconnected unexpectedly"}
    server.reply_with(sse_reply(stream_of(
        delta(content="Sun"),
        {**delta("error", content=""), "error": error},
    )))  # fmt: skip
    with pytest.raises(ProviderUnavailableError, match="Provider disconnected"):
        await openrouter.stream(ask(), Deltas())


async def test_an_openrouter_error_inside_a_200_body_is_typed_by_its_code(
    server: WireServer, openrouter: OpenAIModel
) -> None:
    body = openai_json("")
    body["choices"][0] |= {"finish_reason": "error",
                           "error": {"code": 429, "message": "Rate limit upstream"}}  # fmt: skip
    server.reply_with(json_reply(body))
    with pytest.raises(RateLimitedError, match="Rate limit upstream") as caught:
        await openrouter.request(ask())
    assert caught.value.status == 429 and not caught.value.quota_exhausted


async def test_an_ollama_string_error_is_typed(server: WireServer) -> None:
    error = {"error": 'model "qwen3:8b" not found, try pulling it first'}
    server.reply_with(json_reply(error, status=404))
    async with hosted(server, "ollama") as model:
        with pytest.raises(ProviderConfigurationError, match="try pulling it first") as caught:
            await model.request(ask())
    assert caught.value.status == 404 and caught.value.provider == "ollama"


async def test_a_deepseek_insufficient_balance_is_quota_exhausted(
    server: WireServer, deepseek: OpenAIModel
) -> None:
    error = {"error": {"message": "Insufficient Balance", "type": "unknown_error", "code": None}}
    server.reply_with(json_reply(error, status=402))
    with pytest.raises(RateLimitedError) as caught:
        await deepseek.request(ask())
    assert caught.value.quota_exhausted and caught.value.provider == "deepseek"


async def test_a_groq_stream_stopped_early_is_typed(server: WireServer, groq: OpenAIModel) -> None:
    server.reply_with(sse_reply(stream_of(
        delta(content="Sun"),
        {**delta(), "x_groq": {"id": "req_1", "error": "the model stopped: over capacity"}},
    )))  # fmt: skip
    with pytest.raises(ProviderUnavailableError, match="over capacity"):
        await groq.stream(ask(), Deltas())


def test_the_presets_are_the_documented_hosts() -> None:
    assert sorted(HOSTS) == sorted(PATHS)
    assert all(host.docs for host in HOSTS.values())

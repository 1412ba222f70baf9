"""What the Responses provider sends, read off the loopback server: input items, tools, tool
choice, settings, reasoning replay, structured output, `previous_response_id` mode, and the
settings it refuses before sending. Every body is checked against the vendor's definitions."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop._core._messages import (
    AssistantMessage,
    ForcedTool,
    Message,
    ModelRequest,
    ToolCall,
    ToolChoice,
    ToolMessage,
    UserMessage,
)
from reactloop._core._parts import ReasoningPart, TextPart
from reactloop._core._settings import (
    ModelSettings,
    ReasoningSettings,
    ResponseFormat,
    ResponseFormatKind,
)
from reactloop._errors import ConfigurationError, ProviderConfigurationError
from reactloop._providers import OpenAIResponsesModel
from reactloop._providers._wire import EMPTY_TOOL_RESULT
from tests.helpers.vendor_schemas import check_openai_responses_body
from tests.providers.conftest import API_KEY
from tests.providers.examples import CLOCK, HISTORY, SCHEMA, WEATHER
from tests.providers.render_responses import responses_json
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

HI = (UserMessage("hi"),)


async def sent(server: WireServer, model: OpenAIResponsesModel, request: ModelRequest) -> Any:
    """The body the model sends for `request` (answered with a plain text response)."""
    server.reply_with(json_reply(responses_json("ok")))
    await model.request(request)
    body = server.requests[-1].json()
    check_openai_responses_body(body)
    return body


async def test_a_plain_request(server: WireServer, responses: OpenAIResponsesModel) -> None:
    body = await sent(server, responses, ModelRequest(HI, instructions="Be brief."))
    assert body == {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": "hi"}],
        "include": ["reasoning.encrypted_content"],
        "store": False,
    }


async def test_a_history_becomes_input_items(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    body = await sent(server, responses, ModelRequest(HISTORY, tools=(WEATHER, CLOCK)))
    assert body["input"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "Checking both."},
        {"type": "function_call", "call_id": "call_a", "name": "get_weather",
         "arguments": '{"city": "Paris"}'},
        {"type": "function_call", "call_id": "call_b", "name": "get_weather",
         "arguments": '{"city": "Rome"}'},
        {"type": "function_call_output", "call_id": "call_a", "output": "18 C"},
        {"type": "function_call_output", "call_id": "call_b", "output": "tool failed: timeout"},
        {"type": "function_call", "call_id": "call_c", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_c", "output": "12:00"},
        {"role": "assistant", "content": "Paris 18 C; Rome unknown."},
        {"role": "user", "content": "Thanks. And tomorrow?"},
    ]  # fmt: skip


async def test_an_empty_tool_result_says_so(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    history = (
        UserMessage("Clear it."),
        AssistantMessage("", (ToolCall("clear", "{}", "call_x"),)),
        ToolMessage("call_x", "clear", ""),
    )
    body = await sent(server, responses, ModelRequest(history))
    assert body["input"][-1]["output"] == EMPTY_TOOL_RESULT


async def test_a_refusal_in_history_goes_as_the_assistant_text(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    history = (UserMessage("do harm"), AssistantMessage(refusal="I can't."), UserMessage("ok"))
    body = await sent(server, responses, ModelRequest(history))
    assert body["input"][1] == {"role": "assistant", "content": "I can't."}


async def test_tools_are_function_tools_strict_only_when_their_schema_is(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    strict = {**WEATHER.parameters, "additionalProperties": False}
    tools = (WEATHER, type(WEATHER)("strict_weather", "Strict.", strict))
    body = await sent(server, responses, ModelRequest(HI, tools=tools))
    assert body["tools"] == [
        {"type": "function", "name": "get_weather", "description": "Weather for a city.",
         "parameters": WEATHER.parameters, "strict": False},
        {"type": "function", "name": "strict_weather", "description": "Strict.",
         "parameters": strict, "strict": True},
    ]  # fmt: skip
    assert body["tool_choice"] == "auto"


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice.AUTO, "auto"),
        (ToolChoice.NONE, "none"),
        (ToolChoice.REQUIRED, "required"),
        (ForcedTool("get_weather"), {"type": "function", "name": "get_weather"}),
    ],
)
async def test_tool_choice(
    server: WireServer,
    responses: OpenAIResponsesModel,
    choice: ToolChoice | ForcedTool,
    wire: object,
) -> None:
    body = await sent(server, responses, ModelRequest(HI, tools=(WEATHER,), tool_choice=choice))
    assert body["tool_choice"] == wire


async def test_no_tools_sends_no_tool_fields(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    body = await sent(server, responses, ModelRequest(HISTORY, tool_choice=ToolChoice.NONE))
    assert "tools" not in body and "tool_choice" not in body


async def test_settings_are_sent_when_set(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    settings = ModelSettings(
        max_output_tokens=512,
        parallel_tool_calls=False,
        service_tier="flex",
        reasoning=ReasoningSettings(effort="low", summary="auto"),
    )
    body = await sent(server, responses, ModelRequest(HI, tools=(WEATHER,), settings=settings))
    assert body["max_output_tokens"] == 512 and body["parallel_tool_calls"] is False
    assert body["service_tier"] == "flex"
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}


async def test_sampling_goes_to_a_model_that_takes_it(server: WireServer) -> None:
    settings = ModelSettings(temperature=0.3, top_p=0.9)
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel("gpt-4.1", api_key=API_KEY, base_url=url) as model:
        body = await sent(server, model, ModelRequest(HI, settings=settings))
    assert (body["temperature"], body["top_p"]) == (0.3, 0.9)


@pytest.mark.parametrize(
    ("settings", "option"),
    [
        (ModelSettings(temperature=0.3), "ModelSettings.temperature"),
        (ModelSettings(stop_sequences=("END",)), "ModelSettings.stop_sequences"),
        (ModelSettings(seed=7), "ModelSettings.seed"),
        (
            ModelSettings(reasoning=ReasoningSettings(budget_tokens=2048)),
            "ModelSettings.reasoning.budget_tokens",
        ),
        (
            ModelSettings(reasoning=ReasoningSettings(effort="max")),
            "ModelSettings.reasoning.effort",
        ),
    ],
)
async def test_what_the_api_or_model_does_not_take_is_refused_before_sending(
    server: WireServer, responses: OpenAIResponsesModel, settings: ModelSettings, option: str
) -> None:
    with pytest.raises(ProviderConfigurationError) as caught:
        await responses.request(ModelRequest(HI, settings=settings))
    assert caught.value.option == option and "'gpt-5'" in str(caught.value)
    assert server.requests == []


async def test_a_model_without_reasoning_is_refused_an_effort(server: WireServer) -> None:
    settings = ModelSettings(reasoning=ReasoningSettings(effort="low"))
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel("gpt-4o", api_key=API_KEY, base_url=url) as model:
        with pytest.raises(ProviderConfigurationError) as caught:
            await model.request(ModelRequest(HI, settings=settings))
    assert caught.value.option == "ModelSettings.reasoning.effort" and server.requests == []


async def test_an_unknown_summary_is_refused(responses: OpenAIResponsesModel) -> None:
    settings = ModelSettings(reasoning=ReasoningSettings(summary="verbose"))
    with pytest.raises(ProviderConfigurationError, match=r"ModelSettings\.reasoning\.summary"):
        await responses.request(ModelRequest(HI, settings=settings))


@pytest.mark.parametrize(
    ("kind", "wire"),
    [
        (ResponseFormatKind.JSON_OBJECT, {"type": "json_object"}),
        (
            ResponseFormatKind.JSON_SCHEMA,
            {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": True},
        ),
    ],
)
async def test_structured_output_is_text_format(
    server: WireServer, responses: OpenAIResponsesModel, kind: ResponseFormatKind, wire: object
) -> None:
    schema = SCHEMA if kind is ResponseFormatKind.JSON_SCHEMA else None
    settings = ModelSettings(response_format=ResponseFormat(kind, "answer", schema))
    body = await sent(server, responses, ModelRequest(HI, settings=settings))
    assert body["text"] == {"format": wire}


def thought(number: int, provider: str = "openai-responses", model: str = "gpt-5") -> ReasoningPart:
    return ReasoningPart(
        summary=("Hmm.",),
        encrypted=f"enc-{number}",
        id=f"rs_{number}",
        provider=provider,
        model=model,
    )


async def answered(
    server: WireServer, model: OpenAIResponsesModel, body: dict[str, Any]
) -> AssistantMessage:
    """The message the model decodes from `body` (it then remembers the items' ids)."""
    server.reply_with(json_reply(body))
    return (await model.request(ModelRequest(HI))).message


async def test_reasoning_goes_back_before_the_item_that_followed_it(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    call = ToolCall("get_time", "{}", "call_1")
    message = await answered(
        server, responses, responses_json("Let me see.", (call,), reasoning=True)
    )
    assert [type(part) for part in message.parts] == [ReasoningPart, TextPart, ToolCall]
    history = (*HI, message, ToolMessage("call_1", "get_time", "12:00"))
    body = await sent(server, responses, ModelRequest(history, tools=(CLOCK,)))
    assert [item.get("type") for item in body["input"][1:]] == [
        "reasoning", "message", "function_call", "function_call_output",
    ]  # fmt: skip
    assert body["input"][1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Thinking."}],
        "encrypted_content": "gAAAA-encrypted-1",
    }
    assert (body["input"][2]["id"], body["input"][3]["id"]) == ("msg_1", "fc_1")


@pytest.mark.parametrize(
    "part",
    [
        thought(1, provider="anthropic"),
        thought(1, model="o3"),
        ReasoningPart(summary=("Hmm.",), id="rs_1", provider="openai-responses", model="gpt-5"),
    ],
    ids=["another-provider", "another-family", "no-encrypted-content"],
)
async def test_reasoning_that_cannot_go_back_is_dropped(
    server: WireServer, responses: OpenAIResponsesModel, part: ReasoningPart
) -> None:
    message = await answered(server, responses, responses_json("Hello.", reasoning=True))
    _, said = message.parts
    history = (*HI, AssistantMessage(parts=[part, said]), UserMessage("and?"))
    body = await sent(server, responses, ModelRequest(history))
    # The message goes without its id too: the API refuses an item whose reasoning is missing.
    assert body["input"][1] == {"role": "assistant", "content": "Hello."}
    assert len(body["input"]) == 3


async def test_items_after_the_first_go_with_their_ids_once_reasoning_went(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    calls = (ToolCall("get_time", "{}", "call_1"), ToolCall("get_time", "{}", "call_2"))
    message = await answered(server, responses, responses_json("", calls, reasoning=True))
    results = (ToolMessage(c.id, "get_time", "12:00") for c in calls)
    history: tuple[Message, ...] = (*HI, message, *results)
    body = await sent(server, responses, ModelRequest(history, tools=(CLOCK,)))
    assert [item.get("id") for item in body["input"][1:4]] == ["rs_1", "fc_1", "fc_2"]


async def test_items_without_reasoning_go_without_ids(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    call = ToolCall("get_time", "{}", "call_1")
    message = await answered(server, responses, responses_json("Let me see.", (call,)))
    history = (*HI, message, ToolMessage("call_1", "get_time", "12:00"))
    body = await sent(server, responses, ModelRequest(history, tools=(CLOCK,)))
    assert body["input"][1] == {"role": "assistant", "content": "Let me see."}
    assert "id" not in body["input"][2]


async def test_reasoning_whose_following_item_has_no_known_id_is_dropped(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    resumed = AssistantMessage(parts=[thought(1), TextPart("Hello.")])  # not seen by this instance
    body = await sent(server, responses, ModelRequest((*HI, resumed, UserMessage("and?"))))
    assert body["input"][1] == {"role": "assistant", "content": "Hello."}
    assert len(body["input"]) == 3


async def test_previous_response_mode_sends_only_what_follows_the_last_answer(
    server: WireServer,
) -> None:
    url = f"{server.url}/v1"
    mode = "previous_response"
    async with OpenAIResponsesModel(
        "gpt-5", api_key=API_KEY, base_url=url, conversation=mode
    ) as model:
        call = ToolCall("get_time", "{}", "call_1")
        server.reply_with(
            json_reply(responses_json("", (call,), reasoning=True, response_id="resp_A"))
        )
        first = await model.request(ModelRequest(HI, tools=(CLOCK,)))
        assert first.id == "resp_A"
        history = (*HI, first.message, ToolMessage("call_1", "get_time", "12:00"))
        body = await sent(server, model, ModelRequest(history, tools=(CLOCK,)))
    assert server.requests[0].json()["store"] is True
    assert body["store"] is True and body["previous_response_id"] == "resp_A"
    assert body["input"] == [
        {"type": "function_call_output", "call_id": "call_1", "output": "12:00"}
    ]


async def test_previous_response_mode_sends_everything_after_an_unknown_answer(
    server: WireServer,
) -> None:
    url = f"{server.url}/v1"
    mode = "previous_response"
    async with OpenAIResponsesModel(
        "gpt-5", api_key=API_KEY, base_url=url, conversation=mode
    ) as model:
        history = (*HI, AssistantMessage("Hello."), UserMessage("and?"))
        body = await sent(server, model, ModelRequest(history))
    assert "previous_response_id" not in body and len(body["input"]) == 3


def test_an_unknown_conversation_mode_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"OpenAIResponsesModel\.conversation"):
        OpenAIResponsesModel("gpt-5", api_key=API_KEY, conversation="server")


def test_extra_body_may_not_name_a_field_reactloop_sets() -> None:
    with pytest.raises(ConfigurationError, match="'store'"):
        OpenAIResponsesModel("gpt-5", api_key=API_KEY, extra_body={"store": True})


async def test_extra_body_fields_are_added(server: WireServer) -> None:
    url = f"{server.url}/v1"
    extra = {"prompt_cache_key": "k1"}
    async with OpenAIResponsesModel(
        "gpt-5", api_key=API_KEY, base_url=url, extra_body=extra
    ) as model:
        server.reply_with(json_reply(responses_json("ok")))
        await model.request(ModelRequest(HI))
    assert server.requests[0].json()["prompt_cache_key"] == "k1"


def test_a_key_is_needed_for_openai_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIResponsesModel("gpt-5")


def test_the_repr_never_shows_the_key() -> None:
    model = OpenAIResponsesModel("gpt-5", api_key=API_KEY, base_url="https://u:pw@example.com/v1")
    assert API_KEY not in repr(model) and "pw" not in repr(model)
    assert repr(model).startswith("OpenAIResponsesModel(model='gpt-5'")


async def test_usage_reads_cache_writes_and_reasoning(
    server: WireServer, responses: OpenAIResponsesModel
) -> None:
    body = responses_json("ok")
    body["usage"] = {
        "input_tokens": 5000,
        "input_tokens_details": {"cached_tokens": 900, "cache_write_tokens": 4012},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 30},
        "total_tokens": 5040,
    }
    server.reply_with(json_reply(body))
    usage = (await responses.request(ModelRequest(HI))).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        5000,
        900,
        4012,
    )
    assert (usage.output_tokens, usage.reasoning_tokens, usage.uncached_input_tokens) == (
        40,
        30,
        88,
    )

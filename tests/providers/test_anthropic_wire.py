"""How `AnthropicModel` spells requests (checked by the Messages rules) and reads answers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from attrs import evolve

from reactloop._core._decisions import StopReason
from reactloop._core._messages import (
    AssistantMessage,
    FinishReason,
    Message,
    ModelRequest,
    SystemMessage,
    ToolCall,
    UserMessage,
)
from reactloop._core._parts import ReasoningPart, TextPart
from reactloop._core._plan import StepPlan
from reactloop._core._settings import ModelSettings
from reactloop._errors import (
    ConfigurationError,
    ErrorCode,
    InvalidResponseError,
    ProviderConfigurationError,
    RateLimitedError,
)
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel
from reactloop._providers._anthropic import (
    DEFAULT_MAX_TOKENS,
    HISTORY_TOOL_DESCRIPTION,
    JSON_OBJECT_PROMPT,
    decode_message,
    encode_request,
)
from reactloop._resolver import DEFAULT_MESSAGES
from reactloop.testing import ScriptedModel
from tests.providers.conftest import API_KEY
from tests.providers.examples import REQUESTS, SCHEMA
from tests.providers.protocol import check_anthropic_headers, check_anthropic_request
from tests.providers.render import anthropic_json
from tests.providers.wire_server import WireServer, json_reply

OPUS_4_8 = "claude-opus-4-8"
SYSTEM = SystemMessage("Answer in French.")
SAMPLING = {"temperature", "top_p", "top_k"}


@pytest.mark.parametrize("model", ["claude", OPUS_4_8])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_requests_follow_the_messages_rules(name: str, stream: bool, model: str) -> None:
    request = REQUESTS[name]  # no Claude model takes sampling parameters: they are left unset
    request = evolve(request, settings=evolve(request.settings, temperature=None))
    check_anthropic_request(encode_request(request, model, stream=stream))


def unsampled(name: str) -> ModelRequest:
    """An example request without its temperature (no Claude model takes one)."""
    request = REQUESTS[name]
    return evolve(request, settings=evolve(request.settings, temperature=None))


def test_system_prompt_travels_apart() -> None:
    body = encode_request(REQUESTS["tools_auto"], "claude", stream=False)
    assert body["system"] == "Use tools.\n\nBe brief."
    assert all(turn["role"] in ("user", "assistant") for turn in body["messages"])


def test_parallel_results_share_one_user_turn() -> None:
    turns = encode_request(REQUESTS["tools_auto"], "claude", stream=False)["messages"]
    assert turns[1]["content"][1:] == [
        {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "call_b", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    assert turns[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_a", "content": "18 C"},
            {"type": "tool_result", "tool_use_id": "call_b", "content": "tool failed: timeout",
             "is_error": True},
        ],
    }  # fmt: skip


def test_tools_and_choices() -> None:
    auto = encode_request(REQUESTS["tools_auto"], "claude", stream=False)
    assert auto["tools"][0] == {
        "name": "get_weather",
        "description": "Weather for a city.",
        "input_schema": REQUESTS["tools_auto"].tools[0].parameters,
    }
    assert auto["tool_choice"] == {"type": "auto"}
    required = encode_request(REQUESTS["tools_required"], "claude", stream=False)
    forced = encode_request(REQUESTS["tools_forced"], "claude", stream=False)
    serial = encode_request(REQUESTS["tools_serial"], "claude", stream=False)
    assert required["tool_choice"] == {"type": "any"}
    assert forced["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert serial["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def test_a_final_call_without_tools_keeps_history_tools_valid() -> None:
    body = encode_request(REQUESTS["final_without_tools"], "claude", stream=False)
    assert [tool["name"] for tool in body["tools"]] == ["get_weather", "get_time"]
    assert body["tools"][0]["description"] == HISTORY_TOOL_DESCRIPTION
    assert body["tool_choice"] == {"type": "none"}


def test_no_tools_anywhere_means_no_tool_fields() -> None:
    body = encode_request(REQUESTS["plain"], "claude", stream=False)
    assert "tools" not in body
    assert "tool_choice" not in body


def test_output_limit_is_always_sent() -> None:
    plain = encode_request(REQUESTS["plain"], "claude", stream=False)
    limited = encode_request(unsampled("json_schema"), "claude", stream=True)
    assert (plain["max_tokens"], limited["max_tokens"]) == (DEFAULT_MAX_TOKENS, 256)
    assert limited["stream"] is True


def test_response_formats() -> None:
    schema = encode_request(unsampled("json_schema"), "claude", stream=False)
    json_object = encode_request(REQUESTS["json_object"], "claude", stream=False)
    assert schema["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert json_object["system"] == JSON_OBJECT_PROMPT


def test_a_refusal_in_history_is_the_assistant_turn() -> None:
    turns = encode_request(REQUESTS["refusal_in_history"], "claude", stream=False)["messages"]
    assert turns[1] == {"role": "assistant", "content": [{"type": "text", "text": "I can't."}]}


def test_unparseable_arguments_become_an_empty_input() -> None:
    history = (*REQUESTS["plain"].messages, AssistantMessage("", (ToolCall("f", "{bad", "c"),)))
    request = ModelRequest(history)
    body = encode_request(request, "claude", stream=False)
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "c", "name": "f", "input": {}}
    ]


def _message(content: list[dict[str, object]], stop: str) -> dict[str, object]:
    usage = {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 7,
             "cache_creation_input_tokens": 3}  # fmt: skip
    return {"type": "message", "model": "claude", "content": content, "stop_reason": stop,
            "usage": usage, "unknown": 1}  # fmt: skip


def test_decode_reads_blocks_usage_and_cache() -> None:
    content: list[dict[str, object]] = [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "Sure."},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
    ]
    response = decode_message("anthropic", _message(content, "tool_use"))
    thought = ReasoningPart("hmm", provider="anthropic")
    call = ToolCall("f", '{"a":1}', "t1")
    assert response.message == AssistantMessage(parts=[thought, TextPart("Sure."), call])
    assert (response.usage.cache_read_tokens, response.usage.cache_write_tokens) == (7, 3)
    assert response.finish_reason is FinishReason.TOOL_CALLS


@pytest.mark.parametrize(
    ("stop", "expected"),
    [("end_turn", FinishReason.STOP), ("max_tokens", FinishReason.LENGTH),
     ("stop_sequence", FinishReason.STOP), ("pause_turn", FinishReason.OTHER)],
)  # fmt: skip
def test_decode_maps_stop_reasons(stop: str, expected: FinishReason) -> None:
    response = decode_message("anthropic", _message([{"type": "text", "text": "x"}], stop))
    assert response.finish_reason is expected


def test_decode_reports_a_refusal() -> None:
    response = decode_message("anthropic", _message([{"type": "text", "text": "No."}], "refusal"))
    assert (response.message.refusal, response.finish_reason) == ("No.", FinishReason.REFUSAL)


def test_decode_rejects_a_nameless_tool_use() -> None:
    with pytest.raises(InvalidResponseError, match="without a name"):
        decode_message(
            "anthropic", _message([{"type": "tool_use", "id": "t", "input": {}}], "tool_use")
        )


def test_decode_of_an_error_body_is_typed() -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}
    with pytest.raises(RateLimitedError, match="slow"):
        decode_message("anthropic", body)


@pytest.fixture
async def opus(server: WireServer) -> AsyncIterator[AnthropicModel]:
    """Claude Opus 4.8 (no sampling parameters, system turns allowed) on the wire server."""
    async with AnthropicModel(OPUS_4_8, api_key=API_KEY, base_url=server.url) as model:
        yield model


@pytest.mark.anyio
async def test_no_sampling_parameter_travels_and_a_set_one_is_refused_before_sending(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    """The Messages API defines no sampling parameters (the anthropic SDK's request types have
    none): a temperature set for any Claude model ends the run before a request is sent."""
    server.reply_with(json_reply(anthropic_json("Hi.")))
    await ReActLoop(anthropic).run("hi")
    with pytest.raises(ProviderConfigurationError) as refused:  # when the loop is built
        ReActLoop(anthropic, settings=ModelSettings(temperature=0.3))
    (default,) = (request.json() for request in server.requests)
    assert not SAMPLING & set(default)
    assert refused.value.option == "ModelSettings.temperature"
    check_anthropic_headers(server.requests[0].headers)


@pytest.mark.anyio
async def test_a_model_without_sampling_refuses_a_temperature_before_sending(
    server: WireServer, opus: AnthropicModel
) -> None:
    """A model switched in for a step (`prepare_step`) is checked by its request: the run ends
    with the typed error, nothing sent."""
    server.reply_with(json_reply(anthropic_json("Hi.")))

    def to_opus(run: object, plan: StepPlan) -> StepPlan:
        return evolve(plan, model=opus)

    scripted = ScriptedModel(["unused"])
    hot = ModelSettings(temperature=0.3)
    result = await ReActLoop(scripted, settings=hot, prepare_step=to_opus).run("hi")
    assert result.stop_reason is StopReason.ERROR
    error = result.error
    assert isinstance(error, ProviderConfigurationError)
    assert isinstance(error, ConfigurationError)
    assert (error.option, error.value) == ("ModelSettings.temperature", 0.3)
    assert "'claude-opus-4-8'" in str(error)
    assert error.code is ErrorCode.CONFIGURATION
    assert result.user_message == DEFAULT_MESSAGES[ErrorCode.CONFIGURATION]
    assert server.requests == []
    assert (await ReActLoop(opus).run("hi")).output == "Hi."
    assert not SAMPLING & set(server.requests[0].json())


@pytest.mark.anyio
async def test_a_model_that_rejects_a_setting_on_the_wire_is_a_configuration_error(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    error = {
        "type": "invalid_request_error",
        "message": "`service_tier` is deprecated for this model.",
    }
    server.reply_with(json_reply({"type": "error", "error": error}, 400))
    settings = ModelSettings(service_tier="standard_only")
    result = await ReActLoop(anthropic, settings=settings).run("hi")
    assert isinstance(result.error, ProviderConfigurationError)
    assert "deprecated for this model" in str(result.error)
    assert "rephrase" not in (result.user_message or "")


@pytest.mark.anyio
async def test_a_mid_history_system_message_stays_in_place_where_the_model_takes_it(
    server: WireServer, opus: AnthropicModel
) -> None:
    server.reply_with(json_reply(anthropic_json("Bonjour.")))
    await opus.request(REQUESTS["system_mid_history"])
    body = server.requests[0].json()
    check_anthropic_request(body)
    assert body["system"] == "Be brief."
    assert [turn["role"] for turn in body["messages"]] == ["user", "assistant", "user", "system"]
    assert body["messages"][3]["content"] == [
        {"type": "text", "text": "From now on, answer in French."}
    ]


def test_other_models_get_every_system_message_in_the_system_field() -> None:
    body = encode_request(REQUESTS["system_mid_history"], "claude-sonnet-4-5", stream=False)
    assert body["system"] == "Be brief.\n\nFrom now on, answer in French."
    assert [turn["role"] for turn in body["messages"]] == ["user", "assistant", "user"]


@pytest.mark.parametrize(
    ("history", "roles"),
    [
        # after an assistant turn: not allowed in place, so it joins the system field
        (
            (UserMessage("a"), AssistantMessage("b"), SYSTEM, UserMessage("c")),
            ["user", "assistant", "user"],
        ),
        # followed by a user turn: not allowed in place either
        ((UserMessage("a"), SYSTEM, UserMessage("c")), ["user"]),
        # first: the system field, as ever
        ((SYSTEM, UserMessage("a")), ["user"]),
        # between a user turn and an assistant turn: in place
        (
            (UserMessage("a"), SYSTEM, AssistantMessage("b"), UserMessage("c")),
            ["user", "system", "assistant", "user"],
        ),
    ],
)
def test_a_system_message_is_kept_in_place_only_where_anthropic_allows_it(
    history: tuple[Message, ...], roles: list[str]
) -> None:
    body = encode_request(ModelRequest(history), OPUS_4_8, stream=False)
    check_anthropic_request(body)
    assert [turn["role"] for turn in body["messages"]] == roles
    kept = "system" in roles
    assert ("system" in body) is not kept
    if not kept:
        assert body["system"] == SYSTEM.text

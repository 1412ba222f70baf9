"""How `AnthropicModel` spells requests (checked by the Messages rules) and reads answers."""

from __future__ import annotations

import pytest

from reactloop._errors import InvalidResponseError, RateLimitedError
from reactloop._messages import AssistantMessage, FinishReason, ModelRequest, ToolCall
from reactloop._providers._anthropic import (
    DEFAULT_MAX_TOKENS,
    HISTORY_TOOL_DESCRIPTION,
    JSON_OBJECT_PROMPT,
    decode_message,
    encode_request,
)
from tests.providers.examples import REQUESTS, SCHEMA
from tests.providers.protocol import check_anthropic_request


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_requests_follow_the_messages_rules(name: str, stream: bool) -> None:
    check_anthropic_request(encode_request(REQUESTS[name], "claude", stream=stream))


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
    limited = encode_request(REQUESTS["json_schema"], "claude", stream=True)
    assert (plain["max_tokens"], limited["max_tokens"]) == (DEFAULT_MAX_TOKENS, 256)
    assert (limited["temperature"], limited["stream"]) == (0.2, True)


def test_response_formats() -> None:
    schema = encode_request(REQUESTS["json_schema"], "claude", stream=False)
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
    assert response.message == AssistantMessage("Sure.", (ToolCall("f", '{"a":1}', "t1"),))
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

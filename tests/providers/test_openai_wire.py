"""How `OpenAIModel` spells requests (checked against the published schema) and reads answers."""

from __future__ import annotations

import pytest

from reactloop._core._messages import (
    AssistantMessage,
    FinishReason,
    ModelRequest,
    ToolCall,
    UserMessage,
)
from reactloop._errors import InvalidResponseError, ProviderUnavailableError
from reactloop._loop._loop import ReActLoop
from reactloop._providers import OpenAIModel
from reactloop._providers._openai import (
    InstructionsRole,
    MaxTokensField,
    OpenAIOptions,
    decode_completion,
    encode_request,
)
from tests.providers.examples import HISTORY, REQUESTS, SCHEMA
from tests.providers.protocol import OpenAIRequestSchema
from tests.providers.render import openai_json
from tests.providers.wire_server import WireServer, json_reply


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_requests_follow_the_published_schema(
    openai_schema: OpenAIRequestSchema, name: str, stream: bool
) -> None:
    openai_schema.check(encode_request(REQUESTS[name], "gpt-4o-mini", stream=stream))


def test_the_legacy_limit_field_follows_the_schema_too(openai_schema: OpenAIRequestSchema) -> None:
    options = OpenAIOptions(InstructionsRole.DEVELOPER, MaxTokensField.MAX_TOKENS, False)
    body = encode_request(REQUESTS["json_schema"], "m", stream=True, options=options)
    openai_schema.check(body)
    assert body["max_tokens"] == 256
    assert "stream_options" not in body


def test_instructions_lead_as_system_or_developer() -> None:
    request = REQUESTS["instructions"]
    system = encode_request(request, "m", stream=False)
    developer = encode_request(
        request, "m", stream=False, options=OpenAIOptions(InstructionsRole.DEVELOPER)
    )
    assert system["messages"][0] == {"role": "system", "content": "You are terse."}
    assert developer["messages"][0] == {"role": "developer", "content": "You are terse."}


def test_history_maps_calls_results_and_system_messages() -> None:
    messages = encode_request(REQUESTS["tools_auto"], "m", stream=False)["messages"]
    assert [m["role"] for m in messages] == [
        "system", "system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant",
        "user",
    ]  # fmt: skip
    assert messages[3]["tool_calls"][1] == {
        "id": "call_b",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
    }
    assert messages[5] == {
        "role": "tool",
        "tool_call_id": "call_b",
        "content": "tool failed: timeout",
    }
    assert messages[6]["content"] is None


def test_tool_choice_and_parallel_calls() -> None:
    forced = encode_request(REQUESTS["tools_forced"], "m", stream=False)
    serial = encode_request(REQUESTS["tools_serial"], "m", stream=False)
    assert forced["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert (
        encode_request(REQUESTS["tools_required"], "m", stream=False)["tool_choice"] == "required"
    )
    assert (serial["tool_choice"], serial["parallel_tool_calls"]) == ("auto", False)


def test_no_tools_means_no_tool_fields() -> None:
    body = encode_request(REQUESTS["final_without_tools"], "m", stream=False)
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)


def test_settings_and_streaming_fields() -> None:
    body = encode_request(REQUESTS["json_schema"], "m", stream=True)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }
    assert (body["temperature"], body["max_completion_tokens"]) == (0.2, 256)
    assert (body["stream"], body["stream_options"]) == (True, {"include_usage": True})


def test_a_refusal_travels_back_as_a_refusal_content_part() -> None:
    messages = encode_request(REQUESTS["refusal_in_history"], "m", stream=False)["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't."}],
    }


def test_a_refusal_beside_text_keeps_the_text_as_content() -> None:
    request = ModelRequest((UserMessage("hi"), AssistantMessage("Partly.", refusal="Not all.")))
    message = encode_request(request, "m", stream=False)["messages"][1]
    assert message == {"role": "assistant", "content": "Partly.", "refusal": "Not all."}


@pytest.mark.anyio
async def test_a_refused_run_continues_with_a_request_the_schema_accepts(
    server: WireServer, openai: OpenAIModel, openai_schema: OpenAIRequestSchema
) -> None:
    refusal = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    body = {
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": refusal, "finish_reason": "stop"}],
    }
    server.reply_with(json_reply(body), json_reply(openai_json("Hello!")))
    loop = ReActLoop(openai)
    refused = await loop.run("do harm")
    assert refused.messages[-1] == AssistantMessage(refusal="I can't help with that.")
    answered = await loop.run("ok, then just say hello", history=refused.messages)
    assert answered.output == "Hello!"
    sent = server.requests[1].json()
    openai_schema.check(sent)
    assert sent["messages"][1]["content"] == [
        {"type": "refusal", "refusal": "I can't help with that."}
    ]


def _completion(message: dict[str, object], finish: str | None = "stop") -> dict[str, object]:
    choice = {"index": 0, "message": message, "finish_reason": finish}
    usage = {
        "prompt_tokens": 9,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 4},
    }
    return {"model": "m", "choices": [choice], "usage": usage, "unknown": {"ignored": True}}


def test_decode_reads_text_usage_and_cached_tokens() -> None:
    response = decode_completion("openai", _completion({"role": "assistant", "content": "Hi"}))
    assert response.message == AssistantMessage("Hi")
    assert (response.usage.input_tokens, response.usage.cache_read_tokens) == (9, 4)
    assert response.finish_reason is FinishReason.STOP


@pytest.mark.parametrize(
    ("finish", "expected"),
    [("length", FinishReason.LENGTH), ("content_filter", FinishReason.CONTENT_FILTER),
     ("something_new", FinishReason.OTHER), (None, FinishReason.STOP)],
)  # fmt: skip
def test_decode_maps_finish_reasons(finish: str | None, expected: FinishReason) -> None:
    body = _completion({"role": "assistant", "content": "x"}, finish)
    assert decode_completion("openai", body).finish_reason is expected


def test_decode_reports_a_refusal() -> None:
    body = _completion({"role": "assistant", "content": None, "refusal": "No."})
    response = decode_completion("openai", body)
    assert (response.message.refusal, response.finish_reason) == ("No.", FinishReason.REFUSAL)


def test_decode_takes_choice_zero_of_several() -> None:
    body = _completion({"role": "assistant", "content": "zero"})
    zero = {"index": 0, "message": {"content": "zero"}, "finish_reason": "stop"}
    body["choices"] = [{"index": 1, "message": {"content": "one"}, "finish_reason": "stop"}, zero]
    assert decode_completion("openai", body).message.text == "zero"


def test_decode_keeps_call_ids_and_raw_arguments() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{bad"}}
    body = _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")
    assert decode_completion("openai", body).message.tool_calls == (
        ToolCall("f", "{bad", "call_1"),
    )


def test_decode_without_choices_is_invalid() -> None:
    with pytest.raises(InvalidResponseError, match="no choices"):
        decode_completion("openai", {"model": "m", "choices": []})


def test_decode_of_an_error_body_is_typed() -> None:
    with pytest.raises(ProviderUnavailableError, match="overloaded"):
        decode_completion("openai", {"error": {"message": "overloaded", "type": "server_error"}})


def test_history_is_unchanged_by_encoding() -> None:
    before = tuple(HISTORY)
    encode_request(REQUESTS["tools_auto"], "m", stream=False)
    assert before == HISTORY

"""The request checkers of tests/helpers/vendor_schemas.py judge for real: a body the vendors
document passes, and each kind of departure (an unknown key at any depth, a missing required
field, a wrong literal or type) is refused with its JSON path. The conftest runs them on every body
the provider tests send; these tests keep them from passing vacuously."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest
import yaml

from reactloop._core import ModelRequest, UserMessage
from reactloop._providers import OpenAIModel
from tests.helpers.vendor_schemas import (
    VendorSchemaError,
    check_anthropic_body,
    check_gemini_body,
    check_openai_chat_body,
    check_openai_responses_body,
    wire_problems,
)
from tests.providers.conftest import API_KEY, VIOLATIONS
from tests.providers.wire_server import WireServer, json_reply

JsonObject = dict[str, Any]
RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded"

ANTHROPIC: JsonObject = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "stream": True,
    "thinking": {"type": "enabled", "budget_tokens": 2048},
    "system": "Be brief.",
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "c2ln"},
                {"type": "redacted_thinking", "data": "ZGF0YQ=="},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "rain"}],
        },
    ],
    "tools": [
        {
            "name": "weather",
            "description": "The weather.",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        }
    ],
    "tool_choice": {"type": "auto"},
}

CHAT: JsonObject = {
    "model": "gpt-4o",
    "stream": True,
    "stream_options": {"include_usage": True},
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "rain"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "weather", "description": "The weather.", "parameters": {}},
        }
    ],
}

RESPONSES: JsonObject = {
    "model": "gpt-5",
    "stream": False,
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "instructions": "Be brief.",
    "input": [
        {"role": "user", "content": "weather?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "weather",
            "arguments": '{"city":"Oslo"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "rain"},
    ],
    "tools": [{"type": "function", "name": "weather", "parameters": {}, "strict": False}],
    "reasoning": {"effort": "low"},
}


def _changed(body: JsonObject, path: tuple[str | int, ...], value: object) -> JsonObject:
    changed = copy.deepcopy(body)
    target: Any = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return changed


def test_documented_bodies_pass() -> None:
    check_anthropic_body(ANTHROPIC)
    check_openai_chat_body(CHAT)
    check_openai_responses_body(RESPONSES)


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("messages", 1, "content", 0, "bogus"), 1, "$.messages[1].content[0].bogus: unknown"),
        (("messages", 1, "content", 0, "signature"), 7, ".signature: expected str"),
        (("thinking", "type"), "sometimes", "$.thinking.type: 'sometimes' is not one of"),
        (("max_tokens",), "many", "$.max_tokens: expected int"),
        (("tools", 0, "input_schema"), "any", "$.tools[0].input_schema: no member of the union"),
        (("top_k",), 5, "$.top_k: unknown field"),
    ],
)
def test_an_anthropic_departure_is_refused_with_its_path(
    path: tuple[str | int, ...], value: object, problem: str
) -> None:
    with pytest.raises(VendorSchemaError, match="anthropic SDK") as caught:
        check_anthropic_body(_changed(ANTHROPIC, path, value))
    assert problem in str(caught.value)


def test_a_missing_required_field_is_refused() -> None:
    body = copy.deepcopy(ANTHROPIC)
    del body["messages"][1]["content"][0]["signature"]
    with pytest.raises(VendorSchemaError, match=r"\.signature: required by ThinkingBlockParam"):
        check_anthropic_body(body)


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("messages", 2, "tool_calls", 0, "function", "extra"), 1, "function.extra: unknown"),
        (("messages", 2, "reasoning_content"), "why", "reasoning_content: unknown"),
        (("messages", 0, "role"), "boss", "$.messages[0].role: 'boss' is not one of"),
        (("stream_options", "include_usage"), "yes", "include_usage: expected bool"),
        (("temperature",), "hot", "OpenAPI CreateChatCompletionRequest at /temperature"),
    ],
)
def test_an_openai_chat_departure_is_refused_with_its_path(
    path: tuple[str | int, ...], value: object, problem: str
) -> None:
    with pytest.raises(VendorSchemaError) as caught:
        check_openai_chat_body(_changed(CHAT, path, value))
    assert problem in str(caught.value)


def test_the_openapi_document_judges_what_the_sdk_types_cannot() -> None:
    """`n` must be at least 1: a constraint of the OpenAPI document only."""
    with pytest.raises(VendorSchemaError, match="OpenAPI CreateChatCompletionRequest at /n"):
        check_openai_chat_body(_changed(CHAT, ("n",), 0))


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("input", 1, "encrypted"), "gAAA", "$.input[1].encrypted: unknown field"),
        (("input", 2, "call_id"), 5, "$.input[2].call_id: expected str"),
        (("include",), ["reasoning.everything"], "$.include[0]"),
        (("reasoning", "effort"), "huge", "$.reasoning.effort"),
        (("previous",), "resp_1", "unknown top-level field 'previous'"),
    ],
)
def test_an_openai_responses_departure_is_refused_with_its_path(
    path: tuple[str | int, ...], value: object, problem: str
) -> None:
    with pytest.raises(VendorSchemaError) as caught:
        check_openai_responses_body(_changed(RESPONSES, path, value))
    assert problem in str(caught.value)


def test_only_the_exempt_top_level_fields_are_left_out() -> None:
    body = _changed(CHAT, ("x_vendor_flag",), True)
    check_openai_chat_body(body, exempt={"x_vendor_flag"})
    nested = _changed(body, ("messages", 1, "x_vendor_flag"), True)
    with pytest.raises(VendorSchemaError, match=r"messages\[1\]\.x_vendor_flag"):
        check_openai_chat_body(nested, exempt={"x_vendor_flag"})


def test_a_compatible_vendor_adds_only_its_documented_fields() -> None:
    deepseek = _changed(CHAT, ("messages", 2, "reasoning_content"), "Look it up.")
    check_openai_chat_body(deepseek, vendor="deepseek")
    google = {"google": {"thought_signature": "c2ln"}}
    gemini = _changed(CHAT, ("messages", 2, "tool_calls", 0, "extra_content"), google)
    check_openai_chat_body(gemini, vendor="gemini")
    with pytest.raises(VendorSchemaError, match="extra_content: unknown"):
        check_openai_chat_body(gemini, vendor="deepseek")
    wrong = _changed(gemini, ("messages", 2, "tool_calls", 0, "extra_content"), {"google": {}})
    with pytest.raises(VendorSchemaError, match="thought_signature: required"):
        check_openai_chat_body(wrong, vendor="gemini")


def test_the_wire_check_routes_by_path_and_reads_the_vendor_from_the_model() -> None:
    deepseek = _changed(CHAT, ("messages", 2, "reasoning_content"), "Look it up.")
    assert wire_problems("/v1/chat/completions", orjson.dumps(deepseek))
    assert not wire_problems(
        "/v1/chat/completions", orjson.dumps({**deepseek, "model": "deepseek-reasoner"})
    )
    assert not wire_problems("/v1/messages", orjson.dumps(ANTHROPIC))
    assert wire_problems("/v1/messages", orjson.dumps(CHAT))
    assert not wire_problems("/v1/responses", orjson.dumps(RESPONSES))
    assert wire_problems("/v1/responses", b"{not json")
    assert not wire_problems("/v1/models", b"")


def _recorded_requests() -> list[Any]:
    found = []
    for cassette in sorted(RECORDED.glob("*/*.yaml")):
        loaded = yaml.safe_load(cassette.read_text(encoding="utf-8"))
        for number, interaction in enumerate(loaded["interactions"]):
            request = interaction["request"]
            if isinstance(request.get("parsed_body"), dict):
                where = f"{cassette.parent.name}/{cassette.name}#{number}"
                path = urlsplit(request["uri"]).path
                found.append(pytest.param(where, path, request["parsed_body"], id=where))
    return found


@pytest.mark.parametrize(("where", "path", "body"), _recorded_requests())
def test_every_request_a_vendor_accepted_on_record_passes(
    where: str, path: str, body: JsonObject
) -> None:
    """The checkers refuse nothing the vendors took: each recorded request (a 200) passes."""
    assert wire_problems(path, orjson.dumps(body)) == [], where


ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                 "finish_reason": "stop"}],
}  # fmt: skip


@pytest.mark.anyio
async def test_the_wire_hook_notes_a_body_the_vendor_refuses(
    server: WireServer, request: pytest.FixtureRequest
) -> None:
    """The conftest checks what reaches the wire server (noted, then failing the test: here the
    note is read and cleared, so that the test itself passes)."""
    server.reply_with(json_reply(ANSWER))
    async with httpx.AsyncClient(base_url=server.url) as client:
        await client.post("/v1/chat/completions", json={**CHAT, "bogus": 1})
    noted = request.node.stash[VIOLATIONS]
    assert len(noted) == 1
    assert "$.bogus: unknown field of CompletionCreateParamsStreaming" in noted[0]
    noted.clear()


@pytest.mark.anyio
async def test_the_wire_hook_exempts_only_what_extra_body_adds(
    server: WireServer, request: pytest.FixtureRequest
) -> None:
    server.reply_with(json_reply(ANSWER))
    extra = {"x_vendor_flag": True}
    async with OpenAIModel(
        "gpt-4o", api_key=API_KEY, base_url=f"{server.url}/v1", extra_body=extra
    ) as model:
        await model.request(ModelRequest((UserMessage("hi"),)))
    assert server.requests[0].json()["x_vendor_flag"] is True
    assert request.node.stash[VIOLATIONS] == []


GEMINI: JsonObject = {
    "contents": [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"name": "weather", "args": {"city": "Paris"}, "id": "c1"},
                    "thoughtSignature": "EpwICpkIAXLI2nxl",
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "weather", "id": "c1", "response": {"output": "sun"}}}
            ],
        },
    ],
    "systemInstruction": {"parts": [{"text": "Be brief."}]},
    "tools": [{"functionDeclarations": [{"name": "weather", "parametersJsonSchema": {}}]}],
    "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}},
    "generationConfig": {"maxOutputTokens": 64, "thinkingConfig": {"thinkingLevel": "low"}},
}


def test_a_documented_gemini_body_passes() -> None:
    check_gemini_body(GEMINI)
    assert not wire_problems("/v1beta/models/gemini-3-pro:generateContent", orjson.dumps(GEMINI))


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("contents", 0, "parts", 0, "txt"), "x", "$.contents.0.parts.0.txt: Extra inputs"),
        (("contents", 1, "parts", 0, "thoughtSignature"), "not base64!", "valid base64"),
        (("generationConfig", "maxTokens"), 5, "$.generationConfig.maxTokens: Extra inputs"),
        (
            ("generationConfig", "thinkingConfig", "thinkingLevel"),
            "huge",
            "huge is not a valid ThinkingLevel",
        ),
        (
            ("toolConfig", "functionCallingConfig", "mode"),
            "SOMETIMES",
            "SOMETIMES is not a valid FunctionCallingConfigMode",
        ),
        (("tools", 0, "functionDeclarations", 0, "params"), {}, "params: Extra inputs"),
        (("systemInstruction", "text"), "Be brief.", "$.systemInstruction.text: Extra inputs"),
        (("candidateCount",), 2, "$.candidateCount: unknown top-level field"),
    ],
)
def test_a_gemini_departure_is_refused_with_its_path(
    path: tuple[str | int, ...], value: object, problem: str
) -> None:
    with pytest.raises(VendorSchemaError, match="google-genai SDK") as caught:
        check_gemini_body(_changed(GEMINI, path, value))
    assert problem in str(caught.value)


def test_the_gemini_check_routes_by_path_and_exempts_only_extra_body_fields() -> None:
    body = orjson.dumps({**GEMINI, "labels": {"team": "a"}})
    streaming = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert wire_problems(streaming, body)
    assert not wire_problems(streaming, body, frozenset({"labels"}))
    assert not wire_problems("/v1beta/models/gemini-2.5-flash:countTokens", body)
    extras = {**GEMINI, "safetySettings": [], "cachedContent": "cachedContents/abc"}
    check_gemini_body(extras)

"""The strict fakes (tests/helpers/strict_vendor.py, strict_responses.py) refuse each documented
replay violation with the vendor's error shape and status, and take the faithful replay: built by
hand here and sent with httpx, so that the fakes cannot pass a provider vacuously."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from tests.helpers.strict_responses import StrictResponses
from tests.helpers.strict_vendor import Step, StrictAnthropic, StrictChat
from tests.providers.wire_server import WireServer

pytestmark = pytest.mark.anyio

JsonObject = dict[str, Any]
WEATHER = {"city": "Oslo"}
STEPS = (
    Step("I need the weather.", "Let me look.", (("weather", WEATHER),), redacted=True),
    Step("Now the final answer.", "Rain in Oslo."),
)
TOOL = {"name": "weather", "description": "The weather.", "input_schema": {"type": "object"}}
FUNCTION = {"name": "weather", "description": "The weather.", "parameters": {"type": "object"}}


async def post(server: WireServer, path: str, body: JsonObject) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.url) as client:
        return await client.post(path, json=body)


# --- Anthropic -------------------------------------------------------------------------------


def anthropic_body(*turns: JsonObject, thinking: bool = True) -> JsonObject:
    body: JsonObject = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Weather in Oslo?"}, *turns],
        "tools": [TOOL],
    }
    if thinking:
        body["thinking"] = {"type": "enabled", "budget_tokens": 2048}
    return body


async def anthropic_first(server: WireServer, fake: StrictAnthropic) -> list[JsonObject]:
    """The first response's content blocks: thinking, redacted thinking, text, tool_use."""
    server.handler = fake.handle
    first = await post(server, "/v1/messages", anthropic_body())
    assert first.status_code == 200
    blocks: list[JsonObject] = first.json()["content"]
    assert [b["type"] for b in blocks] == ["thinking", "redacted_thinking", "text", "tool_use"]
    return blocks


def anthropic_next(blocks: list[JsonObject], thinking: bool = True) -> JsonObject:
    call = blocks[-1]["id"]
    result = {"type": "tool_result", "tool_use_id": call, "content": "rain"}
    turns = ({"role": "assistant", "content": blocks}, {"role": "user", "content": [result]})
    return anthropic_body(*turns, thinking=thinking)


def anthropic_refusal(answer: httpx.Response) -> str:
    assert answer.status_code == 400
    body = answer.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    message: str = body["error"]["message"]
    return message


async def test_anthropic_takes_the_thinking_blocks_sent_back_unchanged_and_first(
    server: WireServer,
) -> None:
    fake = StrictAnthropic(STEPS)
    blocks = await anthropic_first(server, fake)
    answer = await post(server, "/v1/messages", anthropic_next(blocks))
    assert answer.status_code == 200, answer.text
    assert fake.rejections == []


async def test_anthropic_refuses_a_changed_thinking_block(server: WireServer) -> None:
    blocks = await anthropic_first(server, StrictAnthropic(STEPS))
    blocks[0]["thinking"] += " (edited)"
    message = anthropic_refusal(await post(server, "/v1/messages", anthropic_next(blocks)))
    assert message == "messages.1.content.0: Invalid `signature` in `thinking` block"


async def test_anthropic_refuses_changed_redacted_data(server: WireServer) -> None:
    blocks = await anthropic_first(server, StrictAnthropic(STEPS))
    blocks[1]["data"] = blocks[1]["data"][:-4] + "AAAA"
    message = anthropic_refusal(await post(server, "/v1/messages", anthropic_next(blocks)))
    assert "Invalid `data` in `redacted_thinking` block" in message


@pytest.mark.parametrize(
    "kept",
    [
        pytest.param(["text", "tool_use"], id="thinking-dropped"),
        pytest.param(["thinking", "text", "tool_use"], id="redacted-dropped"),
        pytest.param(
            ["text", "thinking", "redacted_thinking", "tool_use"], id="thinking-not-first"
        ),
        pytest.param(["redacted_thinking", "thinking", "text", "tool_use"], id="reordered"),
    ],
)
async def test_anthropic_refuses_a_tool_turn_without_its_thinking_first(
    server: WireServer, kept: list[str]
) -> None:
    blocks = await anthropic_first(server, StrictAnthropic(STEPS))
    by_kind = {block["type"]: block for block in blocks}
    sent = [by_kind[kind] for kind in kept]
    message = anthropic_refusal(await post(server, "/v1/messages", anthropic_next(sent)))
    assert "must begin with the 2 thinking block(s)" in message


async def test_anthropic_refuses_a_final_tool_turn_that_starts_without_thinking(
    server: WireServer,
) -> None:
    """A tool turn the fake did not issue (another model's): the last assistant turn of the tool
    loop must still start with thinking when thinking is enabled."""
    fake = StrictAnthropic(STEPS)
    server.handler = fake.handle
    foreign = [{"type": "tool_use", "id": "toolu_other", "name": "weather", "input": WEATHER}]
    message = anthropic_refusal(await post(server, "/v1/messages", anthropic_next(foreign)))
    expected = "Expected `thinking` or `redacted_thinking`, but found `tool_use`"
    assert message.startswith(f"messages.1.content.0.type: {expected}")


@pytest.mark.parametrize("choice", [{"type": "any"}, {"type": "tool", "name": "weather"}])
async def test_anthropic_refuses_a_forced_tool_with_thinking(
    server: WireServer, choice: JsonObject
) -> None:
    server.handler = StrictAnthropic(STEPS).handle
    body = {**anthropic_body(), "tool_choice": choice}
    message = anthropic_refusal(await post(server, "/v1/messages", body))
    assert message == "Thinking may not be enabled when tool_choice forces tool use."
    answer = await post(server, "/v1/messages", {**body, "thinking": {"type": "disabled"}})
    assert answer.status_code == 200, answer.text


async def test_anthropic_without_thinking_takes_a_tool_turn_without_it(server: WireServer) -> None:
    blocks = await anthropic_first(server, StrictAnthropic(STEPS))
    answer = await post(server, "/v1/messages", anthropic_next(blocks[2:], thinking=False))
    assert answer.status_code == 200, answer.text


# --- DeepSeek --------------------------------------------------------------------------------


def chat_body(model: str, *messages: JsonObject) -> JsonObject:
    question = {"role": "user", "content": "Weather in Oslo?"}
    tools = [{"type": "function", "function": FUNCTION}]
    return {"model": model, "messages": [question, *messages], "tools": tools}


async def chat_first(server: WireServer, fake: StrictChat, model: str) -> JsonObject:
    server.handler = fake.handle
    first = await post(server, "/chat/completions", chat_body(model))
    assert first.status_code == 200, first.text
    message: JsonObject = first.json()["choices"][0]["message"]
    return message


def chat_next(model: str, message: JsonObject, *later: JsonObject) -> JsonObject:
    call = message["tool_calls"][0]["id"]
    result = {"role": "tool", "tool_call_id": call, "content": "rain"}
    return chat_body(model, message, result, *later)


def openai_refusal(answer: httpx.Response) -> JsonObject:
    assert answer.status_code == 400
    error: JsonObject = answer.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert set(error) == {"message", "type", "param", "code"}
    return error


async def test_deepseek_takes_the_reasoning_content_sent_back(server: WireServer) -> None:
    message = await chat_first(server, StrictChat(STEPS, vendor="deepseek"), "deepseek-reasoner")
    assert message["reasoning_content"] == "I need the weather."
    answer = await post(server, "/chat/completions", chat_next("deepseek-reasoner", message))
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("change", ["dropped", "edited"])
async def test_deepseek_refuses_a_tool_turn_without_its_reasoning_content(
    server: WireServer, change: str
) -> None:
    message = await chat_first(server, StrictChat(STEPS, vendor="deepseek"), "deepseek-reasoner")
    if change == "dropped":
        del message["reasoning_content"]
    else:
        message["reasoning_content"] = "Something else."
    body = chat_next("deepseek-reasoner", message)
    error = openai_refusal(await post(server, "/chat/completions", body))
    assert error["message"] == (
        "The reasoning_content in the thinking mode must be passed back to the API."
    )
    assert error["param"] == "messages[1].reasoning_content"


async def test_deepseek_refuses_a_lost_reasoning_content_in_a_later_request(
    server: WireServer,
) -> None:
    """DeepSeek: "in all subsequent requests", not only within the tool loop."""
    fake = StrictChat(STEPS, vendor="deepseek")
    message = await chat_first(server, fake, "deepseek-reasoner")
    without = {k: v for k, v in message.items() if k != "reasoning_content"}
    later = ({"role": "assistant", "content": "Rain."}, {"role": "user", "content": "Thanks!"})
    body = chat_next("deepseek-reasoner", without, *later)
    openai_refusal(await post(server, "/chat/completions", body))


# --- Gemini (OpenAI-compatible) --------------------------------------------------------------

GEMINI = "gemini-3-pro-preview"


def gemini_refusal(answer: httpx.Response) -> str:
    assert answer.status_code == 400
    [wrapped] = answer.json()
    assert wrapped["error"]["code"] == 400
    assert wrapped["error"]["status"] == "INVALID_ARGUMENT"
    message: str = wrapped["error"]["message"]
    return message


async def test_gemini_takes_the_thought_signature_sent_back(server: WireServer) -> None:
    message = await chat_first(server, StrictChat(STEPS, vendor="gemini"), GEMINI)
    assert message["tool_calls"][0]["extra_content"]["google"]["thought_signature"]
    answer = await post(server, "/chat/completions", chat_next(GEMINI, message))
    assert answer.status_code == 200, answer.text


async def test_gemini_refuses_a_current_call_without_its_signature(server: WireServer) -> None:
    message = await chat_first(server, StrictChat(STEPS, vendor="gemini"), GEMINI)
    del message["tool_calls"][0]["extra_content"]
    reply = gemini_refusal(await post(server, "/chat/completions", chat_next(GEMINI, message)))
    assert "function call `default_api:weather` in the 2. content block is missing" in reply


async def test_gemini_refuses_a_changed_signature(server: WireServer) -> None:
    message = await chat_first(server, StrictChat(STEPS, vendor="gemini"), GEMINI)
    message["tool_calls"][0]["extra_content"]["google"]["thought_signature"] = "c2lnbmVk"
    reply = gemini_refusal(await post(server, "/chat/completions", chat_next(GEMINI, message)))
    assert reply.startswith("Corrupted thought signature")


async def test_gemini_refuses_a_signature_it_never_issued(server: WireServer) -> None:
    """A signature on a call the fake issued without one (the second of parallel calls, or
    another model's) does not verify."""
    fake = StrictChat(
        (Step("", "", (("weather", WEATHER), ("weather", WEATHER))),), vendor="gemini"
    )
    message = await chat_first(server, fake, GEMINI)
    second = message["tool_calls"][1]
    assert "extra_content" not in second
    second["extra_content"] = {"google": {"thought_signature": "b3RoZXI="}}
    results = [
        {"role": "tool", "tool_call_id": c["id"], "content": "rain"} for c in message["tool_calls"]
    ]
    body = chat_body(GEMINI, message, *results)
    reply = gemini_refusal(await post(server, "/chat/completions", body))
    assert reply.startswith("Corrupted thought signature")


async def test_gemini_checks_only_the_current_turn(server: WireServer) -> None:
    """Gemini validates the signatures of the current turn only (since the last user message)."""
    message = await chat_first(server, StrictChat(STEPS, vendor="gemini"), GEMINI)
    del message["tool_calls"][0]["extra_content"]
    later = ({"role": "assistant", "content": "Rain."}, {"role": "user", "content": "Thanks!"})
    answer = await post(server, "/chat/completions", chat_next(GEMINI, message, *later))
    assert answer.status_code == 200, answer.text


# --- OpenAI Responses ------------------------------------------------------------------------


def responses_body(*items: JsonObject) -> JsonObject:
    tool = {"type": "function", **FUNCTION, "strict": False}
    return {
        "model": "gpt-5",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "input": [{"role": "user", "content": "Weather in Oslo?"}, *items],
        "tools": [tool],
    }


async def responses_first(server: WireServer) -> list[JsonObject]:
    server.handler = StrictResponses(STEPS).handle
    first = await post(server, "/v1/responses", responses_body())
    assert first.status_code == 200, first.text
    output: list[JsonObject] = first.json()["output"]
    assert [item["type"] for item in output] == ["reasoning", "message", "function_call"]
    return output


def responses_next(output: list[JsonObject], *between: JsonObject) -> JsonObject:
    reasoning, message, call = copy.deepcopy(output)
    sent_reasoning = {k: reasoning[k] for k in ("type", "id", "summary", "encrypted_content")}
    sent_call = {k: call[k] for k in ("type", "call_id", "name", "arguments")}
    result = {"type": "function_call_output", "call_id": call["call_id"], "output": "rain"}
    return responses_body(sent_reasoning, *between, message, sent_call, result)


async def test_responses_takes_the_reasoning_item_right_before_its_call(
    server: WireServer,
) -> None:
    output = await responses_first(server)
    answer = await post(server, "/v1/responses", responses_next(output))
    assert answer.status_code == 200, answer.text


def without_reasoning(body: JsonObject, message_id: bool) -> JsonObject:
    """The body with its reasoning item left out; its message with or without the item id."""
    items = [item for item in body["input"] if item.get("type") != "reasoning"]
    if not message_id:
        items = [
            {"role": "assistant", "content": "Let me look."}
            if item.get("type") == "message"
            else item
            for item in items
        ]
    return {**body, "input": items}


async def test_responses_refuses_a_call_without_its_reasoning_item(server: WireServer) -> None:
    output = await responses_first(server)
    body = without_reasoning(responses_next(output), message_id=False)
    error = openai_refusal(await post(server, "/v1/responses", body))
    assert error["message"] == (
        f"Item '{output[2]['call_id']}' of type 'function_call' was provided without its"
        f" required 'reasoning' item: '{output[0]['id']}'."
    )
    assert error["param"] == "input"


async def test_responses_refuses_a_message_sent_with_its_id_without_its_reasoning_item(
    server: WireServer,
) -> None:
    output = await responses_first(server)
    body = without_reasoning(responses_next(output), message_id=True)
    error = openai_refusal(await post(server, "/v1/responses", body))
    assert error["message"] == (
        f"Item '{output[1]['id']}' of type 'message' was provided without its required"
        f" 'reasoning' item: '{output[0]['id']}'."
    )


async def test_responses_refuses_a_reasoning_item_not_right_before_its_call(
    server: WireServer,
) -> None:
    output = await responses_first(server)
    aside = {"role": "user", "content": "(an aside)"}
    error = openai_refusal(await post(server, "/v1/responses", responses_next(output, aside)))
    assert "without its required 'reasoning' item" in error["message"]


async def test_responses_refuses_changed_encrypted_content(server: WireServer) -> None:
    output = await responses_first(server)
    output[0]["encrypted_content"] = output[0]["encrypted_content"][:-4] + "AAAA"
    error = openai_refusal(await post(server, "/v1/responses", responses_next(output)))
    assert error["code"] == "invalid_encrypted_content"

"""Reasoning on Chat Completions: DeepSeek's `reasoning_content` on recorded traffic
(tests/fixtures/recorded/deepseek, see its README), and Gemini's thought signatures on its
OpenAI-compatible endpoint in the documented shape (`tool_calls[i].extra_content.google.
thought_signature`, echoed verbatim; no recording of that endpoint exists here).

Decode: served over the loopback server whole and cut at odd byte offsets (streams also one event
per chunk). Encode: the next request carries the reasoning where the server takes it back, and
nothing where it does not."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs
import orjson
import pytest

from reactloop._core import ReasoningDelta, ReasoningPart, TextPart
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._providers import OpenAIModel
from tests.providers.recorded import (
    ODD_OFFSETS,
    Deltas,
    chat_view,
    deepseek,
    sse_data,
    stream_bytes,
    three_ways,
)
from tests.providers.render import openai_json, sse
from tests.providers.wire_server import Reply, WireServer, json_reply, split_at, sse_reply

pytestmark = pytest.mark.anyio

DEEPSEEK = "deepseek-reasoner"
GEMINI = "gemini-3-pro-preview"


@pytest.fixture
async def reasoner(server: WireServer) -> AsyncIterator[OpenAIModel]:
    async with OpenAIModel(
        DEEPSEEK, api_key="sk-test", base_url=server.url, provider="deepseek"
    ) as model:
        yield model


@pytest.fixture
async def gemini(server: WireServer) -> AsyncIterator[OpenAIModel]:
    async with OpenAIModel(
        GEMINI, api_key="k", base_url=f"{server.url}/v1beta/openai", provider="gemini"
    ) as model:
        yield model


def json_two_ways(body: dict[str, Any]) -> list[Reply]:
    raw = orjson.dumps(body)
    whole = json_reply(body)
    return [whole, Reply(200, tuple(split_at(raw, [n for n in ODD_OFFSETS if n < len(raw)])),
                         whole.headers)]  # fmt: skip


def sent(server: WireServer, index: int = -1) -> dict[str, Any]:
    return chat_view(server.requests[index].json())


# -- DeepSeek reasoning_content ------------------------------------------------------------------


async def test_reasoning_content_decodes_before_the_text(
    server: WireServer, reasoner: OpenAIModel
) -> None:
    (interaction,) = deepseek("test_deepseek_model_thinking_part")
    body = interaction["response"]["parsed_body"]
    message = body["choices"][0]["message"]
    question = UserMessage("How do I cross the street?")
    for reply in json_two_ways(body):
        server.reply_with(reply)
        answer = await reasoner.request(ModelRequest((question,)))
        assert answer.message.parts == (
            ReasoningPart(message["reasoning_content"], provider="deepseek", model=DEEPSEEK),
            TextPart(message["content"]),
        )
        assert (
            sent(server)["messages"] == chat_view(interaction["request"]["parsed_body"])["messages"]
        )


async def test_streamed_reasoning_content_is_reasoning_deltas(
    server: WireServer, reasoner: OpenAIModel
) -> None:
    (interaction,) = deepseek("test_deepseek_model_thinking_stream")
    raw = stream_bytes(interaction)
    chunks = [data["choices"][0]["delta"] for data in sse_data(raw) if data["choices"]]
    thought = "".join(delta.get("reasoning_content") or "" for delta in chunks)
    said = "".join(delta.get("content") or "" for delta in chunks)
    for served in three_ways(raw):
        server.reply_with(sse_reply(served))
        deltas = Deltas()
        answer = await reasoner.stream(ModelRequest((UserMessage("Hello"),)), deltas)
        assert answer.message.parts == (
            ReasoningPart(thought, provider="deepseek", model=DEEPSEEK),
            TextPart(said),
        )
        assert "".join(d.text for d in deltas.seen if isinstance(d, ReasoningDelta)) == thought
        mine, theirs = sent(server), chat_view(interaction["request"]["parsed_body"])
        assert mine == theirs


# -- `reasoning` (OpenRouter, vLLM, Ollama, Groq) ------------------------------------------------


async def test_a_reasoning_field_is_read_like_reasoning_content(server: WireServer) -> None:
    """Servers that name the field `reasoning` give the same part, whole and streamed."""
    body = openai_json("Cross at the light.")
    body["choices"][0]["message"]["reasoning"] = "Safety first."
    chunks = [
        sse({"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning": "Safety "}}]}),
        sse({"choices": [{"index": 0, "delta": {"reasoning": "first."}}]}),
        sse({"choices": [{"index": 0, "delta": {"content": "Cross at the light."}}]}),
        sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        b"data: [DONE]\n\n",
    ]
    expected = (ReasoningPart("Safety first.", provider="local", model="qwen3"),
                TextPart("Cross at the light."))  # fmt: skip
    url = f"{server.url}/v1"
    async with OpenAIModel("qwen3", api_key="k", base_url=url, provider="local") as local:
        server.reply_with(json_reply(body))
        whole = await local.request(ModelRequest((UserMessage("How?"),)))
        server.reply_with(sse_reply(chunks))
        deltas = Deltas()
        streamed = await local.stream(ModelRequest((UserMessage("How?"),)), deltas)
    assert whole.message.parts == expected and streamed.message.parts == expected
    assert [d.text for d in deltas.seen if isinstance(d, ReasoningDelta)] == ["Safety ", "first."]


THOUGHT = ReasoningPart("I should check.", provider="deepseek", model=DEEPSEEK)
LOOKUP = ToolCall("lookup", '{"q": "street"}', "call_1")


def tool_loop(*after: Message) -> tuple[Message, ...]:
    return (
        UserMessage("How do I cross the street?"),
        AssistantMessage(parts=[THOUGHT, LOOKUP]),
        ToolMessage("call_1", "lookup", "Use the crosswalk."),
        *after,
    )


async def test_reasoning_content_goes_back_within_the_tool_loop(
    server: WireServer, reasoner: OpenAIModel
) -> None:
    server.reply_with(json_reply(deepseek("test_deepseek_model_thinking_part")[0]["response"]
                                 ["parsed_body"]))  # fmt: skip
    await reasoner.request(ModelRequest(tool_loop()))
    assistant = sent(server)["messages"][1]
    assert assistant == {
        "role": "assistant", "content": None, "reasoning_content": "I should check.",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": "street"}'}}],
    }  # fmt: skip


async def test_an_earlier_turns_reasoning_goes_back_only_where_it_made_tool_calls(
    server: WireServer, reasoner: OpenAIModel
) -> None:
    """After a new user message, the reasoning of an answer that made tool calls still goes back
    (DeepSeek wants it in every later request); a plain answer's stays out (DeepSeek documents
    that it is not part of the next turn's context)."""
    server.reply_with(json_reply(deepseek("test_deepseek_model_thinking_part")[0]["response"]
                                 ["parsed_body"]))  # fmt: skip
    answer = AssistantMessage(parts=[attrs.evolve(THOUGHT, text="Done."), TextPart("Cross.")])
    await reasoner.request(ModelRequest(tool_loop(answer, UserMessage("Why?"))))
    messages = sent(server)["messages"]
    assert messages[1]["reasoning_content"] == "I should check."
    assert "reasoning_content" not in messages[3]


async def test_reasoning_of_another_provider_is_dropped(
    server: WireServer, reasoner: OpenAIModel
) -> None:
    claude = ReasoningPart("Hm.", signature="sig", provider="anthropic", model="claude-opus-5")
    server.reply_with(json_reply(deepseek("test_deepseek_model_thinking_part")[0]["response"]
                                 ["parsed_body"]))  # fmt: skip
    history = (UserMessage("Hi"), AssistantMessage(parts=[claude, LOOKUP]),
               ToolMessage("call_1", "lookup", "ok"))  # fmt: skip
    await reasoner.request(ModelRequest(history))
    body = server.requests[-1].json()
    assert "reasoning_content" not in body["messages"][1]
    assert "extra_content" not in body["messages"][1]["tool_calls"][0]


# -- Gemini thought signatures ---------------------------------------------------------------------

SIGNATURE = "CiQB0e2Kb+/=Signature/A=="


def gemini_call(call_id: str, city: str, signature: str | None) -> dict[str, Any]:
    call: dict[str, Any] = {
        "id": call_id, "type": "function",
        "function": {"name": "get_weather", "arguments": orjson.dumps({"city": city}).decode()},
    }  # fmt: skip
    if signature is not None:
        call["extra_content"] = {"google": {"thought_signature": signature}}
    return call


def gemini_answer() -> dict[str, Any]:
    """Two parallel calls, the first one signed (Gemini signs the first call of a step)."""
    calls = [gemini_call("function-call-1", "Paris", SIGNATURE),
             gemini_call("function-call-2", "Rome", None)]  # fmt: skip
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return {
        "id": "g1", "object": "chat.completion", "model": GEMINI,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }  # fmt: skip


def gemini_stream() -> bytes:
    calls = gemini_answer()["choices"][0]["message"]["tool_calls"]
    chunks = [
        {"id": "g1", "model": GEMINI, "choices": [{"index": 0, "delta": {
            "role": "assistant", "tool_calls": [{**call, "index": index}]}}]}
        for index, call in enumerate(calls)
    ]  # fmt: skip
    done = {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    chunks.append({"id": "g1", "model": GEMINI, "choices": [done]})
    return b"".join(b"data: " + orjson.dumps(chunk) + b"\n\n" for chunk in chunks) + (
        b"data: [DONE]\n\n"
    )


EXPECTED = (
    ReasoningPart(signature=SIGNATURE, provider="gemini", model=GEMINI),
    ToolCall("get_weather", '{"city":"Paris"}', "function-call-1"),
    ToolCall("get_weather", '{"city":"Rome"}', "function-call-2"),
)


async def test_a_thought_signature_is_kept_before_its_call(
    server: WireServer, gemini: OpenAIModel
) -> None:
    for reply in json_two_ways(gemini_answer()):
        server.reply_with(reply)
        answer = await gemini.request(ModelRequest((UserMessage("Weather?"),)))
        assert answer.message.parts == EXPECTED


async def test_a_streamed_thought_signature_is_kept_before_its_call(
    server: WireServer, gemini: OpenAIModel
) -> None:
    for served in three_ways(gemini_stream()):
        server.reply_with(sse_reply(served))
        answer = await gemini.stream(ModelRequest((UserMessage("Weather?"),)), Deltas())
        assert answer.message.parts == EXPECTED


async def test_the_thought_signature_is_echoed_on_its_call_verbatim(
    server: WireServer, gemini: OpenAIModel
) -> None:
    server.reply_with(json_reply(gemini_answer()))
    answer = await gemini.request(ModelRequest((UserMessage("Weather?"),)))
    history = (
        UserMessage("Weather?"), answer.message,
        ToolMessage("function-call-1", "get_weather", "18 C"),
        ToolMessage("function-call-2", "get_weather", "21 C"),
    )  # fmt: skip
    await gemini.request(ModelRequest(history))
    calls = server.requests[-1].json()["messages"][1]["tool_calls"]
    assert calls == gemini_answer()["choices"][0]["message"]["tool_calls"]


async def test_a_signature_of_another_model_family_is_not_echoed(
    server: WireServer, gemini: OpenAIModel
) -> None:
    other = ReasoningPart(signature=SIGNATURE, provider="gemini", model="gemini-2.5-flash")
    call = ToolCall("get_weather", '{"city":"Paris"}', "function-call-1")
    server.reply_with(json_reply(gemini_answer()))
    history = (UserMessage("Weather?"), AssistantMessage(parts=[other, call]),
               ToolMessage("function-call-1", "get_weather", "18 C"))  # fmt: skip
    await gemini.request(ModelRequest(history))
    assert "extra_content" not in server.requests[-1].json()["messages"][1]["tool_calls"][0]

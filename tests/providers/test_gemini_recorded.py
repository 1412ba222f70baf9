"""Gemini's native API on recorded traffic (tests/fixtures/recorded/google, see
tests/fixtures/README.md): the encode half. The conversation rebuilt from a recorded answer
(decoded by the provider itself over the loopback server, or by the Responses provider for the
turns GPT-5 answered) makes `GeminiModel` send what Gemini accepted next, compared over what the
provider owns (`view`): roles, part kinds in order, texts, calls and responses, thought
signatures (the bytes: the recorded request spells them in base64's URL-safe alphabet, reactloop
sends them back as received), tools and tool config.

Where the recorded client sent what reactloop words otherwise by design, the view says so:
a `functionResponse.response` is `{"output": ...}` here (the key Google documents) and
`{"return_value": ...}` there, so the view keeps its values; a tool choice of "required" is mode
`ANY` here, and `ANY` with every declared name listed there (the same choice).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from reactloop._core import (
    Message,
    ModelRequest,
    ReasoningPart,
    ToolCall,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._loop._loop import ReActLoop
from reactloop._providers import GeminiModel
from reactloop._providers._gemini_content import SKIP_SIGNATURE
from reactloop._providers._responses import decode_response as decode_responses_api
from tests.providers.conftest import API_KEY
from tests.providers.recorded import RECORDED, Deltas, interactions, stream_bytes
from tests.providers.wire_server import WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

JsonObject = dict[str, Any]
MODEL = "gemini-3-pro-preview"
STREAMED = "test_google_streaming_tool_call_thought_signature"
FROM_OTHER = "test_thinking_with_tool_calls_from_other_model"
NO_PARAMETERS: JsonObject = {"additionalProperties": False, "properties": {}, "type": "object"}
GET_COUNTRY = ToolSpec("get_country", "", NO_PARAMETERS)


def google(name: str) -> list[JsonObject]:
    return interactions(RECORDED / "google" / f"{name}.yaml")


def signature_bytes(signature: str) -> bytes:
    """A thought signature's bytes, whichever base64 alphabet spells it."""
    return base64.b64decode(signature.replace("-", "+").replace("_", "/"))


def _part_view(part: JsonObject) -> tuple[Any, ...]:
    signature = part.get("thoughtSignature")
    signed = None if signature is None else signature_bytes(signature)
    if "functionCall" in part:
        call = part["functionCall"]
        return ("functionCall", call["name"], call.get("args", {}), signed)
    if "functionResponse" in part:
        response = part["functionResponse"]
        return ("functionResponse", response["name"], list(response["response"].values()))
    return ("thought" if part.get("thought") else "text", part.get("text"), signed)


def _tool_view(body: JsonObject) -> list[tuple[str, str, Any]]:
    declarations = [d for tool in body.get("tools", []) for d in tool["functionDeclarations"]]
    return [
        (
            d["name"],
            d.get("description", ""),
            d.get("parametersJsonSchema", d.get("parameters_json_schema")),
        )
        for d in declarations
    ]


def _tool_config_view(body: JsonObject) -> JsonObject | None:
    """`functionCallingConfig`, a list of allowed names that names every tool left out."""
    config = dict(body.get("toolConfig", {}).get("functionCallingConfig", {}))
    names = [name for name, _, _ in _tool_view(body)]
    if sorted(config.get("allowedFunctionNames", [])) == sorted(names):
        config.pop("allowedFunctionNames", None)
    return config or None


def view(body: JsonObject) -> JsonObject:
    """What the provider owns in a request body, normalised as the module doc says."""
    return {
        "contents": [
            (turn["role"], [_part_view(part) for part in turn["parts"]])
            for turn in body["contents"]
        ],
        "system": body.get("systemInstruction"),
        "tools": _tool_view(body),
        "toolConfig": _tool_config_view(body),
        "thinking": body.get("generationConfig", {}).get("thinkingConfig"),
    }


@pytest.fixture
async def gemini(server: WireServer) -> AsyncIterator[GeminiModel]:
    async with GeminiModel(MODEL, api_key=API_KEY, base_url=server.url) as model:
        yield model


async def test_a_streamed_signed_call_goes_back_as_gemini_accepted_it(
    server: WireServer, gemini: GeminiModel
) -> None:
    """The streamed call decodes with its signature; the next request carries it on the call,
    beside the call's result, as the recorded second request does."""
    recorded = google(STREAMED)
    server.reply_with(*(sse_reply([stream_bytes(i)]) for i in recorded))
    question = UserMessage("What is the capital of the user country? Call the tool")
    first = ModelRequest((question,), tools=(GET_COUNTRY,))
    answer = await gemini.stream(first, Deltas())
    (call,) = answer.message.tool_calls
    history: tuple[Message, ...] = (
        question,
        answer.message,
        ToolMessage(call.id, call.name, "Mexico"),
    )
    await gemini.stream(ModelRequest(history, tools=(GET_COUNTRY,)), Deltas())
    for sent, accepted in zip(server.requests, recorded, strict=True):
        assert sent.path.endswith(f"/models/{MODEL}:streamGenerateContent?alt=sse")
        assert view(sent.json()) == view(accepted["request"]["parsed_body"])
    sent_call = server.requests[1].json()["contents"][1]["parts"][0]
    streamed = orjson.loads(stream_bytes(recorded[0]).split(b"data: ", 2)[1].split(b"\r\n")[0])
    received = streamed["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert sent_call["thoughtSignature"] == received  # the text as received, not re-encoded
    response = server.requests[1].json()["contents"][2]["parts"][0]["functionResponse"]
    assert response["id"] == sent_call["functionCall"]["id"] == call.id


def _openai_history() -> tuple[Message, ...]:
    """The turns GPT-5 answered, decoded by reactloop's Responses provider: its reasoning item
    (encrypted) and its call, then the call's result."""
    recorded = google(FROM_OTHER)
    answer, _ = decode_responses_api(
        "openai-responses", "gpt-5", recorded[0]["response"]["parsed_body"]
    )
    (call,) = answer.message.tool_calls
    assert any(isinstance(part, ReasoningPart) and part.encrypted for part in answer.message.parts)
    question = UserMessage("What is the capital of the country?")
    return (question, answer.message, ToolMessage(call.id, call.name, "Mexico"))


FINAL_RESULT = ToolSpec(
    "final_result",
    "The final response which ends this conversation",
    {
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
        "type": "object",
    },
)


async def test_a_loop_begun_by_another_model_continues_on_gemini(
    server: WireServer, gemini: GeminiModel
) -> None:
    """GPT-5's reasoning is not sent; its unsigned call carries Google's placeholder signature;
    the answer's own signature decodes before the call that carried it."""
    recorded = google(FROM_OTHER)[2]
    server.reply_with(json_reply(recorded["response"]["parsed_body"]))
    request = ModelRequest(
        _openai_history(), tools=(GET_COUNTRY, FINAL_RESULT), tool_choice=ToolChoice.REQUIRED
    )
    answer = await gemini.request(request)
    sent = server.requests[0]
    assert sent.path.endswith(f"/models/{MODEL}:generateContent")
    assert view(sent.json()) == view(recorded["request"]["parsed_body"])
    assert sent.json()["contents"][1]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE
    assert b"encrypted" not in sent.body and b"gAAAA" not in sent.body
    signature, call = answer.message.parts
    assert isinstance(signature, ReasoningPart) and isinstance(call, ToolCall)
    assert (signature.provider, signature.model) == ("google", MODEL)
    assert call.name == "final_result"


async def test_the_signature_gemini_gave_goes_back_on_the_next_turn(
    server: WireServer, gemini: GeminiModel
) -> None:
    """The recorded answer's signed `final_result` call, sent back in a further turn, carries
    its own signature (the placeholder only where no Gemini model signed)."""
    recorded = google(FROM_OTHER)[2]
    server.reply_with(json_reply(recorded["response"]["parsed_body"]))
    history = _openai_history()
    answer = await gemini.request(ModelRequest(history, tools=(GET_COUNTRY, FINAL_RESULT)))
    (call,) = answer.message.tool_calls
    later = (*history, answer.message, ToolMessage(call.id, call.name, "done"))
    await gemini.request(ModelRequest(later, tools=(GET_COUNTRY, FINAL_RESULT)))
    contents = server.requests[1].json()["contents"]
    assert [turn["role"] for turn in contents] == ["user", "model", "user", "model", "user"]
    parts = recorded["response"]["parsed_body"]["candidates"][0]["content"]["parts"]
    assert contents[3]["parts"][0]["thoughtSignature"] == parts[0]["thoughtSignature"]
    assert contents[1]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE


def test_the_recorded_signatures_are_the_same_bytes_in_either_alphabet() -> None:
    """The view's normalisation is sound: the streamed signature and the URL-safe one the
    recorded client sent back decode to the same bytes, and differ as text."""
    recorded = google(STREAMED)
    sent = recorded[1]["request"]["parsed_body"]["contents"][1]["parts"][0]["thoughtSignature"]
    streamed = orjson.loads(stream_bytes(recorded[0]).split(b"data: ", 2)[1].split(b"\r\n")[0])
    received = streamed["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert sent != received
    assert signature_bytes(sent) == signature_bytes(received)


async def test_a_streamed_gemini_tool_loop_sends_what_gemini_accepted(
    server: WireServer, gemini: GeminiModel
) -> None:
    """End to end: a `ReActLoop` streaming from Gemini 3, its tool answering as recorded, sends
    both recorded requests' contents (the signed call back beside its result) and ends with the
    recorded answer."""
    recorded = google(STREAMED)
    server.reply_with(*(sse_reply([stream_bytes(i)]) for i in recorded))

    def get_country() -> str:
        """The user's country."""
        return "Mexico"

    loop = ReActLoop(gemini, tools=[get_country])
    async with loop.stream("What is the capital of the user country? Call the tool") as events:
        result = await events.result()
    assert result.output == "The capital of Mexico is Mexico City."
    for sent, accepted in zip(server.requests, recorded, strict=True):
        assert view(sent.json())["contents"] == view(accepted["request"]["parsed_body"])["contents"]

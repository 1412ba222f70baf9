"""GeminiModel on recorded Gemini traffic (tests/fixtures/recorded/google, see
tests/fixtures/README.md), the decode half: each answer Gemini sent, served over the loopback
server whole, one SSE event per chunk and cut at odd byte offsets (a JSON answer whole and cut),
gives the same typed response: every thought signature byte-identical and right before the part
that carried it, the calls with their names and arguments, the text, the usage.

The expectations are read from the recorded events themselves (`recorded_parts`), not written
down: a signature the provider changed by one byte, moved or dropped fails here as it would
against the API, which refuses a Gemini 3 call whose signature is missing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from reactloop._core import (
    FinishReason,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ReasoningPart,
    TextPart,
    ToolCall,
    Usage,
    UserMessage,
)
from reactloop._providers import GeminiModel
from tests.providers.conftest import API_KEY
from tests.providers.recorded import ODD_OFFSETS, RECORDED, interactions
from tests.providers.wire_server import Reply, WireServer, split_at, sse_reply

pytestmark = pytest.mark.anyio

GOOGLE = RECORDED / "google"
STREAMED = "test_google_streaming_tool_call_thought_signature.yaml"
FROM_ANOTHER_MODEL = "test_thinking_with_tool_calls_from_other_model.yaml"
MODEL = "gemini-3-pro-preview"
JSON = (("content-type", "application/json"),)
REQUEST = ModelRequest((UserMessage("What is the capital of the user country?"),))


def gemini_answers(name: str) -> list[dict[str, Any]]:
    """The recorded interactions answered by Gemini's native API (not another vendor's)."""
    return [
        interaction
        for interaction in interactions(GOOGLE / name)
        if "generativelanguage.googleapis.com" in interaction["request"]["uri"]
    ]


def crlf_events(raw: bytes) -> list[bytes]:
    """One chunk per SSE event of a recorded stream (Gemini ends its events with CRLF CRLF)."""
    pieces, start = [], 0
    while (end := raw.find(b"\r\n\r\n", start)) != -1:
        pieces.append(raw[start : end + 4])
        start = end + 4
    return pieces + ([raw[start:]] if start < len(raw) else [])


def served(response: dict[str, Any]) -> list[Reply]:
    """The recorded answer every way: a stream whole, per event and cut at odd offsets; a JSON
    body whole and cut."""
    if "body" in response:
        raw = str(response["body"]["string"]).encode()
        cuts = split_at(raw, [n for n in ODD_OFFSETS if n < len(raw)])
        return [sse_reply([raw]), sse_reply(crlf_events(raw)), sse_reply(cuts)]
    raw = orjson.dumps(response["parsed_body"])
    cuts = split_at(raw, [n for n in ODD_OFFSETS if n < len(raw)])
    return [Reply(200, (raw,), JSON), Reply(200, tuple(cuts), JSON)]


def recorded_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The `GenerateContentResponse`s of an answer: each event of a stream, or the body."""
    if "parsed_body" in response:
        return [response["parsed_body"]]
    lines = str(response["body"]["string"]).splitlines()
    return [orjson.loads(line[5:]) for line in lines if line.startswith("data:")]


def recorded_parts(response: dict[str, Any]) -> list[tuple[str, Any]]:
    """What the answer holds, in order, read by hand: ("signature", text), ("call", (name,
    args)) and ("text", joined text); an empty text part adds nothing."""
    found: list[tuple[str, Any]] = []
    for chunk in recorded_chunks(response):
        for part in chunk["candidates"][0]["content"]["parts"]:
            if "thoughtSignature" in part:
                found.append(("signature", part["thoughtSignature"]))
            if "functionCall" in part:
                call = part["functionCall"]
                found.append(("call", (call["name"], call.get("args", {}))))
            elif part.get("text") and found and found[-1][0] == "text":
                found[-1] = ("text", found[-1][1] + part["text"])
            elif part.get("text"):
                found.append(("text", part["text"]))
    return found


def recorded_usage(response: dict[str, Any]) -> Usage:
    """The last chunk's usage, by the documented rule: the output counts the thoughts."""
    usage = recorded_chunks(response)[-1]["usageMetadata"]
    thoughts = usage.get("thoughtsTokenCount", 0)
    return Usage(
        input_tokens=usage["promptTokenCount"],
        output_tokens=usage["candidatesTokenCount"] + thoughts,
        reasoning_tokens=thoughts,
    )


def as_recorded(response: ModelResponse) -> list[tuple[str, Any]]:
    """The decoded parts in the form of `recorded_parts`."""
    found: list[tuple[str, Any]] = []
    for part in response.message.parts:
        if isinstance(part, ReasoningPart):
            assert (part.text, part.provider, part.model) == ("", "google", MODEL)
            found.append(("signature", part.signature))
        elif isinstance(part, ToolCall):
            found.append(("call", (part.name, orjson.loads(part.arguments))))
        elif isinstance(part, TextPart):
            found.append(("text", part.text))
    return found


@pytest.fixture
async def model(server: WireServer) -> AsyncIterator[GeminiModel]:
    async with GeminiModel(MODEL, api_key=API_KEY, base_url=server.url) as gemini:
        yield gemini


async def answer(server: WireServer, model: GeminiModel, reply: Reply) -> ModelResponse:
    server.reply_with(reply)
    if reply.headers == JSON:
        return await model.request(REQUEST)

    async def ignore(delta: ModelDelta) -> None:
        return None

    return await model.stream(REQUEST, ignore)


def same(response: ModelResponse) -> tuple[Any, ...]:
    """A response as two decodings of one answer must agree on it: all but the ids reactloop
    makes for calls Gemini sent without one (a fresh id per decoding)."""
    return (as_recorded(response), response.usage, response.finish_reason, response.id)


async def decoded(
    server: WireServer, model: GeminiModel, recorded: dict[str, Any]
) -> ModelResponse:
    """The recorded answer decoded every way; every way gives the same response."""
    results = [await answer(server, model, reply) for reply in served(recorded["response"])]
    assert len(results) >= 2
    assert all(same(result) == same(results[0]) for result in results[1:])
    return results[0]


CASES = [(STREAMED, 0), (STREAMED, 1), (FROM_ANOTHER_MODEL, 0)]


@pytest.mark.parametrize(("name", "k"), CASES)
async def test_a_recorded_answer_decodes_to_its_parts_in_order(
    server: WireServer, model: GeminiModel, name: str, k: int
) -> None:
    recorded = gemini_answers(name)[k]
    response = await decoded(server, model, recorded)
    assert as_recorded(response) == recorded_parts(recorded["response"])
    assert response.usage == recorded_usage(recorded["response"])
    last = recorded_chunks(recorded["response"])[-1]
    assert (response.model, response.id) == (last["modelVersion"], last["responseId"])


async def test_a_streamed_calls_signature_is_kept_byte_for_byte(
    server: WireServer, model: GeminiModel
) -> None:
    recorded = gemini_answers(STREAMED)[0]
    raw = str(recorded["response"]["body"]["string"])
    response = await decoded(server, model, recorded)
    signature, call = response.message.parts
    assert isinstance(signature, ReasoningPart) and isinstance(call, ToolCall)
    assert signature.signature is not None and f'"{signature.signature}"' in raw
    assert "+" in signature.signature and "/" in signature.signature  # standard base64, as sent
    assert (call.name, response.finish_reason) == ("get_country", FinishReason.TOOL_CALLS)


async def test_the_streamed_text_after_the_tool_joins_its_pieces(
    server: WireServer, model: GeminiModel
) -> None:
    recorded = gemini_answers(STREAMED)[1]
    pieces = [
        part["text"]
        for chunk in recorded_chunks(recorded["response"])
        for part in chunk["candidates"][0]["content"]["parts"]
    ]
    response = await decoded(server, model, recorded)
    assert len([piece for piece in pieces if piece]) == 2
    assert response.message.parts == (TextPart("".join(pieces)),)
    assert response.finish_reason is FinishReason.STOP


async def test_a_call_gemini_sent_without_an_id_gets_one_of_its_own(
    server: WireServer, model: GeminiModel
) -> None:
    recorded = gemini_answers(FROM_ANOTHER_MODEL)[0]
    function = recorded["response"]["parsed_body"]["candidates"][0]["content"]["parts"][0]
    assert "id" not in function["functionCall"]
    response = await decoded(server, model, recorded)
    (call,) = response.message.tool_calls
    assert call.name == "final_result" and call.id.startswith("call_")
    assert call.provider_id is None  # its id is reactloop's: the wire id is the same

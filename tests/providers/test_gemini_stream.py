"""Gemini's `streamGenerateContent?alt=sse` over a loopback socket: deltas as they come, pieces
joined, signatures kept where they belong, the last chunk's usage, a cut stream and errors."""

from __future__ import annotations

import pytest

from reactloop._core import (
    FinishReason,
    ModelRequest,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    Usage,
    UserMessage,
)
from reactloop._errors import (
    AuthenticationError,
    ContextTooLongError,
    ModelError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._providers import ContentFilteredError, GeminiModel
from reactloop._providers._gemini_stream import GeminiStream
from reactloop._providers._sse import SseEvent
from tests.providers.recorded import Deltas
from tests.providers.render import sse
from tests.providers.render_gemini import (
    answer_parts,
    call_part,
    chunk,
    gemini_error,
    gemini_stream,
    text_part,
    thought_part,
)
from tests.providers.wire_server import Ending, WireServer, sse_reply

pytestmark = pytest.mark.anyio

MODEL = "gemini-2.5-flash"
REQUEST = ModelRequest((UserMessage("hi"),))
SIGNATURE = "CiQBcsjafB+xw/1Ml0Q=="


def signed(signature: str) -> ReasoningPart:
    return ReasoningPart(signature=signature, provider="google", model=MODEL)


async def test_text_streams_as_text_deltas_and_joins_into_one_part(
    server: WireServer, gemini: GeminiModel
) -> None:
    server.reply_with(sse_reply(gemini_stream(answer_parts("Hello there, friend."))))
    deltas = Deltas()
    response = await gemini.stream(REQUEST, deltas)
    assert response.message.parts == (TextPart("Hello there, friend."),)
    assert (
        "".join(d.text for d in deltas.seen if isinstance(d, TextDelta)) == "Hello there, friend."
    )
    assert len(deltas.seen) == 4  # one per piece: "Hello", " ther", "e, fr", "iend."
    assert (response.finish_reason, response.model, response.id) == (
        FinishReason.STOP,
        "gemini-2.5-flash",
        "resp-gemini-1",
    )


async def test_thoughts_stream_as_reasoning_deltas_and_join_with_their_signature(
    server: WireServer, gemini: GeminiModel
) -> None:
    parts = [thought_part("Weighing the options.", SIGNATURE), text_part("Go left.")]
    server.reply_with(sse_reply(gemini_stream(parts)))
    deltas = Deltas()
    response = await gemini.stream(REQUEST, deltas)
    thought = ReasoningPart(
        "Weighing the options.", signature=SIGNATURE, provider="google", model=MODEL
    )
    assert response.message.parts == (thought, TextPart("Go left."))
    reasoning = [d.text for d in deltas.seen if isinstance(d, ReasoningDelta)]
    assert "".join(reasoning) == "Weighing the options."


async def test_a_thoughts_signature_on_its_last_piece_signs_the_whole_thought(
    server: WireServer, gemini: GeminiModel
) -> None:
    pieces = [thought_part("Weighing "), thought_part("the options.", SIGNATURE)]
    server.reply_with(sse_reply([chunk([piece]) for piece in pieces] + gemini_stream([])))
    response = await gemini.stream(REQUEST, Deltas())
    thought = ReasoningPart(
        "Weighing the options.", signature=SIGNATURE, provider="google", model=MODEL
    )
    assert response.message.parts == (thought,)


async def test_a_call_streams_whole_as_one_delta_after_its_signature(
    server: WireServer, gemini: GeminiModel
) -> None:
    call = ToolCall.of("get_weather", {"city": "Paris"})
    server.reply_with(sse_reply(gemini_stream([call_part(call, SIGNATURE)])))
    deltas = Deltas()
    response = await gemini.stream(REQUEST, deltas)
    signature, decoded = response.message.parts
    assert signature == signed(SIGNATURE)
    assert isinstance(decoded, ToolCall)
    assert deltas.seen == [ToolCallDelta(0, '{"city":"Paris"}', decoded.id, "get_weather")]
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_parallel_calls_stream_with_their_own_indexes(
    server: WireServer, gemini: GeminiModel
) -> None:
    calls = [ToolCall.of("a", {}), ToolCall.of("b", {"n": 2})]
    server.reply_with(
        sse_reply(gemini_stream([call_part(calls[0], SIGNATURE), call_part(calls[1])]))
    )
    deltas = Deltas()
    response = await gemini.stream(REQUEST, deltas)
    assert [d.index for d in deltas.seen if isinstance(d, ToolCallDelta)] == [0, 1]
    assert [c.name for c in response.message.tool_calls] == ["a", "b"]


async def test_a_signature_on_a_later_empty_text_part_goes_before_its_text(
    server: WireServer, gemini: GeminiModel
) -> None:
    """Google's thought-signatures guide: in a stream, the signature of a text answer may come
    in a final chunk with an empty text part; it stays with the text it belongs to."""
    chunks = gemini_stream([text_part("The answer is 42.", SIGNATURE)], late_signatures=True)
    server.reply_with(sse_reply(chunks))
    response = await gemini.stream(REQUEST, Deltas())
    assert response.message.parts == (signed(SIGNATURE), TextPart("The answer is 42."))


async def test_the_last_chunks_usage_is_the_answers(
    server: WireServer, gemini: GeminiModel
) -> None:
    early = {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11}
    final = {"promptTokenCount": 10, "candidatesTokenCount": 7, "thoughtsTokenCount": 3}
    chunks = [chunk([text_part("Hi")], usageMetadata=early), *gemini_stream([], usage=final)]
    server.reply_with(sse_reply(chunks))
    response = await gemini.stream(REQUEST, Deltas())
    assert response.usage == Usage(input_tokens=10, output_tokens=10, reasoning_tokens=3)


async def test_a_stream_cut_before_its_finish_reason_is_unavailable(
    server: WireServer, gemini: GeminiModel
) -> None:
    chunks = gemini_stream(answer_parts("Hello there, friend."))[:-1]
    server.reply_with(sse_reply(chunks))
    with pytest.raises(ProviderUnavailableError, match="no chunk carried a finishReason"):
        await gemini.stream(REQUEST, Deltas())


async def test_a_stream_cut_mid_body_is_unavailable(
    server: WireServer, gemini: GeminiModel
) -> None:
    chunks = gemini_stream(answer_parts("Hello there, friend."))[:2]
    server.reply_with(sse_reply(chunks, Ending.CUT))
    with pytest.raises(ProviderUnavailableError):
        await gemini.stream(REQUEST, Deltas())


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            gemini_error(400, "INVALID_ARGUMENT", "bad key", reason="API_KEY_INVALID"),
            AuthenticationError,
        ),
        (
            gemini_error(400, "INVALID_ARGUMENT", "The input token count (9) exceeds the maximum"),
            ContextTooLongError,
        ),
        (gemini_error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted"), RateLimitedError),
        (gemini_error(500, "INTERNAL", "An internal error has occurred"), ProviderUnavailableError),
    ],
)
async def test_an_error_event_mid_stream_is_typed(
    server: WireServer, gemini: GeminiModel, error: dict[str, object], expected: type[ModelError]
) -> None:
    chunks = [*gemini_stream(answer_parts("Hello"))[:1], sse(error)]
    server.reply_with(sse_reply(chunks))
    with pytest.raises(expected) as caught:
        await gemini.stream(REQUEST, Deltas())
    assert type(caught.value) is expected
    assert caught.value.provider == "google"


async def test_a_prompt_blocked_in_a_stream_is_content_filtered(
    server: WireServer, gemini: GeminiModel
) -> None:
    feedback = {"blockReason": "PROHIBITED_CONTENT"}
    server.reply_with(sse_reply([sse({"promptFeedback": feedback, "modelVersion": MODEL})]))
    with pytest.raises(ContentFilteredError) as caught:
        await gemini.stream(REQUEST, Deltas())
    assert (caught.value.where, caught.value.reason) == ("prompt", "PROHIBITED_CONTENT")


async def test_an_answer_blocked_in_a_stream_before_any_text_is_content_filtered(
    server: WireServer, gemini: GeminiModel
) -> None:
    server.reply_with(sse_reply(gemini_stream([], "SAFETY")))
    with pytest.raises(ContentFilteredError) as caught:
        await gemini.stream(REQUEST, Deltas())
    assert (caught.value.where, caught.value.reason) == ("answer", "SAFETY")


async def test_the_chunk_with_the_finish_reason_completes_the_stream() -> None:
    stream = GeminiStream("google", Deltas(), MODEL)
    first, last = gemini_stream(answer_parts("Hi"))
    assert not await stream.handle(SseEvent("message", first.decode()[6:].strip()))
    assert await stream.handle(SseEvent("message", last.decode()[6:].strip()))

"""A whole Gemini `GenerateContentResponse` read back: parts in order with each thought signature
before the part that carried it, calls, usage, finish reasons, blocks and errors."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop._core import FinishReason, ReasoningPart, TextPart, ToolCall, Usage
from reactloop._errors import (
    AuthenticationError,
    ContextTooLongError,
    InvalidRequestError,
    InvalidResponseError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._providers import ContentFilteredError, FilterVerdict
from reactloop._providers._gemini_decode import decode_response
from tests.providers.render_gemini import (
    answer_parts,
    call_part,
    gemini_error,
    gemini_json,
    text_part,
    thought_part,
)

MODEL = "gemini-2.5-flash"
SIGNATURE = "EpwICpkIAXLI2nx+lU6g/sWZaZHRYk=="  # standard base64: '+' and '/' must survive


def decode(body: Any) -> Any:
    return decode_response("google", body, MODEL)


def signed(signature: str) -> ReasoningPart:
    return ReasoningPart(signature=signature, provider="google", model=MODEL)


def test_a_text_answer_is_a_text_part_with_its_model_and_id() -> None:
    response = decode(gemini_json(answer_parts("Paris.")))
    assert response.message.parts == (TextPart("Paris."),)
    assert (response.finish_reason, response.model, response.id) == (
        FinishReason.STOP,
        "gemini-2.5-flash",
        "resp-gemini-1",
    )


def test_a_call_without_an_id_gets_a_fresh_one_and_finishes_as_tool_calls() -> None:
    call = ToolCall.of("get_weather", {"city": "Paris"})
    response = decode(gemini_json([call_part(call)]))
    (decoded,) = response.message.tool_calls
    assert (decoded.name, decoded.arguments) == ("get_weather", '{"city":"Paris"}')
    assert decoded.id.startswith("call_") and decoded.id != call.id
    assert response.finish_reason is FinishReason.TOOL_CALLS


def test_a_call_with_an_id_keeps_it_as_its_wire_id() -> None:
    call = ToolCall.of("get_weather", {}, id="fc-7")
    (decoded,) = decode(gemini_json([call_part(call, with_id=True)])).message.tool_calls
    assert (decoded.id, decoded.wire_id) == ("fc-7", "fc-7")


def test_a_calls_signature_goes_right_before_it_byte_for_byte() -> None:
    call = ToolCall.of("get_country", {})
    parts = decode(gemini_json([call_part(call, SIGNATURE)])).message.parts
    assert parts[0] == signed(SIGNATURE)
    assert isinstance(parts[1], ToolCall) and parts[1].name == "get_country"


def test_parallel_calls_keep_the_signature_on_the_first_only() -> None:
    first, second = ToolCall.of("a", {}), ToolCall.of("b", {"x": 1})
    body = gemini_json([call_part(first, SIGNATURE), call_part(second)])
    parts = decode(body).message.parts
    assert [type(part).__name__ for part in parts] == ["ReasoningPart", "ToolCall", "ToolCall"]
    assert [call.name for call in decode(body).message.tool_calls] == ["a", "b"]


def test_a_texts_signature_goes_right_before_the_text() -> None:
    parts = decode(gemini_json([text_part("Hello", SIGNATURE)])).message.parts
    assert parts == (signed(SIGNATURE), TextPart("Hello"))


def test_a_thought_is_reasoning_with_its_own_signature() -> None:
    body = gemini_json([thought_part("Let me think.", SIGNATURE), text_part("42")])
    parts = decode(body).message.parts
    expected = ReasoningPart("Let me think.", signature=SIGNATURE, provider="google", model=MODEL)
    assert parts == (expected, TextPart("42"))


def test_a_thought_without_a_signature_is_readable_reasoning() -> None:
    (part, _) = decode(gemini_json([thought_part("Hmm."), text_part("Yes")])).message.parts
    assert part == ReasoningPart("Hmm.", provider="google", model=MODEL)


def test_two_thoughts_each_signed_stay_two_parts() -> None:
    body = gemini_json([thought_part("First.", "c2lnMQ=="), thought_part("Second.", "c2lnMg==")])
    thoughts = decode(body).message.reasoning
    assert [(t.text, t.signature) for t in thoughts] == [
        ("First.", "c2lnMQ=="),
        ("Second.", "c2lnMg=="),
    ]


def test_an_empty_text_part_carrying_a_signature_goes_before_the_text_it_follows() -> None:
    body = gemini_json([text_part("Hello"), text_part("", SIGNATURE)])
    assert decode(body).message.parts == (signed(SIGNATURE), TextPart("Hello"))


def test_parts_of_other_kinds_are_skipped() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    assert decode(gemini_json([image, text_part("Done")])).message.parts == (TextPart("Done"),)


def test_usage_counts_thoughts_as_output_and_cached_content_as_cache_reads() -> None:
    usage = {
        "promptTokenCount": 100,
        "candidatesTokenCount": 20,
        "thoughtsTokenCount": 30,
        "cachedContentTokenCount": 40,
        "toolUsePromptTokenCount": 5,
        "totalTokenCount": 155,
    }
    decoded = decode(gemini_json(answer_parts("ok"), usage=usage)).usage
    assert decoded == Usage(
        input_tokens=105, output_tokens=50, cache_read_tokens=40, reasoning_tokens=30
    )
    assert decoded.total_tokens == usage["totalTokenCount"]


@pytest.mark.parametrize(
    ("reason", "finish"),
    [("MAX_TOKENS", FinishReason.LENGTH), ("LANGUAGE", FinishReason.OTHER)],
)
def test_other_finish_reasons(reason: str, finish: FinishReason) -> None:
    assert decode(gemini_json(answer_parts("Par"), reason)).finish_reason is finish


BLOCKS = ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"]
RATINGS = [
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
]


@pytest.mark.parametrize("reason", BLOCKS)
def test_an_answer_blocked_before_saying_anything_is_content_filtered(reason: str) -> None:
    body = gemini_json([], reason, safetyRatings=RATINGS)
    with pytest.raises(ContentFilteredError, match=reason) as caught:
        decode(body)
    error = caught.value
    assert (error.where, error.reason, error.provider) == ("answer", reason, "google")
    assert error.verdicts[0] == FilterVerdict("HARM_CATEGORY_DANGEROUS_CONTENT", True, "HIGH")
    assert error.blocked == ("HARM_CATEGORY_DANGEROUS_CONTENT",)


@pytest.mark.parametrize("reason", BLOCKS)
def test_an_answer_blocked_midway_keeps_what_it_said(reason: str) -> None:
    response = decode(gemini_json(answer_parts("The first half"), reason))
    assert response.finish_reason is FinishReason.CONTENT_FILTER
    assert response.message.text == "The first half"


@pytest.mark.parametrize("reason", ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"])
def test_a_call_the_model_could_not_form_is_an_invalid_response_naming_it(reason: str) -> None:
    body = gemini_json([], reason, finishMessage="Malformed function call: print(x")
    with pytest.raises(InvalidResponseError, match=f"{reason}: Malformed function call"):
        decode(body)


def test_a_blocked_prompt_is_content_filtered_at_the_prompt() -> None:
    feedback = {"blockReason": "SAFETY", "safetyRatings": RATINGS}
    body = {"promptFeedback": feedback, "usageMetadata": {"promptTokenCount": 8}}
    with pytest.raises(ContentFilteredError, match=r"blocked the prompt \(SAFETY\)") as caught:
        decode(body)
    assert (caught.value.where, caught.value.reason) == ("prompt", "SAFETY")
    assert caught.value.blocked == ("HARM_CATEGORY_DANGEROUS_CONTENT",)


def test_an_answer_without_candidates_is_invalid() -> None:
    with pytest.raises(InvalidResponseError, match="no candidates"):
        decode({"usageMetadata": {"promptTokenCount": 8}})


def test_a_call_without_a_name_is_invalid() -> None:
    with pytest.raises(InvalidResponseError, match="functionCall part without a name"):
        decode(gemini_json([{"functionCall": {"args": {}}}]))


def test_a_body_that_is_not_an_object_is_invalid() -> None:
    with pytest.raises(InvalidResponseError, match="expected a GenerateContentResponse"):
        decode([gemini_json(answer_parts("hi"))])


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            gemini_error(400, "INVALID_ARGUMENT", "bad", reason="API_KEY_INVALID"),
            AuthenticationError,
        ),
        (gemini_error(400, "INVALID_ARGUMENT", "Invalid JSON payload"), InvalidRequestError),
        (
            gemini_error(400, "INVALID_ARGUMENT", "The input token count (9) exceeds the maximum"),
            ContextTooLongError,
        ),
        (gemini_error(429, "RESOURCE_EXHAUSTED", "Resource exhausted"), RateLimitedError),
        (gemini_error(503, "UNAVAILABLE", "The model is overloaded"), ProviderUnavailableError),
    ],
)
def test_an_error_inside_a_200_answer_is_typed(body: Any, expected: type[Exception]) -> None:
    with pytest.raises(expected) as caught:
        decode(body)
    assert type(caught.value) is expected

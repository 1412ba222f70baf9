"""The bytes a workflow and its activities exchange read back as exactly what was written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop._core import Decision, Message, ModelDelta, ModelRequest, ModelResponse
from reactloop._core._parts import ContentPart
from reactloop._errors import (
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    ModelError,
    ProviderConfigurationError,
    RateLimitedError,
    ScriptExhaustedError,
)
from reactloop._stored_errors import UnreadableRunError
from reactloop._temporal._contracts import ModelCall, ToolInput, ToolOutcome
from reactloop._temporal._payloads import (
    decode,
    decode_decisions,
    decode_deltas,
    decode_error,
    decode_messages,
    decode_parts,
    decode_request,
    decode_response,
    encode,
    encode_decisions,
    encode_deltas,
    encode_error,
    encode_messages,
    encode_parts,
    encode_request,
    encode_response,
)
from tests.helpers.strategies import (
    call_ids,
    decisions,
    json_values,
    message_lists,
    messages_with_parts,
    model_deltas,
    model_requests,
    model_responses,
    part_lists,
    short_texts,
)


@given(model_requests)
def test_a_model_request_reads_back_equal(request: ModelRequest) -> None:
    assert decode_request(encode_request(request)) == request


@given(model_responses)
def test_a_model_response_reads_back_equal_with_its_call_ids(response: ModelResponse) -> None:
    back = decode_response(encode_response(response))
    assert back == response
    assert [c.id for c in back.message.tool_calls] == [c.id for c in response.message.tool_calls]


@given(st.lists(model_deltas, max_size=8))
def test_deltas_read_back_equal_in_order(deltas: list[ModelDelta]) -> None:
    assert decode_deltas(encode_deltas(deltas)) == deltas


@given(st.lists(st.one_of(message_lists(6).map(tuple), st.tuples(messages_with_parts))))
def test_a_transcript_reads_back_equal(transcripts: list[tuple[Message, ...]]) -> None:
    for messages in transcripts:
        assert decode_messages(encode_messages(messages)) == messages


@given(st.dictionaries(call_ids, decisions, max_size=4))
def test_decisions_read_back_equal_by_call_id(given_decisions: dict[str, Decision]) -> None:
    assert decode_decisions(encode_decisions(given_decisions)) == given_decisions


@given(part_lists)
def test_content_parts_read_back_equal(parts: tuple[ContentPart, ...]) -> None:
    assert decode_parts(encode_parts(parts)) == parts


@given(
    st.builds(
        ToolOutcome,
        st.one_of(st.none(), json_values),
        st.one_of(st.none(), st.binary(max_size=40)),
        st.one_of(st.none(), short_texts),
        st.one_of(st.none(), short_texts),
    )
)
def test_a_tool_outcome_reads_back_equal(outcome: ToolOutcome) -> None:
    assert decode(encode(outcome), ToolOutcome) == outcome


@given(model_requests, st.booleans())
def test_a_model_call_carries_its_request(request: ModelRequest, stream: bool) -> None:
    call = decode(encode(ModelCall("support", "r-1", encode_request(request), stream)), ModelCall)
    assert (call.stream, decode_request(call.request)) == (stream, request)


def _fields(error: ModelError) -> dict[str, object]:
    return {key: value for key, value in vars(error).items() if key != "value"}


@pytest.mark.parametrize(
    "error",
    [
        RateLimitedError("slow down", retry_after=2.5, provider="openai"),
        RateLimitedError("no credit", quota_exhausted=True),
        ContextTooLongError("too long", status=400, budget=100, needed=120),
        InvalidRequestError("bad", status=422, should_retry=False),
        ProviderConfigurationError("no such model", status=404, url="http://x/v1"),
        ScriptExhaustedError(2),
    ],
)
def test_a_model_error_reads_back_as_its_class_with_its_fields(error: ModelError) -> None:
    error.add_note("attempt 1 of 3")
    back = decode_error(encode_error(error))
    assert type(back) is type(error)
    assert (str(back), back.message, back.code) == (str(error), error.message, error.code)
    assert back.retryable == error.retryable
    assert _fields(back) == _fields(error)


def test_a_model_error_of_a_class_this_process_lacks_reads_back_as_a_model_error() -> None:
    class Refused(ModelError):
        code = ErrorCode.AUTHENTICATION

    data = encode_error(Refused("no key", status=401)).replace(b"Refused", b"Gone")
    back = decode_error(data)
    assert (type(back), back.message, back.status) == (ModelError, "no key", 401)


def test_bytes_that_are_no_payload_are_an_unreadable_run_error_naming_what_was_expected() -> None:
    with pytest.raises(UnreadableRunError, match="a model request"):
        decode_request(b'{"messages": 3}')
    with pytest.raises(UnreadableRunError, match="ToolInput"):
        decode(b"[", ToolInput)
    with pytest.raises(UnreadableRunError, match="a model error"):
        decode_error(b"{}")

"""Records encode to JSON bytes and read back as exactly the same record."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from reactloop._core._messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    new_call_id,
)
from reactloop._core._parts import ReasoningPart, TextPart
from reactloop._core._records import PhaseDataSaved, Record, ResponseSaved
from reactloop._durable._codec import _converter, decode, encode
from reactloop._errors import ContractError
from reactloop._stored_errors import StoreError
from tests.helpers.strategies import journals


@settings(max_examples=150, deadline=None)
@given(journal=journals())
def test_every_record_reads_back_equal_and_of_its_own_class(journal: list[Record]) -> None:
    for record in journal:
        again = decode(encode(record))
        assert type(again) is type(record)
        assert again == record


def test_bytes_that_are_no_record_are_a_store_error() -> None:
    with pytest.raises(StoreError, match="cannot be read"):
        decode(b'{"type": "NoSuchRecord"}')


def test_phase_data_that_is_not_json_is_a_contract_error() -> None:
    with pytest.raises(ContractError, match="phase data"):
        encode(PhaseDataSaved({"when": object()}))


def test_a_call_id_equal_to_the_next_default_id_is_kept() -> None:
    upcoming = new_call_id()  # the factory's value now; the next is one more
    number = int(upcoming.removeprefix("call_")) + 1
    call = ToolCall("pay", "{}", f"call_{number}")  # a provider's id equal to the next default
    response = ModelResponse(AssistantMessage("", (call,)))
    decoded = decode(encode(ResponseSaved(1, response, Usage())))
    assert isinstance(decoded, ResponseSaved)
    assert decoded.response.message.tool_calls[0].id == f"call_{number}"


def test_usage_fields_added_after_0_1_are_left_out_at_zero_and_read_back() -> None:
    """A 0.1 record (four usage fields) still reads; the fields added since are written only
    when they count something, so a record without them is the same bytes as before."""
    old = ResponseSaved(1, ModelResponse(AssistantMessage("hi")), Usage(5, 2, 1, 0))
    assert b"reasoning_tokens" not in encode(old)
    assert b"cache_write_1h_tokens" not in encode(old)
    assert decode(encode(old)) == old
    new = ResponseSaved(1, ModelResponse(AssistantMessage("hi"), Usage(9, 4, 1, 3, 2, 3)), Usage())
    assert decode(encode(new)) == new


_PLAIN_0_1 = (  # what 0.1 (43b96f5) wrote for this record
    b'{"step":1,"response":{"message":{"text":"checking","tool_calls":[{"name":"search",'
    b'"id":"c1"}]}},"usage":{},"type":"ResponseSaved"}'
)


def test_a_plain_assistant_message_is_written_as_0_1_wrote_it() -> None:
    response = ModelResponse(AssistantMessage("checking", (ToolCall("search", "{}", "c1"),)))
    record = ResponseSaved(1, response, Usage())
    assert encode(record) == _PLAIN_0_1
    assert decode(_PLAIN_0_1) == record


def test_an_assistant_message_with_reasoning_keeps_its_parts_order_and_opaque_values() -> None:
    parts: list[AssistantPart] = [
        ReasoningPart("why", signature="EqQBCkYIBxgCKkB+/=="),
        ToolCall("search", "{}", "c1"),
        ReasoningPart(redacted="ErUB\u2028opaque", provider="anthropic", model="claude-opus-5"),
        TextPart("done"),
    ]
    record = ResponseSaved(1, ModelResponse(AssistantMessage(parts=parts)), Usage())
    data = encode(record)
    assert b'"parts":[{"type":"reasoning"' in data
    again = decode(data)
    assert isinstance(again, ResponseSaved) and again == record
    assert again.response.message.parts == tuple(parts)


def test_messages_stored_with_their_text_under_content_read_back_and_are_written_so() -> None:
    history = (SystemMessage("rules"), UserMessage("hi"), ToolMessage("c1", "search", "found"))
    record = ResponseSaved(1, ModelResponse(AssistantMessage("ok")), Usage())
    for message in history:
        stored = _converter().unstructure(message, Message)
        assert stored["content"] == message.text and "text" not in stored
        assert _converter().structure(stored, Message) == message  # type: ignore[arg-type]
    assert decode(encode(record)) == record

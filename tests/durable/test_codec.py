"""Records encode to JSON bytes and read back as exactly the same record."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from reactloop._core._messages import AssistantMessage, ModelResponse, ToolCall, Usage, new_call_id
from reactloop._core._records import PhaseDataSaved, Record, ResponseSaved
from reactloop._durable._codec import decode, encode
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

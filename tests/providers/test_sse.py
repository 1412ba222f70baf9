"""The incremental SSE decoder: line endings, splits anywhere, and the end-of-stream rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop._providers._sse import SseDecoder, SseEvent
from tests.helpers.strategies import examples, split_points
from tests.providers.conftest import WIRE
from tests.providers.wire_server import split_at

STREAMS = sorted(WIRE.glob("*/*.sse"))


def decode(*chunks: bytes) -> list[SseEvent]:
    decoder = SseDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return events + decoder.close()


def test_blank_line_dispatches_an_event() -> None:
    assert decode(b"event: ping\ndata: {}\n\n") == [SseEvent("ping", "{}")]


def test_event_type_defaults_to_message() -> None:
    assert decode(b"data: x\n\n") == [SseEvent("message", "x")]


@pytest.mark.parametrize("ending", [b"\r\n", b"\r", b"\n"])
def test_every_line_ending_is_understood(ending: bytes) -> None:
    stream = b"data: a" + ending + b"data: b" + ending + ending
    assert decode(stream) == [SseEvent("message", "a\nb")]


def test_crlf_split_between_cr_and_lf_is_one_line_end() -> None:
    assert decode(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n") == [
        SseEvent("message", "a"),
        SseEvent("message", "b"),
    ]


def test_utf8_split_inside_a_character_is_joined() -> None:
    encoded = "data: 18°C\n\n".encode()
    cut = encoded.index(b"\xb0")
    assert decode(encoded[:cut], encoded[cut:]) == [SseEvent("message", "18°C")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    assert decode(b": keep-alive\nretry: 10\nfoo: bar\ndata: x\n\n") == [SseEvent("message", "x")]


def test_only_one_space_after_the_colon_is_removed() -> None:
    assert decode(b"data:  two\ndata:none\n\n") == [SseEvent("message", " two\nnone")]


def test_last_event_id_is_kept() -> None:
    assert decode(b"id: 7\ndata: x\n\ndata: y\n\n") == [
        SseEvent("message", "x", "7"),
        SseEvent("message", "y", "7"),
    ]


def test_an_event_without_data_is_not_dispatched() -> None:
    assert decode(b"event: nothing\n\ndata: x\n\n") == [SseEvent("message", "x")]


def test_an_unterminated_last_event_is_dropped() -> None:
    assert decode(b"data: a\n\ndata: b") == [SseEvent("message", "a")]


def test_a_final_cr_still_ends_the_event_at_close() -> None:
    assert decode(b"data: a\r\r") == [SseEvent("message", "a")]


def test_a_leading_bom_is_skipped() -> None:
    assert decode(b"\xef\xbb", b"\xbfdata: x\n\n") == [SseEvent("message", "x")]


@pytest.mark.parametrize("path", STREAMS, ids=lambda path: f"{path.parent.name}/{path.name}")
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data())
def test_any_split_of_a_recorded_stream_gives_the_same_events(
    path: Path, data: st.DataObject
) -> None:
    raw = path.read_bytes()
    points = data.draw(split_points(len(raw)))
    assert decode(*split_at(raw, points)) == decode(raw)


def test_a_crlf_split_across_chunks_does_not_end_the_event() -> None:
    assert decode(b"data: a\r", b"\ndata: b\r\n\r\n") == [SseEvent("message", "a\nb")]


def test_a_bom_after_the_first_chunk_is_data() -> None:
    assert decode(b"data: a", "\ufeffb\n\n".encode()) == [SseEvent("message", "a\ufeffb")]


def test_invalid_utf8_becomes_the_replacement_character() -> None:
    assert decode(b"data: \xff!\n\n") == [SseEvent("message", "\ufffd!")]


def test_an_id_holding_nul_is_ignored() -> None:
    assert decode(b"id: 1\ndata: x\n\nid: 2\x003\ndata: y\n\n") == [
        SseEvent("message", "x", "1"),
        SseEvent("message", "y", "1"),
    ]


def test_a_complete_last_line_without_its_blank_line_is_dropped_at_close() -> None:
    assert decode(b"data: a\n") == []


@pytest.mark.parametrize(
    "tail", [b"data: a", b"event: odd\ndata: a\n", b"data: \xe2\x82", b"data: a\r"]
)
def test_a_decoder_starts_afresh_after_close(tail: bytes) -> None:
    decoder = SseDecoder()
    decoder.feed(tail)
    decoder.close()
    assert decoder.feed(b"data: b\n\n") == [SseEvent("message", "b")]


def test_an_id_on_the_unterminated_last_line_is_kept_for_later_events() -> None:
    decoder = SseDecoder()
    decoder.feed(b"id: 5")
    decoder.close()
    assert decoder.feed(b"data: b\n\n") == [SseEvent("message", "b", "5")]

"""`CachePoint`: a content part that carries no content, so text, blankness, descriptions,
token counts and the stored form all pass over it."""

from __future__ import annotations

from reactloop._core import CachePoint, RunCreated, UserMessage, blank_reason, describe
from reactloop._durable._codec import decode, encode
from reactloop._policies._tokens import MessageTokenEstimator


def test_a_cache_point_adds_no_text_and_no_tokens() -> None:
    marked = UserMessage(parts=["a long manual", CachePoint(), "the question"])
    plain = UserMessage(parts=["a long manual", "the question"])
    assert marked.text == plain.text
    estimator = MessageTokenEstimator()
    assert estimator.count_parts(marked.parts) == estimator.count_parts(plain.parts) > 0
    assert describe(CachePoint()) == "cache point"


def test_a_message_of_a_cache_point_alone_is_blank() -> None:
    assert blank_reason(UserMessage(parts=[CachePoint()])) == "its text is blank"


def test_a_stored_cache_point_reads_back_in_its_place() -> None:
    """A run's input holding a cache point is stored tagged `cache_point` and read back equal."""
    parts = UserMessage(parts=["manual", CachePoint(), "question"]).parts
    record = RunCreated("r", "manualquestion", None, (), 0.0, input_parts=parts)
    data = encode(record)
    assert b'{"type":"cache_point"}' in data
    assert decode(data) == record

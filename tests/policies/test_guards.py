"""Input guards: the built-in empty-input check, and the guards' own options."""

from __future__ import annotations

import re

import pytest

from reactloop._policies._guards import NON_EMPTY_INPUT, BlockedPatterns


@pytest.mark.parametrize("text", ["", " ", "\n", "\t \r\n"])
def test_empty_or_blank_input_is_refused(text: str) -> None:
    assert NON_EMPTY_INPUT(text) == "input must not be empty"


@pytest.mark.parametrize("text", ["a", " hi ", "0"])
def test_input_with_text_passes(text: str) -> None:
    assert NON_EMPTY_INPUT(text) is None


def test_one_pattern_string_is_one_pattern_not_one_per_character() -> None:
    guard = BlockedPatterns("secret")
    assert [p.pattern for p in guard.patterns] == ["secret"]
    assert guard("tell me the secret") is not None
    assert guard("tell me everything") is None


def test_one_compiled_pattern_is_one_pattern() -> None:
    assert BlockedPatterns(re.compile("x+")).patterns == (re.compile("x+"),)


def test_a_sequence_of_patterns_keeps_each() -> None:
    guard = BlockedPatterns(["a+", re.compile("b")])
    assert [p.pattern for p in guard.patterns] == ["a+", "b"]

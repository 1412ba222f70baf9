"""Token estimation: the script-aware heuristic, message costs, and the per-run ledger."""

from __future__ import annotations

from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop._core._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._errors import ConfigurationError
from reactloop._policies._tokens import (
    DEFAULT_ESTIMATOR,
    MessageTokenEstimator,
    TokenEstimator,
    TokenLedger,
    estimate_text_tokens,
    tool_spec_tokens,
)
from tests.helpers.strategies import (
    cjk_texts,
    emoji_texts,
    examples,
    message_lists,
    messages,
    texts,
)

OVERHEAD = DEFAULT_ESTIMATOR.message_overhead


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("abcd" * 5, 5),
        ("abcde", 2),
        ("éàüß", 1),
        ("東京都", 2),
        ("안녕하", 2),
        ("ひらが", 2),
        ("😀🎉🚀", 3),
        ("👨\u200d👩\u200d👧", 3),
        ("❤\ufe0f", 1),
        ("Привет", 2),
        ("ab東京😀", 3),
    ],
)
def test_the_default_estimate_follows_each_script_rate(text: str, tokens: int) -> None:
    assert estimate_text_tokens(text) == tokens


@given(st.text(alphabet=st.characters(codec="ascii")))
def test_ascii_text_is_four_characters_a_token(text: str) -> None:
    assert estimate_text_tokens(text) == -(-len(text) // 4)


@given(st.one_of(texts(), cjk_texts, emoji_texts))
def test_no_character_counts_more_than_one_token(text: str) -> None:
    assert 0 <= estimate_text_tokens(text) <= len(text)


@given(texts(), texts())
def test_joined_texts_cost_their_sum_give_or_take_rounding(first: str, second: str) -> None:
    apart = estimate_text_tokens(first) + estimate_text_tokens(second)
    assert apart - 1 <= estimate_text_tokens(first + second) <= apart


def test_an_empty_message_costs_its_overhead() -> None:
    assert DEFAULT_ESTIMATOR.count_message(UserMessage("")) == OVERHEAD


def test_tool_calls_count_name_arguments_id_and_overhead() -> None:
    call = ToolCall("search", '{"q": "Paris"}', "call_1")
    message = AssistantMessage("", (call,))
    expected = OVERHEAD + DEFAULT_ESTIMATOR.tool_call_overhead + 2 + 4 + 2
    assert DEFAULT_ESTIMATOR.count_message(message) == expected


def test_a_tool_result_counts_content_name_and_call_id() -> None:
    message = ToolMessage("call_1", "search", "x" * 40)
    assert DEFAULT_ESTIMATOR.count_message(message) == OVERHEAD + 10 + 2 + 2


def test_a_refusal_is_counted() -> None:
    refused = AssistantMessage("", (), "x" * 40)
    assert DEFAULT_ESTIMATOR.count_message(refused) == OVERHEAD + 10


def test_an_exact_tokenizer_plugs_in_as_the_text_counter() -> None:
    estimator = MessageTokenEstimator(len, message_overhead=1)
    assert estimator.count_message(SystemMessage("hello")) == 6


def test_the_default_estimator_implements_the_protocol() -> None:
    assert isinstance(DEFAULT_ESTIMATOR, TokenEstimator)


def test_a_negative_overhead_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="message_overhead must be an int >= 0"):
        MessageTokenEstimator(message_overhead=-1)


def test_tool_specs_count_name_description_and_schema() -> None:
    spec = ToolSpec("search", "Search the web", {"type": "object"})
    assert tool_spec_tokens(DEFAULT_ESTIMATOR, [spec, spec]) == 2 * (2 + 4 + 5)


class CountingEstimator(MessageTokenEstimator):
    """The default estimator, recording each message it estimated."""

    seen: ClassVar[list[Message]] = []

    def count_message(self, message: Message) -> int:
        self.seen.append(message)
        return super().count_message(message)


def fresh_counting_estimator() -> CountingEstimator:
    CountingEstimator.seen = []
    return CountingEstimator()


def test_the_ledger_estimates_appended_messages_only() -> None:
    estimator = fresh_counting_estimator()
    ledger = TokenLedger(estimator)
    first, second = UserMessage("hi"), AssistantMessage("hello")
    ledger.sync([first])
    assert ledger.sync([first, second]) == 2 * OVERHEAD + 1 + 2
    assert estimator.seen == [first, second]


def test_the_ledger_estimates_only_a_replaced_message() -> None:
    estimator = fresh_counting_estimator()
    ledger = TokenLedger(estimator)
    first, second, third = UserMessage("a"), UserMessage("b"), UserMessage("c")
    ledger.sync([first, second])
    ledger.sync([third, second])
    assert estimator.seen == [first, second, third]


Edit = tuple[str, int, Message]

edit_kinds = st.sampled_from(["append", "replace", "delete", "truncate"])
edits = st.tuples(edit_kinds, st.integers(0, 30), messages)


def apply(edit: Edit, current: list[Message]) -> None:
    kind, position, message = edit
    where = position % len(current) if current else 0
    if kind == "append" or not current:
        current.append(message)
    elif kind == "replace":
        current[where] = message
    elif kind == "delete":
        del current[where]
    else:
        del current[where:]


@settings(max_examples=examples(200), deadline=None)
@given(message_lists(), st.lists(edits, max_size=12))
def test_the_ledger_stays_aligned_through_any_edits(
    start: list[Message], steps: list[Edit]
) -> None:
    ledger = TokenLedger()
    current = list(start)
    ledger.sync(current)
    for edit in steps:
        apply(edit, current)
        total = ledger.sync(tuple(current))
        expected = [DEFAULT_ESTIMATOR.count_message(message) for message in current]
        assert list(ledger.costs) == expected
        assert total == ledger.total == sum(expected)

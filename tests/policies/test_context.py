"""Trimming a conversation into the context budget: units, the trimming rules, the tracker."""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Any

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
from reactloop._core._parts import ReasoningPart, TextPart
from reactloop._core._repair import pair_calls
from reactloop._errors import ConfigurationError, ContextTooLongError
from reactloop._policies._context import ContextBudget, ContextWindow, message_units, trim
from reactloop._policies._tokens import DEFAULT_ESTIMATOR, MessageTokenEstimator
from tests.helpers.strategies import Conversation, conversations, examples, message_lists

MANY = settings(max_examples=examples(500), deadline=None)


cost = functools.cache(DEFAULT_ESTIMATOR.count_message)


def costs(messages: Sequence[Message]) -> list[int]:
    return [cost(message) for message in messages]


def tokens(messages: Sequence[Message]) -> int:
    return sum(costs(messages))


def reasons(step: Sequence[Message]) -> bool:
    """Whether the step's answer carries reasoning (the current turn keeps such steps)."""
    return any(isinstance(message, AssistantMessage) and message.reasoning for message in step)


def minimum(conversation: Conversation) -> int:
    """Tokens of what may never be dropped: system messages, current message, the current
    turn's steps that carry reasoning, newest step."""
    steps = conversation.steps
    kept = [m for index, step in enumerate(steps) if reasons(step) or index == len(steps) - 1
            for m in step]  # fmt: skip
    return tokens((*conversation.system, conversation.current, *kept))


def candidates(conversation: Conversation) -> list[tuple[Message, ...]]:
    """Every allowed result, from least to most dropped: old turns first, then old steps
    (the oldest first, never one that carries reasoning)."""
    system, history, steps = conversation.system, conversation.history, conversation.steps
    found = []
    for dropped in range(len(history) + 1):
        kept = itertools.chain.from_iterable(history[dropped:])
        found.append((*system, *kept, conversation.current, *itertools.chain(*steps)))
    droppable = [index for index, step in enumerate(steps[:-1]) if not reasons(step)]
    for count in range(1, len(droppable) + 1):
        gone = set(droppable[:count])
        kept_steps = (m for i, step in enumerate(steps) if i not in gone for m in step)
        found.append((*system, conversation.current, *kept_steps))
    return found


@st.composite
def trimmable(draw: st.DrawFn) -> tuple[Conversation, ContextBudget]:
    """A conversation and a budget from zero to a little over its size, often one that fits."""
    conversation = draw(conversations())
    total = tokens(conversation.messages)
    fitting = st.integers(min(minimum(conversation), total), total)
    return conversation, ContextBudget(draw(st.one_of(st.integers(0, total + 10), fitting)))


def trimmed(conversation: Conversation, budget: ContextBudget) -> tuple[Message, ...] | None:
    """The trim, or None when nothing fits."""
    messages = conversation.messages
    try:
        return trim(messages, costs(messages), budget)
    except ContextTooLongError:
        return None


def is_subsequence(part: Sequence[Message], whole: Sequence[Message]) -> bool:
    rest = iter(whole)
    return all(any(kept is original for original in rest) for kept in part)


@MANY
@given(trimmable())
def test_trimming_keeps_every_call_with_its_results(
    case: tuple[Conversation, ContextBudget],
) -> None:
    result = trimmed(*case)
    assert result is None or pair_calls(result).complete


@MANY
@given(trimmable())
def test_trimming_keeps_the_current_user_message(case: tuple[Conversation, ContextBudget]) -> None:
    conversation, _ = case
    result = trimmed(*case)
    assert result is None or any(message is conversation.current for message in result)


@MANY
@given(trimmable())
def test_trimming_only_drops_and_keeps_order(case: tuple[Conversation, ContextBudget]) -> None:
    result = trimmed(*case)
    assert result is None or is_subsequence(result, case[0].messages)


@MANY
@given(trimmable())
def test_trimming_fits_whenever_a_fitting_choice_exists(
    case: tuple[Conversation, ContextBudget],
) -> None:
    conversation, budget = case
    result = trimmed(*case)
    if minimum(conversation) <= budget.tokens:
        assert result is not None
        assert tokens(result) <= budget.tokens
    else:
        assert result is None


@MANY
@given(trimmable())
def test_trimming_drops_the_fewest_oldest_units(case: tuple[Conversation, ContextBudget]) -> None:
    conversation, budget = case
    result = trimmed(*case)
    fitting = [c for c in candidates(conversation) if tokens(c) <= budget.tokens]
    assert result == (fitting[0] if fitting else None)


@MANY
@given(conversations())
def test_a_conversation_that_fits_comes_back_unchanged(conversation: Conversation) -> None:
    messages = conversation.messages
    assert trim(messages, costs(messages), ContextBudget(tokens(messages))) is messages


@MANY
@given(trimmable())
def test_trimming_twice_equals_trimming_once(case: tuple[Conversation, ContextBudget]) -> None:
    _, budget = case
    once = trimmed(*case)
    if once is not None:
        assert trim(once, costs(once), budget) == once


@settings(max_examples=examples(300), deadline=None)
@given(message_lists(), st.integers(0, 400))
def test_trimming_never_breaks_a_pair(messages: list[Message], budget: int) -> None:
    try:
        result = trim(messages, costs(messages), ContextBudget(budget))
    except ContextTooLongError:
        return
    before, after = pair_calls(messages), pair_calls(result)
    orphans_before = {id(messages[index]) for index in before.orphans}
    open_before = {(id(messages[item.index]), item.call.id) for item in before.open}
    assert {id(result[index]) for index in after.orphans} <= orphans_before
    assert {(id(result[item.index]), item.call.id) for item in after.open} <= open_before


@settings(max_examples=examples(100), deadline=None)
@given(conversations(), st.data())
def test_a_tracker_over_a_growing_run_trims_like_a_fresh_trim(
    conversation: Conversation, data: st.DataObject
) -> None:
    """With `drop_to=1.0` every request is trimmed afresh (chunked drops: test_chunked_context)."""
    messages = conversation.messages
    window = ContextWindow(data.draw(st.integers(1, tokens(messages) + 10)) + 1, 1, drop_to=1.0)
    tracker = window.tracker()
    for end in range(1, len(messages) + 1):
        prefix = messages[:end]
        assert outcome(tracker.fit, prefix) == outcome(window.fit, prefix)


@settings(max_examples=examples(300), deadline=None)
@given(message_lists())
def test_units_cover_the_list_in_order(messages: list[Message]) -> None:
    bounds = [(unit.start, unit.stop) for unit in message_units(messages)]
    edges = [edge for bound in bounds for edge in bound]
    assert edges == sorted(edges)
    assert [start for start, _ in bounds[1:]] == [stop for _, stop in bounds[:-1]]
    assert (bounds[0][0], bounds[-1][1]) == (0, len(messages)) if messages else bounds == []


@settings(max_examples=examples(300), deadline=None)
@given(message_lists())
def test_a_call_and_its_results_share_a_unit(messages: list[Message]) -> None:
    units = message_units(messages)
    for call_index, result_index in pair_calls(messages).links:
        assert any(unit.start <= call_index < result_index < unit.stop for unit in units)


def outcome(
    fit: Callable[[Sequence[Message]], tuple[Message, ...]], messages: Sequence[Message]
) -> tuple[Message, ...] | str:
    """What `fit` returned, or the error it raised."""
    try:
        return fit(messages)
    except ContextTooLongError as error:
        return error.message


def call(call_id: str) -> ToolCall:
    return ToolCall("search", "{}", call_id)


def result(call_id: str, content: str = "ok") -> ToolMessage:
    return ToolMessage(call_id, "search", content)


def test_units_are_turns_before_the_current_message_and_steps_after_it() -> None:
    messages: list[Message] = [
        SystemMessage("be brief"),
        UserMessage("hi"),
        AssistantMessage("hello"),
        UserMessage("weather?"),
        AssistantMessage("", (call("1"),)),
        result("1"),
        AssistantMessage("", (call("2"),)),
        result("2"),
    ]
    spans = [(unit.start, unit.stop, unit.pinned) for unit in message_units(messages)]
    assert spans == [(0, 1, True), (1, 3, False), (3, 4, True), (4, 6, False), (6, 8, True)]


def test_a_result_after_a_later_user_message_merges_the_units_it_spans() -> None:
    messages: list[Message] = [
        UserMessage("one"),
        AssistantMessage("", (call("1"),)),
        UserMessage("two"),
        result("1"),
        UserMessage("now"),
    ]
    spans = [(unit.start, unit.stop) for unit in message_units(messages)]
    assert spans == [(0, 4), (4, 5)]


def test_the_error_names_the_budget_and_the_minimum() -> None:
    messages = [UserMessage("x" * 400)]
    with pytest.raises(ContextTooLongError) as caught:
        trim(messages, costs(messages), ContextBudget(120, 10, 5, 5))
    assert caught.value.budget == 100
    assert caught.value.needed == tokens(messages)
    assert "100 tokens (context window 120 - instructions 10 - tools 5" in caught.value.message
    assert f"need {tokens(messages)} tokens" in caught.value.message


def test_the_budget_subtracts_instructions_tools_and_reserved_output() -> None:
    tool = ToolSpec("search", "Search the web", {"type": "object"})
    budget = ContextWindow(1000, reserved_output=100).budget("x" * 40, [tool])
    assert budget.instructions == 10 + DEFAULT_ESTIMATOR.message_overhead
    assert budget.tools == 2 + 4 + 5
    assert budget.tokens == 1000 - budget.instructions - 11 - 100


def test_the_tracker_recomputes_the_budget_when_the_instructions_change() -> None:
    tracker = ContextWindow(1000, 0).tracker()
    assert tracker.budget("short", ()).tokens > tracker.budget("long " * 50, ()).tokens


@pytest.mark.parametrize(
    ("max_tokens", "reserved"), [(0, 0), (-5, 0), (100, 100), (100, -1), (100, 500)]
)
def test_an_impossible_window_is_a_configuration_error(max_tokens: int, reserved: int) -> None:
    with pytest.raises(ConfigurationError):
        ContextWindow(max_tokens, reserved)


def test_an_estimator_without_the_protocol_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="TokenEstimator"):
        ContextWindow(1000, estimator=object())  # type: ignore[arg-type]


class CountingEstimator(MessageTokenEstimator):
    """The default estimator, counting how many messages it estimated."""

    estimated = 0

    def count_message(self, message: Message) -> int:
        type(self).estimated += 1
        return super().count_message(message)


@pytest.mark.parametrize("size", [10, 1000])
def test_a_step_that_fits_estimates_only_the_new_messages(size: int) -> None:
    CountingEstimator.estimated = 0
    tracker = ContextWindow(10**9, estimator=CountingEstimator()).tracker()
    history: list[Message] = [UserMessage(f"message {n}") for n in range(size)]
    tracker.fit(tuple(history))
    history.append(AssistantMessage("answer"))
    messages = tuple(history)
    assert tracker.fit(messages) is messages
    assert CountingEstimator.estimated == size + 1


# --- exact edges, with costs given by hand ----------------------------------------------------

# Two old turns of 10 tokens each, then the current user message (5 tokens): 25 in all.
TURNS: tuple[Message, ...] = (
    UserMessage("one"),
    AssistantMessage("first"),
    UserMessage("two"),
    AssistantMessage("second"),
    UserMessage("now"),
)
TURN_COSTS = [4, 6, 4, 6, 5]


def test_a_trim_drops_units_until_the_excess_is_covered_to_the_token() -> None:
    # 25 tokens for 14: the excess of 11 needs both old turns, not just the first (10).
    assert trim(TURNS, TURN_COSTS, ContextBudget(14)) == (TURNS[4],)


def test_a_trim_that_frees_exactly_the_excess_drops_nothing_more() -> None:
    assert trim(TURNS, TURN_COSTS, ContextBudget(15)) == TURNS[2:]


def test_a_conversation_one_token_over_is_trimmed() -> None:
    assert trim(TURNS, TURN_COSTS, ContextBudget(24)) == TURNS[2:]


def test_pinned_messages_that_exactly_fill_the_budget_fit() -> None:
    assert trim(TURNS, TURN_COSTS, ContextBudget(5)) == (TURNS[4],)


def test_a_trim_comes_back_as_a_tuple_when_given_a_list() -> None:
    for budget, expected in [(25, TURNS), (15, TURNS[2:])]:
        kept = trim(list(TURNS), TURN_COSTS, ContextBudget(budget))
        assert type(kept) is tuple and kept == expected


def test_a_fitting_list_comes_back_from_the_tracker_as_a_tuple() -> None:
    kept = ContextWindow(10**6, 0).tracker().fit(list(TURNS))
    assert type(kept) is tuple and kept == TURNS


class History(tuple[Message, ...]):
    """A caller's own tuple type."""


def test_a_conversation_that_fits_is_the_very_object_given() -> None:
    history = History(TURNS)
    assert trim(history, TURN_COSTS, ContextBudget(25)) is history
    assert ContextWindow(10**6, 0).tracker().fit(history) is history


def test_a_trim_is_logged_with_how_many_messages_it_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="reactloop"):
        trim(TURNS, TURN_COSTS, ContextBudget(15))
    assert [r.getMessage() for r in caplog.records] == ["context trimmed: dropped 2 of 5 messages"]


def test_without_a_user_message_only_the_system_messages_and_newest_step_are_pinned() -> None:
    messages: list[Message] = [
        SystemMessage("be brief"),
        AssistantMessage("", (call("1"),)),
        result("1"),
        AssistantMessage("done"),
    ]
    spans = [(unit.start, unit.stop, unit.pinned) for unit in message_units(messages)]
    assert spans == [(0, 1, True), (1, 3, False), (3, 4, True)]


def test_a_system_message_right_after_the_current_one_is_a_unit_of_its_own() -> None:
    messages: list[Message] = [UserMessage("now"), SystemMessage("note"), AssistantMessage("a")]
    spans = [(unit.start, unit.stop, unit.pinned) for unit in message_units(messages)]
    assert spans == [(0, 1, True), (1, 2, False), (2, 3, True)]


def test_a_budget_without_instructions_spends_nothing_on_them() -> None:
    assert ContextWindow(1000, 100).budget().instructions == 0


def test_the_tracker_counts_the_tools_in_its_budget() -> None:
    tool = ToolSpec("search", "Search the web", {"type": "object"})
    tracker = ContextWindow(1000, 0).tracker()
    assert tracker.budget(None, [tool]).tools == 11


def test_the_tracker_computes_the_budget_once_for_the_same_instructions_and_tools() -> None:
    CountingEstimator.estimated = 0
    tracker = ContextWindow(1000, 0, estimator=CountingEstimator()).tracker()
    first = tracker.budget("be brief", ())
    assert tracker.budget("be brief", ()) is first
    assert CountingEstimator.estimated == 1


@pytest.mark.parametrize("via", ["window", "tracker"])
def test_fitting_leaves_room_for_the_instructions_and_tools(via: str) -> None:
    tool = ToolSpec("search", "Search the web", {"type": "object"})
    window = ContextWindow(tokens(TURNS) + 10, 0)
    fit = window.fit if via == "window" else window.tracker().fit
    assert fit(TURNS) == TURNS
    assert fit(TURNS, "x" * 40) == TURNS[2:]
    assert fit(TURNS, None, [tool]) == TURNS[2:]


WRONG_WINDOWS: list[tuple[dict[str, Any], str, object, str]] = [
    ({"max_tokens": 0}, "ContextWindow.max_tokens", 0, "an int >= 1"),
    ({"max_tokens": 10, "reserved_output": -1}, "ContextWindow.reserved_output", -1, "an int >= 0"),
    (
        {"max_tokens": 10, "reserved_output": 10},
        "ContextWindow.reserved_output",
        10,
        "below max_tokens (10)",
    ),
    (
        {"max_tokens": 10, "estimator": len},
        "ContextWindow.estimator",
        len,
        "an object with count_text and count_message (a TokenEstimator)",
    ),
]


@pytest.mark.parametrize(("arguments", "option", "value", "rule"), WRONG_WINDOWS)
def test_a_wrong_window_option_names_the_option_value_and_rule(
    arguments: dict[str, Any], option: str, value: object, rule: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        ContextWindow(**arguments)
    assert (caught.value.option, caught.value.value, caught.value.rule) == (option, value, rule)


def test_the_current_turns_reasoning_survives_trimming_and_an_old_turns_goes_with_it() -> None:
    thought = ReasoningPart("long thinking " * 40, signature="sig")
    old_turn = (UserMessage("earlier"), AssistantMessage(parts=[thought, TextPart("old answer")]))
    first = AssistantMessage(parts=[thought, ToolCall("look", "{}", "c1")])
    plain = AssistantMessage("", (ToolCall("look", "{}", "c2"),))
    steps = (first, ToolMessage("c1", "look", "x"), plain, ToolMessage("c2", "look", "y"))
    newest = (AssistantMessage("", (ToolCall("look", "{}", "c3"),)), ToolMessage("c3", "look", "z"))
    messages = (*old_turn, UserMessage("now"), *steps, *newest)
    pinned = (UserMessage("now"), first, steps[1], *newest)
    kept = trim(messages, costs(messages), ContextBudget(tokens(pinned)))
    assert kept == pinned  # the plain step went; the one that reasoned stayed, unedited
    assert kept[1] is first

"""Chunked drops: a run's requests extend each other except at a counted drop (a stable prefix)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop._core._messages import AssistantMessage, Message, UserMessage
from reactloop._core._repair import pair_calls
from reactloop._errors import ConfigurationError, ContextTooLongError
from reactloop._policies._context import ContextTracker, ContextWindow
from reactloop._policies._tokens import DEFAULT_ESTIMATOR
from tests.helpers.strategies import Conversation, conversations, examples

cost = functools.cache(DEFAULT_ESTIMATOR.count_message)


def tokens(messages: Sequence[Message]) -> int:
    return sum(cost(message) for message in messages)


def fitted(tracker: ContextTracker, messages: Sequence[Message]) -> tuple[Message, ...] | None:
    try:
        return tracker.fit(messages)
    except ContextTooLongError:
        return None


def extends(longer: Sequence[Message], shorter: Sequence[Message]) -> bool:
    """Whether `longer` starts with the very messages of `shorter`."""
    return len(longer) >= len(shorter) and all(map(lambda a, b: a is b, longer, shorter))


def pairs_kept(messages: Sequence[Message], result: Sequence[Message]) -> bool:
    """No call or result in `result` lost its partner that `messages` gave it."""
    before, after = pair_calls(messages), pair_calls(result)
    orphans = {id(messages[index]) for index in before.orphans}
    opened = {(id(messages[item.index]), item.call.id) for item in before.open}
    return {id(result[index]) for index in after.orphans} <= orphans and {
        (id(result[item.index]), item.call.id) for item in after.open
    } <= opened


@settings(max_examples=examples(200), deadline=None)
@given(conversations(), st.data())
def test_each_request_extends_the_last_except_at_a_counted_drop(
    conversation: Conversation, data: st.DataObject
) -> None:
    messages = conversation.messages
    size = data.draw(st.integers(1, tokens(messages) + 10)) + 1
    drop_to = data.draw(st.sampled_from([0.3, 0.5, 0.7, 0.9]))
    window = ContextWindow(size, 1, drop_to=drop_to)
    tracker, fresh = window.tracker(), ContextWindow(size, 1, drop_to=1.0)
    previous: tuple[Message, ...] | None = None
    for end in range(1, len(messages) + 1):
        prefix, drops = messages[:end], tracker.drops
        result = fitted(tracker, prefix)
        assert (result is None) == (fitted(fresh.tracker(), prefix) is None)
        if result is None:
            previous = None
            continue
        assert tokens(result) <= size - 1 and pairs_kept(prefix, result)
        assert result[-1] is prefix[-1] and all(m in prefix for m in result)
        if previous is not None and tracker.drops == drops:
            assert extends(result, previous) and result[len(previous) :] == prefix[-1:]
        previous = result


def test_a_drop_goes_down_to_the_low_water_mark_and_the_next_steps_only_append() -> None:
    window = ContextWindow(1000, 0, drop_to=0.5)
    tracker = window.tracker()
    history: list[Message] = [UserMessage("question")]
    sent: list[tuple[Message, ...]] = []
    for n in range(60):
        history.append(AssistantMessage(f"step {n} " + "word " * 40))
        sent.append(tracker.fit(tuple(history)))
    first_drop = next(i for i, request in enumerate(sent) if len(request) < i + 2)
    assert tokens(sent[first_drop]) <= 500 < tokens(sent[first_drop - 1])
    after = sent[first_drop:]
    follows = [extends(later, earlier) for earlier, later in itertools.pairwise(after)]
    assert tracker.drops == follows.count(False) + 1 >= 2
    assert tracker.drops <= len(after) // 5  # a drop frees about ten steps' worth (50 tokens)
    dropped_at = [later for later, kept in zip(after[1:], follows, strict=True) if not kept]
    assert all(tokens(request) <= 500 for request in dropped_at)
    assert all(request[0] is history[0] for request in sent)


def test_drop_to_one_trims_just_enough_before_every_request() -> None:
    tracker = ContextWindow(1000, 0, drop_to=1.0).tracker()
    history: list[Message] = [UserMessage("question")]
    for n in range(40):
        history.append(AssistantMessage(f"step {n} " + "word " * 40))
        request = tracker.fit(tuple(history))
    assert tokens(request) > 900 and tracker.drops == 0


@pytest.mark.parametrize("drop_to", [0, -0.5, 1.01, float("nan"), "0.7", True, None])
def test_drop_to_outside_zero_to_one_is_a_configuration_error(drop_to: object) -> None:
    with pytest.raises(ConfigurationError, match=r"ContextWindow\.drop_to"):
        ContextWindow(1000, 0, drop_to=drop_to)  # type: ignore[arg-type]


@settings(max_examples=examples(200), deadline=None)
@given(conversations(), st.data())
def test_extending_the_last_fit_keeps_what_cutting_into_units_again_keeps(
    conversation: Conversation, data: st.DataObject
) -> None:
    """The O(new messages) path for a step that only appends gives the very result of the
    full one (forced here by forgetting the last fit before each request)."""
    messages = conversation.messages
    size = data.draw(st.integers(1, tokens(messages) + 10)) + 1
    window = ContextWindow(size, 1, drop_to=data.draw(st.sampled_from([0.3, 0.6, 0.9])))
    fast, slow = window.tracker(), window.tracker()
    for end in range(1, len(messages) + 1):
        slow._last = None
        assert fitted(fast, messages[:end]) == fitted(slow, messages[:end])
        assert fast.drops == slow.drops

"""Repairing stored histories: interrupted calls get an error result, orphan results go."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings

from reactloop._core._messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from reactloop._core._repair import (
    INTERRUPTED_RESULT,
    RepairKind,
    RepairNote,
    pair_calls,
    repair_history,
)
from tests.helpers.strategies import (
    Conversation,
    conversations,
    damaged_histories,
    examples,
    message_lists,
)

MANY = settings(max_examples=examples(300), deadline=None)


def call(call_id: str, name: str = "search") -> ToolCall:
    return ToolCall(name, "{}", call_id)


def result(call_id: str, name: str = "search") -> ToolMessage:
    return ToolMessage(call_id, name, "ok")


def is_synthesized(message: Message) -> bool:
    return (
        isinstance(message, ToolMessage) and message.is_error and message.text == INTERRUPTED_RESULT
    )


@MANY
@given(message_lists())
def test_a_repaired_history_is_pair_complete(messages: list[Message]) -> None:
    assert pair_calls(repair_history(messages).messages).complete


@MANY
@given(damaged_histories())
def test_a_damaged_conversation_is_pair_complete_after_repair(messages: list[Message]) -> None:
    assert pair_calls(repair_history(messages).messages).complete


@MANY
@given(conversations())
def test_a_valid_history_is_left_unchanged(conversation: Conversation) -> None:
    repaired = repair_history(conversation.messages)
    assert repaired.messages == conversation.messages
    assert not repaired.changed


@MANY
@given(message_lists())
def test_repair_only_drops_orphans_and_adds_error_results(messages: list[Message]) -> None:
    pairing = pair_calls(messages)
    repaired = repair_history(messages).messages
    originals = [m for m in repaired if any(m is original for original in messages)]
    added = [m for m in repaired if not any(m is original for original in messages)]
    expected = [m for index, m in enumerate(messages) if index not in pairing.orphans]
    assert len(originals) == len(expected)
    assert all(kept is wanted for kept, wanted in zip(originals, expected, strict=True))
    assert all(is_synthesized(message) for message in added)
    assert len(added) == len(pairing.open)


@MANY
@given(message_lists())
def test_every_fix_has_a_note(messages: list[Message]) -> None:
    pairing = pair_calls(messages)
    notes = repair_history(messages).notes
    kinds = [note.kind for note in notes]
    assert kinds.count(RepairKind.ORPHAN_RESULT) == len(pairing.orphans)
    assert kinds.count(RepairKind.INTERRUPTED_CALL) == len(pairing.open)


@MANY
@given(message_lists())
def test_repairing_twice_changes_nothing_more(messages: list[Message]) -> None:
    assert not repair_history(repair_history(messages).messages).changed


def test_an_interrupted_call_is_answered_after_the_results_it_has() -> None:
    assistant = AssistantMessage("", (call("1"), call("2", "fetch"), call("3")))
    messages: list[Message] = [UserMessage("go"), assistant, result("2", "fetch")]
    repaired = repair_history(messages).messages
    assert repaired[:3] == tuple(messages)
    assert [(m.call_id, m.name) for m in repaired[3:] if isinstance(m, ToolMessage)] == [
        ("1", "search"),
        ("3", "search"),
    ]
    assert all(is_synthesized(message) for message in repaired[3:])


def test_an_orphan_result_is_dropped_and_noted() -> None:
    repaired = repair_history([UserMessage("go"), result("9", "fetch")])
    assert repaired.messages == (UserMessage("go"),)
    assert repaired.notes == (RepairNote(RepairKind.ORPHAN_RESULT, "9", "fetch", 1),)


def test_a_result_answers_only_one_call_with_its_id() -> None:
    messages: list[Message] = [AssistantMessage("", (call("1"),)), result("1"), result("1")]
    assert repair_history(messages).messages == tuple(messages[:2])


def test_each_fix_is_logged_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="reactloop"):
        repair_history([AssistantMessage("", (call("1"),)), result("7")])
    assert [record.getMessage() for record in caplog.records] == [
        "repaired stored history: tool call 'search' (1) at message 0 had no result: added an "
        "error result saying it was interrupted",
        "repaired stored history: result of tool call 'search' (7) at message 1 had no call "
        "before it: dropped it",
    ]

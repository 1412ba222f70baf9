"""Messages and tool calls: `ToolCall.with_arguments` keeps the call's identity; assistant
messages are ordered parts; every message names its text `text`."""

from __future__ import annotations

import orjson
import pytest

from reactloop import ConfigurationError, ToolCall
from reactloop.messages import (
    AssistantMessage,
    AssistantPart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)


def test_with_arguments_keeps_id_and_name_and_serializes_the_arguments() -> None:
    original = ToolCall.of("search", {"q": "paris"}, id="call_7")
    changed = original.with_arguments({"q": "東京", "limit": 5})
    assert (changed.id, changed.name) == ("call_7", "search")
    assert orjson.loads(changed.arguments) == {"q": "東京", "limit": 5}
    assert original.arguments == '{"q":"paris"}'


def test_of_without_an_id_makes_a_new_call() -> None:
    original = ToolCall.of("search", {"q": "paris"})
    assert ToolCall.of(original.name, {"q": "rome"}).id != original.id


def test_an_assistant_message_built_from_text_and_calls_has_them_as_parts_in_that_order() -> None:
    call = ToolCall("search", "{}", "c1")
    message = AssistantMessage("looking", (call,))
    assert message.parts == (TextPart("looking"), call)
    assert message == AssistantMessage(parts=[TextPart("looking"), call])


def test_text_calls_and_reasoning_are_read_from_the_parts_in_order() -> None:
    thought = ReasoningPart("first", signature="sig-1")
    later = ReasoningPart(redacted="opaque")
    calls = (ToolCall("a", "{}", "c1"), ToolCall("b", "{}", "c2"))
    parts: list[AssistantPart] = [thought, TextPart("one "), calls[0], later, TextPart("two")]
    parts.append(calls[1])
    message = AssistantMessage(parts=parts)
    assert (message.text, message.tool_calls, message.reasoning) == (
        "one two",
        calls,
        (thought, later),
    )


def test_parts_and_text_together_are_refused_naming_the_rule() -> None:
    with pytest.raises(ConfigurationError, match=r"AssistantMessage\.parts.*given alone"):
        AssistantMessage("text", parts=[TextPart("text")])


def test_with_tool_calls_replaces_each_call_in_its_place() -> None:
    thought = ReasoningPart("why", signature="s")
    message = AssistantMessage(parts=[thought, ToolCall("a", "{}", "c1"), TextPart("after")])
    renamed = message.with_tool_calls([ToolCall("a", "{}", "wire_1")])
    assert renamed.parts == (thought, ToolCall("a", "{}", "wire_1"), TextPart("after"))


def test_without_reasoning_keeps_the_other_parts_and_is_free_without_reasoning() -> None:
    plain = AssistantMessage("hi")
    assert plain.without_reasoning() is plain
    message = AssistantMessage(parts=[ReasoningPart("x"), TextPart("hi")])
    assert message.without_reasoning() == plain


def test_every_message_names_its_text_text() -> None:
    texts = [SystemMessage("s").text, UserMessage("u").text, ToolMessage("c", "t", "r").text]
    assert [*texts, AssistantMessage("a").text] == ["s", "u", "r", "a"]


@pytest.mark.parametrize("cls", [SystemMessage, UserMessage])
def test_the_old_content_keyword_and_attribute_still_work_and_warn(cls: type) -> None:
    with pytest.warns(DeprecationWarning, match=rf"{cls.__name__}\(content=\.\.\.\).*text="):
        message = cls(content="hello")
    with pytest.warns(DeprecationWarning, match=rf"{cls.__name__}\.content.*\.text"):
        assert message.content == "hello"
    assert message == cls("hello")


def test_a_tool_message_takes_the_old_content_keyword_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"ToolMessage\(content="):
        assert ToolMessage("c", "t", content="r") == ToolMessage("c", "t", "r")


def test_text_and_content_together_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"UserMessage.content.*given once"):
        UserMessage("a", content="b")


def test_readable_reasoning_is_the_text_else_the_summaries() -> None:
    assert ReasoningPart("t", summary=("s",)).readable == "t"
    assert ReasoningPart(summary=["one", "two"]).readable == "one\n\ntwo"
    assert not ReasoningPart("t").is_opaque and ReasoningPart(encrypted="e").is_opaque

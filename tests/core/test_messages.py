"""Messages and tool calls: `ToolCall.with_arguments` keeps the call's identity."""

from __future__ import annotations

import orjson

from reactloop import ToolCall


def test_with_arguments_keeps_id_and_name_and_serializes_the_arguments() -> None:
    original = ToolCall.of("search", {"q": "paris"}, id="call_7")
    changed = original.with_arguments({"q": "東京", "limit": 5})
    assert (changed.id, changed.name) == ("call_7", "search")
    assert orjson.loads(changed.arguments) == {"q": "東京", "limit": 5}
    assert original.arguments == '{"q":"paris"}'


def test_of_without_an_id_makes_a_new_call() -> None:
    original = ToolCall.of("search", {"q": "paris"})
    assert ToolCall.of(original.name, {"q": "rome"}).id != original.id

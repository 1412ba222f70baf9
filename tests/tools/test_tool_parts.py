"""Tools that return content parts: an image, a document, audio, or a list mixing text and
parts becomes a result with `parts` (in order) that the model is given; text stays text."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import Limits, ReActLoop, tool
from reactloop._core._messages import ToolMessage
from reactloop._core._state import ToolResult
from reactloop.messages import AudioPart, DocumentPart, ImagePart, TextPart
from reactloop.testing import ScriptedModel, call
from tests.helpers.images import png

pytestmark = pytest.mark.anyio

PICTURE = ImagePart(png(8, 8))
PDF = DocumentPart(b"%PDF-1.4 report", title="report.pdf")
SOUND = AudioPart(b"RIFF....WAVE", "wav")


async def _returned(value: Any, limit: int = 20_000) -> tuple[ToolResult, ToolMessage]:
    """The result of one call of a tool returning `value`, and the tool message the model got."""

    @tool
    def give() -> Any:
        """Returns the value under test."""
        return value

    model = ScriptedModel([call("give"), "done"])
    loop = ReActLoop(model, tools=[give], limits=Limits(max_result_chars=limit))
    result = await loop.run("go")
    sent = model.requests[1].messages[-1]
    assert isinstance(sent, ToolMessage)
    return result.steps[0].tool_results[0], sent


@pytest.mark.parametrize("part", [PICTURE, PDF, SOUND])
async def test_a_returned_binary_part_is_the_results_only_part(part: Any) -> None:
    result, sent = await _returned(part)
    assert result.parts == (part,) and result.content == "" and not result.is_error
    assert sent.parts == (part,)


async def test_a_list_mixing_text_and_parts_keeps_them_in_order() -> None:
    result, sent = await _returned(["a red square", PICTURE, TextPart(" and a report"), PDF])
    assert result.parts == (TextPart("a red square"), PICTURE, TextPart(" and a report"), PDF)
    assert result.content == "a red square and a report"
    assert sent.parts == result.parts and sent.text == result.content


async def test_a_tuple_works_as_a_list() -> None:
    result, _ = await _returned(("see", PICTURE))
    assert result.parts == (TextPart("see"), PICTURE)


async def test_a_text_part_alone_is_plain_text() -> None:
    result, sent = await _returned(TextPart("just words"))
    assert result.content == "just words" and result.parts == ()
    assert sent.is_plain


async def test_text_parts_only_are_plain_text_joined() -> None:
    result, _ = await _returned(["one ", TextPart("two")])
    assert result.content == "one two" and result.parts == ()


@pytest.mark.parametrize(
    ("value", "content"),
    [("plain", "plain"), (["a", "b"], '["a","b"]'), ({"k": 1}, '{"k":1}'), (3, "3")],
)
async def test_text_only_results_are_unchanged(value: Any, content: str) -> None:
    result, sent = await _returned(value)
    assert result.content == content and result.parts == ()
    assert sent.is_plain and sent.text == content


async def test_a_list_with_a_part_and_another_value_is_an_error_naming_the_item() -> None:
    result, _ = await _returned(["see", PICTURE, {"k": 1}])
    assert result.is_error and result.parts == ()
    assert "cannot be shown" in result.content and "item 2 is a dict" in result.content


async def test_the_result_limit_cuts_the_text_parts_and_keeps_every_binary_part() -> None:
    result, _ = await _returned(["x" * 8, PICTURE, "y" * 8], limit=10)
    assert result.parts[1] == PICTURE and len(result.parts) == 3
    first, last = result.parts[0], result.parts[2]
    assert first == TextPart("x" * 8)
    assert isinstance(last, TextPart) and last.text.startswith("yy\n[truncated: 6 of 8")

"""Images, documents and audio at the command line: a tool result or a run's input made of
parts shows its text and a one-line description of each other part, never its bytes."""

from __future__ import annotations

from pathlib import Path

import anyio

from reactloop import ReActLoop, tool
from reactloop._cli._lines import Kind, Line, Narrator, parts_text
from reactloop._cli._runs import stored_lines
from reactloop._core import ContentPart
from reactloop._core._events import ToolCallFinished
from reactloop._core._state import ToolResult
from reactloop._durable._stores import SqliteStore
from reactloop.messages import AudioPart, DocumentPart, ImagePart, TextPart
from reactloop.testing import ScriptedModel, call
from tests.helpers.images import png

PICTURE = ImagePart(png(4, 4))
PICTURE_TEXT = f"[image image/png, {len(PICTURE.data or b''):,} bytes]"


def test_parts_are_their_text_and_each_other_part_described() -> None:
    parts: list[ContentPart] = [
        TextPart("see"),
        PICTURE,
        DocumentPart(b"%PDF"),
        AudioPart(b"abc", "mp3"),
    ]
    assert parts_text(parts) == (
        f"see {PICTURE_TEXT} [document application/pdf, 4 bytes] [audio mp3, 3 bytes]"
    )


def test_a_finished_call_with_an_image_describes_it() -> None:
    result = ToolResult("c1", "look", "a cat", parts=(TextPart("a cat"), PICTURE))
    lines = Narrator(lambda: 0.0).watch(ToolCallFinished(result))
    assert lines == [Line(Kind.OK, f"done look (0 ms) -> a cat {PICTURE_TEXT}")]


def test_a_finished_call_of_text_shows_its_content_as_before() -> None:
    result = ToolResult("c1", "look", "a cat")
    assert Narrator(lambda: 0.0).watch(ToolCallFinished(result)) == [
        Line(Kind.OK, "done look (0 ms) -> a cat")
    ]


@tool
def look() -> list[object]:
    """An image and its caption."""
    return ["a cat", PICTURE]


def test_a_stored_run_shows_its_inputs_and_results_parts_described(tmp_path: Path) -> None:
    async def stored() -> list[Line]:
        store = SqliteStore(tmp_path / "runs.db")
        try:
            loop = ReActLoop(ScriptedModel([call("look"), "a cat"]), tools=[look], store=store)
            result = await loop.run(["what is this?", PICTURE])
            found = await store.load(result.run_id)
            assert found is not None
            return stored_lines(found)
        finally:
            await store.aclose()

    texts = [line.text for line in anyio.run(stored)]
    assert f"input: what is this? {PICTURE_TEXT}" in texts
    assert f"look -> a cat {PICTURE_TEXT}" in texts

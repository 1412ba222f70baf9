"""A run whose input held images replays from its cassette: the input is kept as its message."""

from __future__ import annotations

from pathlib import Path

import pytest

from reactloop import ImagePart, MemoryStore, ReActLoop, UserMessage
from reactloop.testing import Cassette, RecordingModel, ReplayModel, ScriptedModel

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(40)
SAID = UserMessage(parts=["What is this?", ImagePart(PNG)])


async def test_a_recorded_input_of_parts_replays_as_it_was_said(tmp_path: Path) -> None:
    recorder = RecordingModel(ScriptedModel(["a cat"]))
    result = await ReActLoop(recorder).run(SAID)
    recorder.cassette(result).save(tmp_path / "run.json")
    cassette = Cassette.load(tmp_path / "run.json")
    assert cassette.input == SAID
    replayed = await ReActLoop(ReplayModel(cassette)).run(cassette.input)
    assert replayed.output == "a cat"


async def test_a_cassette_from_a_store_keeps_the_input_s_parts() -> None:
    store = MemoryStore()
    result = await ReActLoop(ScriptedModel(["a cat"]), store=store).run(SAID)
    cassette = await Cassette.from_store(store, result.run_id)
    assert cassette.input == SAID


async def test_a_text_input_is_still_kept_as_text() -> None:
    recorder = RecordingModel(ScriptedModel(["hi"]))
    result = await ReActLoop(recorder).run("hello")
    assert recorder.cassette(result).input == "hello"

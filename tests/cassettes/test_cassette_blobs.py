"""A cassette file keeps each distinct image, document or audio once (a `blobs` table the
parts refer to), however many requests repeat it; version 1 files still load and replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from reactloop._cassettes._cassette import Cassette
from reactloop._core._messages import UserMessage
from reactloop._core._parts import AudioPart, DocumentPart, ImagePart, TextPart
from reactloop._durable._parts import digest_of
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import CassetteFormatError
from reactloop._tools._tool import tool
from reactloop.testing import RecordingModel, ReplayModel
from tests.helpers.screenshot import BIG, MB5, crop, five_steps, question, zoom
from tests.helpers.strategies import cassettes_with_parts, examples

SAMPLE = Path(__file__).parent.parent / "fixtures" / "cassettes" / "parts-v1.cassette.json"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # the sample's image


def stored_parts(value: Any) -> list[dict[str, Any]]:
    """Every stored content part of a binary kind in a file's JSON."""
    if isinstance(value, list):
        return [part for item in value for part in stored_parts(item)]
    if not isinstance(value, dict):
        return []
    found = [value] if value.get("type") in ("image", "document", "audio") else []
    return found + [part for item in value.values() for part in stored_parts(item)]


def binary_data(cassette: Cassette) -> set[bytes]:
    """The bytes of every binary part the cassette holds, anywhere."""
    messages = [*cassette.history, *(m for i in cassette.interactions for m in i.request.messages)]
    parts = [p for m in messages for p in getattr(m, "parts", ())]
    parts += [p for r in cassette.tool_results.values() for p in r.parts]
    kinds = (ImagePart, DocumentPart, AudioPart)
    return {p.data for p in parts if isinstance(p, kinds) and p.data is not None}


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cassettes_with_parts())
def test_a_cassette_with_parts_reads_back_as_itself_each_content_once(
    cassette: Cassette,
) -> None:
    text = cassette.to_json()
    assert Cassette.from_json(text) == cassette
    document = orjson.loads(text)
    assert all("data" not in part for part in stored_parts(document))
    digests = {digest_of(data) for data in binary_data(cassette)}
    assert set(document.get("blobs", {})) == digests


QUESTION = question(BIG)


@pytest.mark.anyio
async def test_a_five_step_run_with_a_five_megabyte_image_writes_it_once(tmp_path: Path) -> None:
    recording = RecordingModel(five_steps())
    result = await ReActLoop(recording, tools=[crop, zoom]).run(QUESTION)
    assert len(recording.interactions) == 5  # five requests, each holding the image
    path = tmp_path / "run.cassette.json"
    recording.cassette(result).save(path)
    size = path.stat().st_size
    assert MB5 * 4 / 3 <= size < MB5 * 4 / 3 * 1.01, size  # once, as base64 (not 5 x 6.7 MB)
    assert list(orjson.loads(path.read_bytes())["blobs"]) == [digest_of(BIG)]
    cassette = Cassette.load(path)
    replay = ReplayModel(cassette)
    again = await ReActLoop(replay, tools=cassette.recorded_tools([crop, zoom])).run(QUESTION)
    assert again.output == "a login form"
    replay.assert_complete()


@tool(name="zoom")
def sample_zoom(factor: int) -> str:
    """The picture, zoomed."""
    raise AssertionError("a replay serves the recorded result")


@pytest.mark.anyio
async def test_the_committed_version_1_sample_with_inline_bytes_still_replays() -> None:
    assert orjson.loads(SAMPLE.read_bytes())["version"] == 1
    cassette = Cassette.load(SAMPLE)
    first = cassette.interactions[0].request.messages[0]
    assert first == UserMessage(parts=[TextPart("What is this?"), ImagePart(PNG, detail="low")])
    replay = ReplayModel(cassette)
    tools = cassette.recorded_tools([sample_zoom])
    result = await ReActLoop(replay, tools=tools).run(first)
    assert result.output == "a cat, twice zoomed"
    replay.assert_complete()


def test_a_blob_that_is_not_its_digests_or_is_missing_is_a_format_error() -> None:
    cassette = Cassette("look", (), (UserMessage(parts=[ImagePart(PNG)]),))
    document = orjson.loads(cassette.to_json())
    (digest,) = document["blobs"]
    document["blobs"][digest] = "AAAA"
    with pytest.raises(CassetteFormatError, match=f"blob {digest} holds other bytes"):
        Cassette.from_json(orjson.dumps(document))
    del document["blobs"]
    with pytest.raises(CassetteFormatError, match=f"refers to blob {digest}"):
        Cassette.from_json(orjson.dumps(document))

"""Images, documents and audio in recorded content (GenAI conventions): `blob` parts with their
modality, media type and base64 bytes up to a cap, `uri` parts for URLs (no media type when not
known), a size-only part past the cap; and nothing of them on any span unless content is
recorded."""

from __future__ import annotations

import base64
import json

import pytest

from reactloop import ReActLoop, tool
from reactloop._core._messages import ToolMessage, UserMessage
from reactloop._telemetry._content import BLOB_BYTES, input_messages
from reactloop.messages import AudioPart, DocumentPart, ImagePart, TextPart
from reactloop.testing import ScriptedModel, call
from tests.helpers.images import png
from tests.telemetry.test_otel import Traces

pytestmark = pytest.mark.anyio

PICTURE = ImagePart(png(8, 8))
ENCODED = base64.b64encode(PICTURE.data or b"").decode()


def recorded(*messages: UserMessage | ToolMessage) -> list[dict[str, object]]:
    entries = json.loads(input_messages(messages))
    assert isinstance(entries, list)
    return entries


def test_a_users_parts_keep_their_order_as_text_and_blob_parts() -> None:
    (entry,) = recorded(UserMessage(parts=[TextPart("what is this?"), PICTURE]))
    assert entry == {
        "role": "user",
        "parts": [
            {"type": "text", "content": "what is this?"},
            {"type": "blob", "modality": "image", "mime_type": "image/png", "content": ENCODED},
        ],
    }


@pytest.mark.parametrize(
    ("part", "shown"),
    [
        (
            ImagePart(url="https://example.com/a.png"),
            {
                "type": "uri",
                "modality": "image",
                "uri": "https://example.com/a.png",
            },
        ),
        (
            DocumentPart(url="https://example.com/a.pdf"),
            {
                "type": "uri",
                "modality": "document",
                "mime_type": "application/pdf",
                "uri": "https://example.com/a.pdf",
            },
        ),
        (
            AudioPart(b"abc", "mp3"),
            {"type": "blob", "modality": "audio", "mime_type": "audio/mpeg", "content": "YWJj"},
        ),
        (DocumentPart(text="the notes"), {"type": "text", "content": "the notes"}),
        (
            DocumentPart(bytes(BLOB_BYTES + 1)),
            {
                "type": "blob_omitted",
                "modality": "document",
                "mime_type": "application/pdf",
                "size": BLOB_BYTES + 1,
            },
        ),
    ],
)
def test_each_kind_of_part_is_recorded_by_the_conventions(part: object, shown: object) -> None:
    (entry,) = recorded(UserMessage(parts=[part]))  # type: ignore[list-item]
    assert entry["parts"] == [shown]


def test_a_tool_messages_text_is_its_response_and_its_media_follow() -> None:
    message = ToolMessage("c1", "look", parts=[TextPart("a red square"), PICTURE])
    (entry,) = recorded(message)
    assert entry["parts"] == [
        {"type": "tool_call_response", "id": "c1", "response": "a red square"},
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": ENCODED},
    ]


def test_plain_messages_are_recorded_as_before() -> None:
    assert recorded(UserMessage("hi"), ToolMessage("c1", "add", "3")) == [
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "3"}]},
    ]


@tool
def look() -> list[object]:
    """A caption and an image."""
    return ["a red square", PICTURE]


@pytest.mark.parametrize("record", [True, False])
async def test_a_tools_image_reaches_the_next_chat_span_only_when_content_is_recorded(
    record: bool,
) -> None:
    traces = Traces()
    model = ScriptedModel([call("look"), "a red square"])
    telemetry = traces.telemetry(record_content=record)
    await ReActLoop(model, tools=[look], telemetry=telemetry).run(["what?", PICTURE])
    spans = traces.named("chat")
    every = [str(value) for span in traces.spans for value in (span.attributes or {}).values()]
    if not record:
        assert not any(ENCODED in value for value in every)
        return
    second = json.loads(str((spans[1].attributes or {})["gen_ai.input.messages"]))
    assert second[0]["parts"][1]["type"] == "blob"
    assert second[-1]["parts"][1] == {
        "type": "blob", "modality": "image", "mime_type": "image/png", "content": ENCODED
    }  # fmt: skip

"""Content parts: what each part holds, how messages and tool results are made of them."""

from __future__ import annotations

import pathlib

import pytest

from reactloop import AudioPart, DocumentPart, ImagePart, ToolMessage, UserMessage
from reactloop._core import ToolResult, blank_reason, describe, sniff_image_type
from reactloop.errors import ConfigurationError
from reactloop.messages import TextPart

PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)
JPEG = b"\xff\xd8\xff\xe0" + bytes(24)
GIF = b"GIF89a" + bytes(24)
WEBP = b"RIFF\x00\x00\x00\x00WEBPVP8 " + bytes(16)


@pytest.mark.parametrize(
    ("data", "media_type"),
    [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"), (WEBP, "image/webp")],
)
def test_an_image_s_media_type_is_read_from_its_bytes(data: bytes, media_type: str) -> None:
    assert ImagePart(data).media_type == media_type
    assert sniff_image_type(data) == media_type


def test_bytes_that_are_no_known_image_need_a_media_type() -> None:
    with pytest.raises(ConfigurationError, match=r"ImagePart.media_type"):
        ImagePart(b"not an image")
    assert ImagePart(b"BM...", media_type="image/bmp").media_type == "image/bmp"


def test_an_image_takes_bytes_or_a_url_never_both_nor_neither() -> None:
    with pytest.raises(ConfigurationError, match="exactly one of `data` or `url`"):
        ImagePart(PNG, url="https://example.com/a.png")
    with pytest.raises(ConfigurationError, match="exactly one"):
        ImagePart()
    assert ImagePart(url="https://example.com/a.png").media_type is None


def test_bytearray_and_memoryview_are_kept_as_bytes() -> None:
    assert ImagePart(bytearray(PNG)).data == PNG
    assert AudioPart(memoryview(b"RIFF"), "wav").data == b"RIFF"


def test_a_document_is_a_pdf_unless_it_is_text() -> None:
    assert DocumentPart(b"%PDF-1.4").media_type == "application/pdf"
    assert DocumentPart(url="https://example.com/a.pdf").media_type == "application/pdf"
    assert DocumentPart(text="notes").media_type == "text/plain"
    with pytest.raises(ConfigurationError, match="exactly one of `data` or `url` or `text`"):
        DocumentPart(b"%PDF", text="both")


def test_audio_names_its_format_and_media_type() -> None:
    assert AudioPart(b"ID3", "mp3").media_type == "audio/mpeg"
    with pytest.raises(ConfigurationError, match=r"AudioPart.format must be one of"):
        AudioPart(b"x", "aiff")


def test_a_part_s_repr_shows_the_size_never_the_bytes() -> None:
    part = ImagePart(PNG + b"secret")
    assert "secret" not in repr(part)
    assert f"<{len(PNG) + 6:,} bytes>" in repr(part)


def test_parts_read_from_files(tmp_path: pathlib.Path) -> None:
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "clip.wav").write_bytes(b"RIFF")
    assert ImagePart.from_file(tmp_path / "chart.png", detail="low") == ImagePart(PNG, detail="low")
    assert DocumentPart.from_file(tmp_path / "notes.txt") == DocumentPart(
        text="hello", title="notes.txt"
    )
    assert DocumentPart.from_file(tmp_path / "paper.pdf").data == b"%PDF-1.4"
    assert AudioPart.from_file(tmp_path / "clip.wav") == AudioPart(b"RIFF", "wav")


def test_a_user_message_is_one_text_part_or_the_parts_given() -> None:
    plain = UserMessage("hi")
    assert plain.parts == (TextPart("hi"),) and plain.is_plain and plain.text == "hi"
    mixed = UserMessage(parts=["What is ", ImagePart(PNG), "this?"])
    assert mixed.parts[0] == TextPart("What is ") and isinstance(mixed.parts[1], ImagePart)
    assert mixed.text == "What is this?" and not mixed.is_plain


def test_a_message_s_equality_is_its_parts() -> None:
    assert UserMessage("hi") == UserMessage(parts=["hi"])
    assert UserMessage(parts=[ImagePart(PNG)]) != UserMessage(parts=[ImagePart(JPEG)])


def test_text_and_parts_together_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"UserMessage.parts must be given alone"):
        UserMessage("hi", parts=["there"])
    with pytest.raises(ConfigurationError, match=r"ToolMessage.parts must be given alone"):
        ToolMessage("c1", "t", "hi", parts=["there"])


@pytest.mark.parametrize("wrong", [b"bytes", "a string", [5], [{"type": "image"}]])
def test_parts_that_are_not_parts_are_refused(wrong: object) -> None:
    with pytest.raises(ConfigurationError, match=r"UserMessage.parts"):
        UserMessage(parts=wrong)  # type: ignore[arg-type]


def test_a_tool_result_with_parts_becomes_a_tool_message_with_them() -> None:
    parts = (TextPart("the chart:"), ImagePart(PNG))
    result = ToolResult("c1", "chart", "the chart:", parts=parts)
    message = result.to_message()
    assert message.parts == parts and message.text == "the chart:" and not message.is_plain
    assert ToolResult("c1", "t", "plain").to_message() == ToolMessage("c1", "t", "plain")


def test_the_deprecated_content_keyword_warns_at_the_caller() -> None:
    with pytest.warns(DeprecationWarning, match=r"UserMessage\(content=...\)") as caught:
        UserMessage(content="hi")
    assert caught[0].filename == __file__


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (TextPart("abc"), "text, 3 characters"),
        (ImagePart(PNG), f"image image/png, {len(PNG)} bytes"),
        (ImagePart(url="https://x.test/a.png"), "image at https://x.test/a.png"),
        (DocumentPart(text="hello", title="a.txt"), "document a.txt 5 characters"),
        (AudioPart(b"ID3", "mp3"), "audio mp3, 3 bytes"),
    ],
)
def test_each_part_has_a_one_line_description(part: object, expected: str) -> None:
    assert describe(part) == expected  # type: ignore[arg-type]


def test_a_user_message_of_an_image_alone_is_not_blank() -> None:
    assert blank_reason(UserMessage(parts=[ImagePart(PNG)])) is None
    assert blank_reason(UserMessage(parts=[" ", ImagePart(PNG)])) is None
    assert blank_reason(UserMessage(parts=[" ", "  "])) == "its text is blank"

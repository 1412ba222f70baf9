"""Images, PDFs and audio in token estimates: sizes read from file headers (stdlib only), each
vendor's published rules, the generic largest-of-three default, and trimming that drops a tool
message with its image as a whole."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop._core._messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from reactloop._core._parts import AudioPart, DocumentPart, ImagePart, TextPart
from reactloop._errors import ConfigurationError
from reactloop._policies._context import ContextWindow
from reactloop._policies._media import image_size, pdf_pages, wav_seconds
from reactloop._policies._tokens import (
    DEFAULT_ESTIMATOR,
    MessageTokenEstimator,
    Vendor,
    audio_seconds,
    media_tokens,
)
from tests.helpers.images import gif_header, jpeg_header, png, webp_header

OVERHEAD = DEFAULT_ESTIMATOR.message_overhead
PDF_PAGE = b"1 0 obj << /Type /Page /Parent 2 0 R >> endobj\n"
PDF_TREE = b"2 0 obj << /Type /Pages /Count 3 >> endobj\n"


def wav(seconds: float, rate: int = 16_000) -> bytes:
    """A mono 16-bit WAV of silence."""
    samples = bytes(int(seconds * rate) * 2)
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data"
    body += struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


@pytest.mark.parametrize(
    "header",
    [
        png(300, 200),
        gif_header(300, 200),
        jpeg_header(300, 200),
        jpeg_header(300, 200, marker=0xC2),  # progressive
        webp_header(300, 200, b"VP8X"),
        webp_header(300, 200, b"VP8L"),
        webp_header(300, 200, b"VP8 "),
    ],
)
def test_an_images_size_is_read_from_its_header(header: bytes) -> None:
    assert image_size(header) == (300, 200)


@pytest.mark.parametrize(
    "data",
    [b"", b"\x89PNG\r\n\x1a\n" + bytes(12_000), jpeg_header(300, 200)[:12], b"GIF89a", b"text"],
)
def test_an_unreadable_header_has_no_size(data: bytes) -> None:
    assert image_size(data) is None


HEADS = [b"\x89PNG\r\n\x1a\n", b"GIF89a", b"\xff\xd8", b"RIFF\x00\x00\x00\x00WEBP", b""]


@given(st.sampled_from(HEADS), st.binary(max_size=80))
def test_any_bytes_after_a_signature_give_a_size_or_none_never_an_error(
    head: bytes, tail: bytes
) -> None:
    size = image_size(head + tail)
    assert size is None or (size[0] > 0 and size[1] > 0)


@given(st.binary(max_size=80))
def test_any_bytes_give_a_wav_duration_of_zero_or_more_or_none(tail: bytes) -> None:
    seconds = wav_seconds(b"RIFF\x00\x00\x00\x00WAVE" + tail)
    assert seconds is None or seconds >= 0


@pytest.mark.parametrize(
    ("size", "vendor", "tokens"),
    [
        ((1000, 1000), "anthropic", 1334),  # 1,000,000 / 750
        ((200, 200), "anthropic", 54),
        ((3000, 3000), "anthropic", 1600),  # scaled down: the cap
        ((1024, 1024), "openai", 765),  # 768 x 768: 4 tiles
        ((2048, 4096), "openai", 1105),  # 768 x 1536: 6 tiles
        ((100, 100), "openai", 255),  # 1 tile
        ((300, 300), "gemini", 1120),  # Gemini 3's default budget (Gemini 2: 258)
        ((1000, 1000), "gemini", 1120),  # Gemini 2: 4 tiles of 768, 1,032
        ((2000, 1000), "gemini", 1548),  # Gemini 2: 6 tiles of 768, past Gemini 3's 1,120
    ],
)
def test_an_image_counts_by_its_vendors_rule(
    size: tuple[int, int], vendor: Vendor, tokens: int
) -> None:
    assert media_tokens(ImagePart(png(*size)), vendor) == tokens


def test_openai_low_detail_is_85_tokens_whatever_the_size() -> None:
    assert media_tokens(ImagePart(png(4000, 4000), detail="low"), "openai") == 85


@pytest.mark.parametrize(("vendor", "tokens"), [("anthropic", 1600), ("openai", 1445)])
def test_an_image_of_unknown_size_counts_the_most_it_could(vendor: Vendor, tokens: int) -> None:
    assert media_tokens(ImagePart(url="https://example.com/a.png"), vendor) == tokens


def test_generic_takes_the_largest_vendor_estimate() -> None:
    part = ImagePart(png(1000, 1000))
    each = [media_tokens(part, vendor) for vendor in ("anthropic", "openai", "gemini")]
    assert media_tokens(part) == max(each) == 1334


def test_a_pdf_counts_its_page_objects_and_not_its_page_tree() -> None:
    data = b"%PDF-1.4\n" + PDF_TREE + PDF_PAGE * 3
    assert pdf_pages(data) == 3
    assert media_tokens(DocumentPart(data), "anthropic") == 9_000
    assert media_tokens(DocumentPart(data), "gemini") == 3 * 560  # Gemini 3's default per page


def test_a_pdf_whose_pages_cannot_be_seen_counts_one_page_per_50_kb() -> None:
    assert media_tokens(DocumentPart(b"%PDF-1.7\n" + bytes(120_000)), "openai") == 3 * 2_000


def test_a_pdf_url_counts_five_pages() -> None:
    assert media_tokens(DocumentPart(url="https://example.com/a.pdf"), "openai") == 5 * 2_000


def test_a_text_document_counts_as_its_text_and_title() -> None:
    message = UserMessage(parts=[DocumentPart(text="x" * 400, title="notes")])
    assert DEFAULT_ESTIMATOR.count_message(message) == OVERHEAD + 100 + 2


def test_wav_duration_comes_from_its_byte_rate() -> None:
    assert wav_seconds(wav(2.0)) == 2.0
    assert wav_seconds(b"RIFF\x00\x00\x00\x00WAVE") is None
    assert wav_seconds(wav(1.0)[:40]) == 0  # cut before its samples: no time, never negative
    assert media_tokens(AudioPart(wav(2.0), "wav"), "openai") == 20
    assert media_tokens(AudioPart(wav(2.0), "wav"), "gemini") == 64


def test_compressed_audio_is_timed_by_its_bytes() -> None:
    assert audio_seconds(AudioPart(bytes(16_000), "mp3")) == 2.0
    assert audio_seconds(AudioPart(bytes(96_000), "pcm16")) == 2.0


def test_a_message_with_an_image_costs_its_text_and_its_image() -> None:
    picture = ImagePart(png(1000, 1000))
    message = UserMessage(parts=[TextPart("what is this?"), picture])
    estimator = MessageTokenEstimator(vendor="anthropic")
    assert estimator.count_message(message) == OVERHEAD + 4 + 1334


def test_a_tool_message_with_an_image_costs_its_name_id_text_and_image() -> None:
    message = ToolMessage("c1", "look", parts=[TextPart("seen"), ImagePart(png(200, 200))])
    estimator = MessageTokenEstimator(vendor="anthropic")
    assert estimator.count_message(message) == OVERHEAD + 1 + 1 + 1 + 54


def test_plain_messages_cost_what_they_did() -> None:
    assert DEFAULT_ESTIMATOR.count_message(UserMessage("abcdefgh")) == OVERHEAD + 2
    assert DEFAULT_ESTIMATOR.count_message(ToolMessage("c1", "look", "abcd")) == OVERHEAD + 3


def test_an_unknown_vendor_is_a_configuration_error_naming_the_choices() -> None:
    with pytest.raises(ConfigurationError, match="'anthropic', 'openai', 'gemini', 'generic'"):
        MessageTokenEstimator(vendor="claude")  # type: ignore[arg-type]


def test_an_old_tool_message_with_an_image_is_trimmed_with_its_call() -> None:
    call = AssistantMessage("", (ToolCall("look", "{}", "c1"),))
    seen = ToolMessage("c1", "look", parts=[TextPart("a cat"), ImagePart(png(1000, 1000))])
    old = (UserMessage("show me"), call, seen, AssistantMessage("a cat"))
    now = (UserMessage("and now?"),)
    window = ContextWindow(max_tokens=1_000, reserved_output=100)
    assert window.fit((*old, *now)) == now  # the image alone is over the budget
    roomy = ContextWindow(max_tokens=3_000, reserved_output=100)
    assert roomy.fit((*old, *now)) == (*old, *now)

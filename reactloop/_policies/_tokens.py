"""Token estimation: a script-aware default, a protocol for exact tokenizers, a per-run ledger.

The default needs no tokenizer download and errs on the generous side for scripts that byte-pair
tokenizers split finely: about 4 characters per token for Latin text, 1.5 for CJK, Hangul and kana,
1 token per emoji and 3 characters per token for every other script. The `TokenLedger` estimates
each message once and keeps a running total, so budgeting a step costs O(new messages).

Images, PDFs and audio are counted by the vendor's published rules (`media_tokens`), with sizes
read from the file's own header (`reactloop._policies._media`); `MessageTokenEstimator(vendor=)`
picks the vendor, and the default, "generic", takes the largest of the three estimates.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Literal, Protocol, TypeAlias, assert_never, runtime_checkable

import orjson
from attrs import Factory, define, field, frozen

from reactloop._core import (
    AssistantMessage,
    AudioPart,
    BinaryPart,
    CachePoint,
    ContentPart,
    DocumentPart,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._errors import ConfigurationError
from reactloop._policies._media import Size, image_size, pdf_pages, wav_seconds
from reactloop._validate import checked_arguments, function, integer

# Weights in twelfths of a token per character, so mixed text sums exactly in integers.
_LATIN_WEIGHT = 3  # 1/4 token
_CJK_WEIGHT = 8  # 1/1.5 token
_EMOJI_WEIGHT = 12  # 1 token
_OTHER_WEIGHT = 4  # 1/3 token
_TWELFTHS = 12

_ZERO_WIDTH = re.compile("[\u200b-\u200f\ufe00-\ufe0f\U000e0000-\U000e007f]")
_LATIN = re.compile("[\x00-\u024f\u1e00-\u1eff\u2000-\u200a\u2010-\u206f]")
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U0001b000-\U0001b16f"
    "\U00020000-\U0003ffff]"
)
_EMOJI = re.compile("[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]")


def _count(pattern: re.Pattern[str], text: str) -> int:
    return pattern.subn("", text)[1]


def estimate_text_tokens(text: str) -> int:
    """The default, script-aware estimate of how many tokens `text` is (0 for empty text).

    Joiners and variation selectors inside emoji sequences count nothing; the sum is rounded up.
    """
    if text.isascii():
        return -(-len(text) // 4)
    zero = _count(_ZERO_WIDTH, text)
    latin = _count(_LATIN, text)
    cjk = _count(_CJK, text)
    emoji = _count(_EMOJI, text)
    other = len(text) - zero - latin - cjk - emoji
    twelfths = (
        latin * _LATIN_WEIGHT + cjk * _CJK_WEIGHT + emoji * _EMOJI_WEIGHT + other * _OTHER_WEIGHT
    )
    return -(-twelfths // _TWELFTHS)


Vendor: TypeAlias = Literal["anthropic", "openai", "gemini", "generic"]
"""Whose rules count images, PDFs and audio; "generic" takes the largest of the three."""
VENDORS: tuple[Vendor, ...] = ("anthropic", "openai", "gemini", "generic")

ANTHROPIC_IMAGE_MAX = 1_600
"""Anthropic: an image is about width * height / 750 tokens, scaled down past ~1,600."""
OPENAI_LOW, OPENAI_TILE = 85, 170
"""OpenAI: 85 tokens at detail "low"; else 85 + 170 per 512 px tile of the scaled image."""
GEMINI_TILE = 258
"""Gemini 2: 258 tokens for an image within 384 x 384 px, else 258 per 768 px tile; a page."""
GEMINI_3_IMAGE, GEMINI_3_PAGE = 1_120, 560
"""Gemini 3's defaults (media resolution unspecified: high for images, medium for PDFs): up to
1,120 tokens an image and 560 a PDF page; "gemini" counts the larger of its two generations."""
PDF_PAGE = {"anthropic": 3_000, "openai": 2_000, "gemini": max(GEMINI_TILE, GEMINI_3_PAGE)}
"""Tokens per PDF page (its text and an image of the page, at the high end of what is seen)."""
PDF_BYTES_PER_PAGE = 50_000
"""A PDF whose page objects cannot be counted (compressed): one page per 50 kB, at least one."""
URL_PAGES = 5
"""A PDF given by URL (its size unknown here) counts as 5 pages."""
AUDIO_PER_SECOND = {"anthropic": 32, "openai": 10, "gemini": 32}
"""Tokens per second of audio (OpenAI about 10, Gemini 32; Anthropic takes no audio: as Gemini)."""
AUDIO_BYTES_PER_SECOND = {"wav": 32_000, "pcm16": 48_000}
"""Bytes per second assumed when a header does not say: 16 kHz 16-bit WAV, OpenAI's 24 kHz
pcm16; compressed formats 8,000 (64 kbit/s, a generous guess: more seconds, more tokens)."""


def _anthropic_image(size: Size | None) -> int:
    if size is None:
        return ANTHROPIC_IMAGE_MAX
    return min(math.ceil(size[0] * size[1] / 750), ANTHROPIC_IMAGE_MAX)


def _openai_image(size: Size | None, detail: str | None) -> int:
    """Fit within 2048 x 2048, shortest side down to 768, then 85 + 170 per 512 px tile."""
    if detail == "low":
        return OPENAI_LOW
    width, height = size if size is not None else (768, 2048)  # unknown: the most tiles
    scale = min(1.0, 2048 / max(width, height), 768 / min(width, height))
    tiles = math.ceil(width * scale / 512) * math.ceil(height * scale / 512)
    return OPENAI_LOW + OPENAI_TILE * tiles


def _gemini_image(size: Size | None) -> int:
    """Gemini 2's tiles or Gemini 3's default budget, whichever is larger."""
    width, height = size if size is not None else (1536, 1536)
    if width <= 384 and height <= 384:
        return GEMINI_3_IMAGE
    return max(GEMINI_3_IMAGE, GEMINI_TILE * math.ceil(width / 768) * math.ceil(height / 768))


def _image_tokens(part: ImagePart, vendor: str) -> int:
    size = None if part.data is None else image_size(part.data)
    if vendor == "anthropic":
        return _anthropic_image(size)
    if vendor == "openai":
        return _openai_image(size, part.detail)
    return _gemini_image(size)


def _pdf_pages(part: DocumentPart) -> int:
    if part.data is None:
        return URL_PAGES
    return pdf_pages(part.data) or len(part.data) // PDF_BYTES_PER_PAGE + 1


def audio_seconds(part: AudioPart) -> float:
    """A sound's duration: a WAV header's byte rate, else bytes at the format's assumed rate."""
    seconds = wav_seconds(part.data) if part.format == "wav" else None
    if seconds is not None:
        return seconds
    return len(part.data) / AUDIO_BYTES_PER_SECOND.get(part.format, 8_000)


def media_tokens(part: BinaryPart, vendor: Vendor = "generic") -> int:
    """Tokens an image, a PDF or audio takes on `vendor`'s models (see the table in the module's
    constants); "generic" is the largest of the three vendors' estimates. A text document is
    counted as its text by the estimator, not here (0)."""
    if vendor == "generic":
        return max(media_tokens(part, one) for one in ("anthropic", "openai", "gemini"))
    if isinstance(part, ImagePart):
        return _image_tokens(part, vendor)
    if isinstance(part, AudioPart):
        return math.ceil(audio_seconds(part) * AUDIO_PER_SECOND[vendor])
    if part.text is not None:
        return 0
    return _pdf_pages(part) * PDF_PAGE[vendor]


@runtime_checkable
class TokenEstimator(Protocol):
    """Counts tokens; implement it to plug an exact tokenizer into the context budget."""

    def count_text(self, text: str) -> int:
        """Tokens of a bare text (instructions, tool schemas)."""
        ...

    def count_message(self, message: Message) -> int:
        """Tokens one message takes in a request, including its framing overhead."""
        ...


def _non_negative(_: object, attribute: object, value: int) -> None:
    name = getattr(attribute, "name", "value")
    integer(f"MessageTokenEstimator.{name}", value, minimum=0)


def _counter(_: object, __: object, value: Callable[[str], int]) -> None:
    function("MessageTokenEstimator.count", value, 1)


def _vendor(_: object, __: object, value: object) -> None:
    if value not in VENDORS:
        rule = f"one of {', '.join(map(repr, VENDORS))}"
        raise ConfigurationError.invalid("MessageTokenEstimator.vendor", value, rule)


@checked_arguments
@frozen
class MessageTokenEstimator:
    """Estimates messages from a text counter: texts, tool-call names, ids and arguments, results.

    `count_text` defaults to the script-aware heuristic; pass an exact tokenizer's counter (for
    example `lambda text: len(encoding.encode(text))`) to count exactly. `message_overhead` is
    added once per message (role and framing) and `tool_call_overhead` once per tool call.
    `vendor` says whose rules count images, PDFs and audio (`media_tokens`): "anthropic",
    "openai", "gemini", or "generic" (the default: the largest of the three).
    """

    count: Callable[[str], int] = field(default=estimate_text_tokens, validator=_counter)
    message_overhead: int = field(default=4, validator=_non_negative)
    tool_call_overhead: int = field(default=3, validator=_non_negative)
    vendor: Vendor = field(default="generic", validator=_vendor)

    def count_text(self, text: str) -> int:
        """Tokens of a bare text."""
        return self.count(text) if text else 0

    def count_message(self, message: Message) -> int:
        """Tokens of one message, framing included."""
        return self.message_overhead + self._content_tokens(message)

    def count_parts(self, parts: Sequence[ContentPart]) -> int:
        """Tokens of a message's parts: text as text, the rest by `media_tokens`."""
        total = 0
        for part in parts:
            if isinstance(part, TextPart):
                total += self.count_text(part.text)
            elif isinstance(part, DocumentPart) and part.text is not None:
                total += self.count_text(part.text) + self.count_text(part.title or "")
            elif not isinstance(part, CachePoint):  # a breakpoint marker: no tokens
                total += media_tokens(part, self.vendor)
        return total

    def _content_tokens(self, message: Message) -> int:
        count = self.count_text
        if isinstance(message, SystemMessage):
            return count(message.text)
        if isinstance(message, UserMessage | ToolMessage):
            said = count(message.text) if message.is_plain else self.count_parts(message.parts)
            if isinstance(message, UserMessage):
                return said
            return said + count(message.name) + count(message.call_id)
        if isinstance(message, AssistantMessage):
            calls = sum(
                self.tool_call_overhead + count(call.name) + count(call.arguments) + count(call.id)
                for call in message.tool_calls
            )
            thought = sum(count(part.readable) for part in message.reasoning)
            return count(message.text) + count(message.refusal or "") + calls + thought
        assert_never(message)


DEFAULT_ESTIMATOR = MessageTokenEstimator()
"""The script-aware heuristic with the default overheads."""


def tool_spec_tokens(estimator: TokenEstimator, tools: Sequence[ToolSpec]) -> int:
    """Tokens the offered tools' names, descriptions and JSON schemas take in a request."""
    return sum(
        estimator.count_text(tool.name)
        + estimator.count_text(tool.description)
        + estimator.count_text(orjson.dumps(tool.parameters).decode())
        for tool in tools
    )


@define
class TokenLedger:
    """Per-message costs of one run's transcript, aligned with the list last given to `sync`.

    Each message is estimated once. When the new list extends the last one (the same messages
    first, as a run's transcript grows), only the new messages are estimated and the running total
    grows by theirs; otherwise known message objects keep their cost and only unknown ones are
    estimated.
    """

    estimator: TokenEstimator = DEFAULT_ESTIMATOR
    _messages: tuple[Message, ...] = ()
    _costs: list[int] = Factory(list)
    _total: int = 0

    @property
    def total(self) -> int:
        """Tokens of all messages of the list last synced."""
        return self._total

    @property
    def costs(self) -> Sequence[int]:
        """Each message's tokens, aligned with the list last synced."""
        return self._costs

    def sync(self, messages: Sequence[Message]) -> int:
        """Align the ledger with `messages` and return their total tokens."""
        seen = self._messages
        current = tuple(messages)
        # Tuple equality compares identical items by identity, in C: a fast check for a run's
        # transcript, which only grows. An equal message replacing one costs the same anyway.
        if len(current) >= len(seen) and current[: len(seen)] == seen:
            costs = [self.estimator.count_message(message) for message in current[len(seen) :]]
            self._costs.extend(costs)
            self._total += sum(costs)
        else:
            self._rebuild(current)
        self._messages = current
        return self._total

    def _rebuild(self, messages: tuple[Message, ...]) -> None:
        # The old tuple still holds every known message, so their ids cannot be reused meanwhile.
        pairs = zip(self._messages, self._costs, strict=True)
        known = {id(message): cost for message, cost in pairs}
        costs: list[int] = []
        for message in messages:
            cost = known.get(id(message))
            costs.append(self.estimator.count_message(message) if cost is None else cost)
        self._costs = costs
        self._total = sum(costs)

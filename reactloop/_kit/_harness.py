"""What a provider's author supplies to the conformance checks: a `ProviderHarness` that builds
the model aimed at the kit's server, renders the kit's scripted answers and errors in the
provider's own wire format, and reads back what a request body carried.

The kit cannot render a third party's bytes, so every value here is neutral: a `ScriptedAnswer`
(text, reasoning with an opaque value, parallel tool calls, usage), a `ScriptedError` (a kind,
its HTTP status, the retry-after a rate limit names) and a `SentRequest` (what the kit checks
arrived: the texts, the tool results by call id, the opaque reasoning values, the images).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Protocol, cast, runtime_checkable

from attrs import field, frozen

from reactloop._core import Model, ToolCall, Usage
from reactloop._kit._server import WireReply, WireRequest
from reactloop._validate import boolean, checked_arguments, fail, instance, sequence_of, text

MEMBERS = ("name", "features", "build", "render_whole", "render_stream", "render_error",
           "read_request")  # fmt: skip
"""What a `ProviderHarness` has."""


def _calls(values: Iterable[ToolCall]) -> tuple[ToolCall, ...]:
    return tuple(values)


def _a_text(option: str, value: object) -> str:
    return text(option, value, blank=True)


def _a_pair(option: str, value: object) -> tuple[str, str]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        fail(option, value, "a (call id, result text) pair")
    return (text(f"{option}[0]", value[0], blank=True), text(f"{option}[1]", value[1], blank=True))


def _a_blob(option: str, value: object) -> bytes:
    return instance(option, value, bytes, "the bytes of an image")


def _texts(values: Iterable[str]) -> tuple[str, ...]:
    return sequence_of("SentRequest.texts", values, _a_text, "texts")


def _opaque(values: Iterable[str]) -> tuple[str, ...]:
    return sequence_of("SentRequest.reasoning", values, _a_text, "opaque values (texts)")


def _pairs(values: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return sequence_of("SentRequest.tool_results", values, _a_pair, "(call id, text) pairs")


def _blobs(values: Iterable[bytes]) -> tuple[bytes, ...]:
    return sequence_of("SentRequest.images", values, _a_blob, "image bytes")


@checked_arguments
@frozen
class Features:
    """What the provider does beyond text and tool calls; the checks of what it lacks are
    skipped (and say so). `reasoning`: answers carry reasoning with an opaque value (a signature,
    an encrypted blob) the next request must send back byte-identical; `reasoning_text`: that
    reasoning also has readable text (or a summary) the response keeps; `images`: a user
    message may hold an image; `cache_read_tokens`, `reasoning_tokens`: the usage reports them."""

    reasoning: bool = False
    reasoning_text: bool = False
    images: bool = False
    cache_read_tokens: bool = False
    reasoning_tokens: bool = False

    def __attrs_post_init__(self) -> None:
        for flag in FLAGS:
            boolean(f"Features.{flag}", getattr(self, flag))


FLAGS = ("reasoning", "reasoning_text", "images", "cache_read_tokens", "reasoning_tokens")


@frozen
class ScriptedReasoning:
    """Reasoning the answer starts with: readable `text` (render it where the format has a
    place for it) and the `opaque` value the vendor signs it with (a base64 text)."""

    text: str
    opaque: str


@frozen
class ScriptedAnswer:
    """An answer to render: reasoning first (when given), then the text, then the tool calls in
    order, and the usage the response reports (`Usage.input_tokens` is the whole input, cache
    reads included; `output_tokens` the whole output, reasoning included)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = field(default=(), converter=_calls)
    reasoning: ScriptedReasoning | None = None
    usage: Usage = Usage(input_tokens=10, output_tokens=5)


class ErrorKind(enum.Enum):
    """The failures a provider must raise as typed errors."""

    RATE_LIMITED = "rate_limited"  # 429, with a retry-after header
    AUTHENTICATION = "authentication"  # 401
    SERVER_ERROR = "server_error"  # 500
    UNAVAILABLE = "unavailable"  # 503
    CONTEXT_TOO_LONG = "context_too_long"  # the vendor's own "prompt too long" answer
    MALFORMED = "malformed"  # a 200 whose body is not a response of the protocol


@frozen
class ScriptedError:
    """An error to render: its kind, the HTTP status to answer with, and for a rate limit the
    seconds the reply's retry-after header names."""

    kind: ErrorKind
    status: int
    retry_after: int | None = None


@checked_arguments
@frozen
class SentRequest:
    """What a request body carried, as the harness reads it back: every text sent (instructions,
    user and assistant texts), the tool results as (call id, text) pairs in order, the opaque
    reasoning values sent back in order, and the bytes of every image sent."""

    texts: tuple[str, ...] = field(default=(), converter=_texts)
    tool_results: tuple[tuple[str, str], ...] = field(default=(), converter=_pairs)
    reasoning: tuple[str, ...] = field(default=(), converter=_opaque)
    images: tuple[bytes, ...] = field(default=(), converter=_blobs)


@runtime_checkable
class ProviderHarness(Protocol):
    """How the conformance checks drive one provider (write one per provider under test).

    - `name`: how failures name the provider.
    - `features`: what the provider supports beyond text and tool calls.
    - `build(base_url, idle_timeout=...)`: the model, aimed at the kit's server (`base_url` is
      `http://127.0.0.1:PORT`; add the path prefix your provider expects), giving up on a
      stream that stays silent for `idle_timeout` seconds. The kit closes it (`aclose`).
    - `render_whole(answer)` / `render_stream(answer)`: the answer as the server's reply to a
      plain call and to a streamed one (a stream as several chunks, one event each).
    - `render_error(error)`: the reply the provider's server sends for that failure.
    - `read_request(request)`: what a request the server received carried.
    """

    @property
    def name(self) -> str:
        """The provider's name in failure messages."""
        ...

    @property
    def features(self) -> Features:
        """What the provider supports beyond text and tool calls."""
        ...

    def build(self, base_url: str, *, idle_timeout: float) -> Model:
        """The model under test, aimed at `base_url`."""
        ...

    def render_whole(self, answer: ScriptedAnswer) -> WireReply:
        """The answer as the reply to a plain (not streamed) call."""
        ...

    def render_stream(self, answer: ScriptedAnswer) -> WireReply:
        """The answer as the reply to a streamed call, one event per chunk."""
        ...

    def render_error(self, error: ScriptedError) -> WireReply:
        """The reply the provider's server sends for this failure."""
        ...

    def read_request(self, request: WireRequest) -> SentRequest:
        """What this request carried."""
        ...


def check_harness(harness: object) -> ProviderHarness:
    """The harness, if it has every member a `ProviderHarness` has (a name, `Features`, the five
    methods); else a `ConfigurationError` naming what is missing, before any check runs."""
    rule = f"a ProviderHarness ({', '.join(MEMBERS)})"
    missing = [name for name in MEMBERS if getattr(harness, name, None) is None]
    methods = [name for name in MEMBERS[2:] if name not in missing]
    missing += [name for name in methods if not callable(getattr(harness, name))]
    if missing:
        fail("harness", harness, f"{rule}; it lacks {', '.join(missing)}")
    checked = cast(ProviderHarness, harness)
    text("harness.name", checked.name)
    instance("harness.features", checked.features, Features, "a Features")
    return checked

"""Hypothesis strategies, shared by every test module: messages, tool calls, conversations, and
cut points for byte streams (provider replay).

`conversations()` builds pair-complete conversations and keeps their structure (leading system
messages, history units, the current user message, the current turn's steps), so tests can state
exactly what trimming may drop. `message_lists()` builds arbitrary lists, broken pairs included.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import os
import string
from collections.abc import Callable, Iterator
from typing import Any, Literal, NotRequired, TypedDict, Union

import attrs
import orjson
from attrs import frozen
from hypothesis import settings
from hypothesis import strategies as st

from reactloop._cassettes._cassette import Cassette, Interaction, RecordedRequest
from reactloop._core._approvals import (
    Approve,
    DecisionScope,
    Deny,
    Edit,
    ExternalFailure,
    ExternalResult,
    HoldKind,
    PendingCall,
)
from reactloop._core._decisions import NextIteration, Proceed, Stop, StopReason
from reactloop._core._events import (
    AgentCall,
    HookFailed,
    ModelRetrying,
    ModelSwitched,
    NestedEvent,
    OutputStreamed,
    PhaseFinished,
    ReasoningStreamed,
    RunFailed,
    RunFinished,
    RunPaused,
    RunStarted,
    StepFinished,
    StepStarted,
    TextStreamed,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStreamed,
    ToolResultDiscarded,
)
from reactloop._core._messages import (
    AssistantMessage,
    AssistantPart,
    FinishReason,
    ForcedTool,
    Message,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from reactloop._core._parts import (
    AudioPart,
    ContentPart,
    DocumentPart,
    ImagePart,
    ReasoningPart,
    TextPart,
    text_of,
)
from reactloop._core._records import (
    CallStarted,
    InstructionsSaved,
    PhaseDataSaved,
    Record,
    ResponseSaved,
    ResultSaved,
    RunCreated,
    RunEnded,
    StepClosed,
)
from reactloop._core._repair import RepairKind, RepairNote
from reactloop._core._settings import (
    ModelSettings,
    ResponseFormat,
    ResponseFormatKind,
)
from reactloop._core._state import RunContext, RunResult, Step, ToolResult
from reactloop._errors import (
    ErrorCode,
    InvalidRequestError,
    ModelError,
    RateLimitedError,
    ReactLoopError,
    ToolTimeoutError,
)
from reactloop._stored_errors import LeaseLostError


def examples(wanted: int) -> int:
    """How many examples a property test runs: `wanted`, or the `mutation` profile's few when
    `make mutate` loads it (see tests/conftest.py; a test's own settings beat any profile)."""
    current = settings.default
    if current is not None and os.environ.get("REACTLOOP_HYPOTHESIS_PROFILE") == "mutation":
        return min(wanted, current.max_examples)
    return wanted


LATIN = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789.,;:!?'\"-éüßç"
CJK = "的一是不了人我在有他这中大来上国個日本語漢字한국어안녕하세요ひらがなカタカナ。、"
EMOJI = "😀🎉👍🔥🚀✨❤️🇫🇷👨‍👩‍👧"
OTHER = "Привет мир \u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 مرحبا नमस्ते שלום"
TOOL_NAMES = ("search", "get_weather", "read_file", "run_sql", "翻訳")

cjk_texts = st.text(alphabet=st.sampled_from(CJK), max_size=30)
"""Chinese, Japanese and Korean text."""

emoji_texts = st.text(alphabet=st.sampled_from(EMOJI), max_size=15)
"""Emoji, including the parts of joined and flag sequences."""

MIXED = LATIN + CJK + EMOJI + OTHER


def texts(max_size: int = 30) -> st.SearchStrategy[str]:
    """Text mixing Latin, CJK, Hangul, kana, emoji and other scripts, or of any characters.

    Build it once (module level): making strategies inside a draw is slow.
    """
    return st.one_of(
        st.text(alphabet=MIXED, max_size=max_size),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=max_size),
    )


short_texts = texts()
"""Up to 30 characters of mixed scripts, often empty."""

huge_texts = st.builds(
    lambda chunk, times: chunk * times, texts(12).filter(bool), st.integers(50, 600)
)
"""Large text (hundreds to thousands of characters), cheap to generate: a chunk repeated."""

tool_outputs = st.one_of(short_texts, short_texts, huge_texts, st.just(""))
"""A tool result's content: usually short, sometimes huge or empty."""

tool_names = st.sampled_from(TOOL_NAMES)

tool_arguments = st.dictionaries(st.sampled_from(["q", "city", "path", "sql", "n"]), texts(20))
"""A small JSON object of string arguments."""

call_ids = st.integers(0, 10**6).map(lambda n: f"call_{n}")

tool_calls = st.builds(ToolCall.of, tool_names, tool_arguments, call_ids)
"""A tool call with a random id (build calls in a conversation with `step` for unique ids)."""

system_messages = st.builds(SystemMessage, short_texts)
"""A system message (instructions or a summary kept in the history)."""

user_messages = st.builds(UserMessage, st.one_of(short_texts, short_texts, st.just(""), huge_texts))
"""A user message, sometimes empty, sometimes huge."""

CORPUS = (
    "",
    "ok",
    "Hello, how are you?",
    "What's the weather in Paris tomorrow?",
    "東京の天気を教えてください。",
    "今天北京的天气怎么样\uff1f",
    "서울 날씨 알려줘",
    "ひらがなとカタカナ",
    "🎉👍🔥",
    "👨‍👩‍👧 family",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "Résumé: 成功 🚀",
    "lorem ipsum dolor sit amet " * 300,
    "数据" * 1500,
    "😀" * 800,
    '{"rows": [' + '{"id": 1, "name": "東京"}, ' * 200 + "]}",
)
"""Ready-made contents: short, empty, CJK, Hangul, kana, emoji, other scripts and huge outputs."""

contents = st.one_of(st.sampled_from(CORPUS), st.sampled_from(CORPUS), short_texts)
"""Message contents for conversations: mostly from `CORPUS` (fast), sometimes random text."""

ARGUMENTS = ("{}", '{"q": "weather Paris"}', '{"city": "東京"}', '{"sql": "' + "x" * 900 + '"}')

_arguments = st.sampled_from(ARGUMENTS)
_counts = st.integers(0, 3)
_maybe_refusal = st.one_of(st.none(), st.none(), contents)


_opaque = st.one_of(st.none(), st.text(string.ascii_letters + string.digits + "+/=", max_size=60))
reasoning_parts = st.builds(
    ReasoningPart,
    texts(),
    st.lists(texts(), max_size=2).map(tuple),
    signature=_opaque,
    redacted=_opaque,
    encrypted=_opaque,
    id=st.one_of(st.none(), st.just("rs_1")),
    provider=st.sampled_from((None, "anthropic", "openai-responses")),
    model=st.sampled_from((None, "claude-opus-5", "gpt-5")),
)
"""Reasoning as providers decode it: readable text, summaries and opaque vendor values."""


def _with_reasoning(
    draw: st.DrawFn, text: str, calls: tuple[ToolCall, ...], refusal: str | None
) -> AssistantMessage:
    """An assistant message whose parts interleave reasoning with its text and calls (or, one
    time in two, the plain text-then-calls message)."""
    if not draw(st.booleans()):
        return AssistantMessage(text, calls, refusal)
    plain: list[AssistantPart] = [*([TextPart(text)] if text else []), *calls]
    parts: list[AssistantPart] = []
    for part in plain:
        parts.extend(draw(st.lists(reasoning_parts, max_size=1)))
        parts.append(part)
    parts.extend(draw(st.lists(reasoning_parts, max_size=1)))
    return AssistantMessage(parts=parts, refusal=refusal)


def draw_step(draw: st.DrawFn, ids: Iterator[str]) -> tuple[Message, ...]:
    """An assistant message (reasoning among its parts, at times) and the results of its
    (parallel, possibly failing) tool calls."""
    calls = tuple(
        ToolCall(draw(tool_names), draw(_arguments), next(ids)) for _ in range(draw(_counts))
    )
    refusal = None if calls else draw(_maybe_refusal)
    assistant = _with_reasoning(draw, draw(contents), calls, refusal)
    results = [
        ToolMessage(call.id, call.name, draw(contents), is_error=draw(st.booleans()))
        for call in draw(st.permutations(calls))
    ]
    return (assistant, *results)


def draw_turn(draw: st.DrawFn, ids: Iterator[str]) -> tuple[Message, ...]:
    """A past turn: a user message, maybe a system note, and the steps that answered it."""
    head: list[Message] = [UserMessage(draw(contents))]
    if draw(st.integers(0, 5)) == 0:
        head.append(SystemMessage(draw(contents)))
    steps = [draw_step(draw, ids) for _ in range(draw(_counts))]
    return (*head, *itertools.chain.from_iterable(steps))


@frozen
class Conversation:
    """A pair-complete conversation and its structure.

    `history` holds the units before the current user message (an optional preamble step, then
    turns); `steps` the current turn's steps, oldest first.
    """

    system: tuple[SystemMessage, ...]
    history: tuple[tuple[Message, ...], ...]
    current: UserMessage
    steps: tuple[tuple[Message, ...], ...]

    @property
    def messages(self) -> tuple[Message, ...]:
        """The conversation as one list, in order."""
        return (
            *self.system,
            *itertools.chain.from_iterable(self.history),
            self.current,
            *itertools.chain.from_iterable(self.steps),
        )


@st.composite
def conversations(draw: st.DrawFn, max_turns: int = 4, max_steps: int = 4) -> Conversation:
    """Several past turns, the current user message and its steps; every call has its result."""
    ids = (f"call_{n}" for n in itertools.count())
    system = tuple(SystemMessage(draw(contents)) for _ in range(draw(st.integers(0, 2))))
    history: list[tuple[Message, ...]] = []
    if draw(st.integers(0, 4)) == 0:
        history.append(draw_step(draw, ids))
    history.extend(draw_turn(draw, ids) for _ in range(draw(st.integers(0, max_turns))))
    current = UserMessage(draw(contents))
    steps = tuple(draw_step(draw, ids) for _ in range(draw(st.integers(0, max_steps))))
    return Conversation(system, tuple(history), current, steps)


_POOL_IDS = st.sampled_from(("a", "b", "c", "d"))

_assistants_with_pool_ids = st.builds(
    AssistantMessage,
    short_texts,
    st.lists(st.builds(ToolCall.of, tool_names, tool_arguments, _POOL_IDS), max_size=2).map(tuple),
)

messages = st.one_of(
    system_messages,
    user_messages,
    _assistants_with_pool_ids,
    st.builds(ToolMessage, _POOL_IDS, tool_names, short_texts, st.booleans()),
)
"""Any one message; tool-call ids come from a small pool, so lists pair up only by chance."""


def message_lists(max_size: int = 20) -> st.SearchStrategy[list[Message]]:
    """Arbitrary message lists: orphan results, unanswered and repeated calls are all likely."""
    return st.lists(messages, max_size=max_size)


@st.composite
def damaged_histories(draw: st.DrawFn) -> list[Message]:
    """A conversation with some messages lost: calls left without results, results without calls."""
    messages = list(draw(conversations()).messages)
    lost = draw(st.sets(st.integers(0, max(len(messages) - 1, 0)), max_size=4))
    return [message for index, message in enumerate(messages) if index not in lost]


# --- byte streams ---------------------------------------------------------------------------

SCALE = 1_000_000
WINDOW = 48


@frozen
class Cuts:
    """Where to cut a body, as fractions of its size (so one strategy fits every file)."""

    scattered: tuple[int, ...]
    window: int | None

    def points(self, size: int) -> list[int]:
        """Byte offsets: the scattered ones, or every byte of a short window."""
        if self.window is not None:
            start = 1 + self.window * size // SCALE
            return list(range(start, min(start + WINDOW, size)))
        return [1 + fraction * (size - 1) // SCALE for fraction in self.scattered]


_fractions = st.integers(0, SCALE - 1)
cuts = st.builds(Cuts, st.lists(_fractions, max_size=60).map(tuple), st.none()) | st.builds(
    Cuts, st.just(()), _fractions
)
"""Scattered cut points, or every byte of one window (to hit CRLF and UTF-8 seams)."""


def split_points(size: int) -> st.SearchStrategy[list[int]]:
    """Up to 80 byte offsets inside a body of `size` bytes (each split point between two bytes)."""
    return st.lists(st.integers(1, size - 1), max_size=80)


CALL_KINDS = ("ok", "raises", "unknown", "bad_arguments", "rejected", "stops_run")
"""How a scripted tool call fares: runs, raises, names no tool, has invalid arguments, is
rejected by a hook, or makes a hook stop the run."""


@frozen
class AgentScript:
    """A scripted run: the kinds of the calls of each step, each reply's (input, output) tokens,
    an optional tool-call cap, and whether a planning start phase spends tokens first."""

    steps: tuple[tuple[str, ...], ...]
    usages: tuple[tuple[int, int], ...]
    max_tool_calls: int | None
    plans: bool


_token_counts = st.tuples(st.integers(0, 500), st.integers(0, 200))


@st.composite
def agent_scripts(draw: st.DrawFn) -> AgentScript:
    """Scripted runs mixing every way a tool call can run or be refused."""
    steps = draw(
        st.lists(st.lists(st.sampled_from(CALL_KINDS), min_size=1, max_size=4), max_size=4)
    )
    plans = draw(st.booleans())
    replies = len(steps) + 1 + int(plans)
    usages = draw(st.lists(_token_counts, min_size=replies, max_size=replies))
    cap = draw(st.one_of(st.none(), st.integers(1, 6)))
    return AgentScript(tuple(map(tuple, steps)), tuple(usages), cap, plans)


# --- run store journals ------------------------------------------------------------------------

_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
_token_ints = st.integers(0, 10**9)
usages = st.builds(Usage, *[_token_ints] * 6)
_ids = st.text(alphabet="0123456789abcdef", min_size=1, max_size=32)
_maybe_texts = st.one_of(st.none(), short_texts)

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), _finite, short_texts),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(short_texts, inner, max_size=4)
    ),
    max_leaves=12,
)
"""JSON values as phase data holds them (tuples would come back as lists)."""

phase_data = st.dictionaries(short_texts, json_values, max_size=4)

tool_results = st.builds(
    ToolResult,
    call_ids,
    tool_names,
    tool_outputs,
    st.booleans(),
    st.one_of(st.none(), st.sampled_from(ErrorCode)),
    _finite,
)

repair_notes = st.builds(RepairNote, st.sampled_from(RepairKind), call_ids, tool_names, _counts)


@st.composite
def journals(draw: st.DrawFn) -> list[Record]:
    """A run's journal as a loop writes it: created, then steps (response, calls started, results,
    phase data, step end), maybe an end; every message, usage and repair kind appears."""
    ids = (f"call_{n}" for n in itertools.count())
    created = RunCreated(
        draw(_ids),
        draw(contents),
        draw(_maybe_texts),
        tuple(draw(st.lists(tool_names, max_size=3, unique=True))),
        draw(_finite),
        draw(conversations(max_turns=2, max_steps=1)).messages,
        tuple(draw(st.lists(repair_notes, max_size=2))),
        draw(st.none() | _ids),  # user and session ids keep the id rule (adr/0022)
        draw(st.none() | _ids),
    )
    records: list[Record] = [created]
    for index in range(1, draw(st.integers(0, 3)) + 1):
        records.extend(draw_journal_step(draw, index, ids))
    if draw(st.booleans()):
        records.append(draw(run_ends))
    return records


def draw_journal_step(draw: st.DrawFn, index: int, ids: Iterator[str]) -> list[Record]:
    """One step's records: the response, each call started and (maybe) its result, the end."""
    assistant, *_ = draw_step(draw, ids)
    assert isinstance(assistant, AssistantMessage)
    response = ModelResponse(
        assistant, draw(usages), draw(st.sampled_from(FinishReason)), draw(_maybe_texts)
    )
    records: list[Record] = [ResponseSaved(index, response, draw(usages))]
    for call in assistant.tool_calls:
        records.append(CallStarted(index, call.id, call.name))
        if draw(st.booleans()):
            result = draw(tool_results)
            records.append(
                ResultSaved(index, attrs.evolve(result, call_id=call.id, name=call.name))
            )
    if draw(st.booleans()):
        records.append(PhaseDataSaved(draw(phase_data)))
    if draw(st.booleans()):
        records.append(InstructionsSaved(draw(_maybe_texts)))
    key = draw(st.one_of(st.none(), st.tuples(tool_names, short_texts)))
    closed = StepClosed(
        index,
        draw(_finite),
        draw(_finite),
        draw(usages),
        tuple(draw(st.lists(tool_results, max_size=2))),
        draw(_counts),
        tuple(draw(st.lists(tool_names, max_size=2))),
        key,
        draw(_counts),
        draw(usages),
    )
    return [*records, closed]


run_ends = st.builds(
    RunEnded,
    st.sampled_from(StopReason),
    short_texts,
    _maybe_texts,
    usages,
    _finite,
    st.one_of(st.none(), st.sampled_from(ErrorCode)),
    _maybe_texts,
    _maybe_texts,
)


@frozen
class CutBatch:
    """A batch of tool calls cut off mid-way: each call is `fast` (done before the cut), `blocks`
    (running at the cut), or `idempotent` (running at the cut, safe to run again)."""

    kinds: tuple[str, ...]


cut_batches = st.builds(
    CutBatch,
    st.lists(st.sampled_from(("fast", "blocks", "idempotent")), min_size=1, max_size=4)
    .filter(lambda kinds: any(kind != "fast" for kind in kinds))
    .map(tuple),
)
"""Batches with at least one call still running when the run is cut off."""


# --- content parts ----------------------------------------------------------------------------

_IMAGE_HEADS = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF\x00\x00\x00\x00WEBP")
_SHARED_BYTES = (b"", b"\x00", bytes(range(256)), b"%PDF-1.4 same bytes everywhere")
_payloads = st.one_of(st.sampled_from(_SHARED_BYTES), st.binary(max_size=300))
"""Bytes of a part: often one of a few shared values (so a journal holds the same content more
than once, and a store must keep it once), else random bytes (NUL, invalid UTF-8, anything)."""

image_parts = st.one_of(
    st.builds(
        lambda head, tail, detail: ImagePart(head + tail, detail=detail),
        st.sampled_from(_IMAGE_HEADS),
        _payloads,
        st.sampled_from((None, "auto", "low", "high")),
    ),
    st.builds(lambda path: ImagePart(url=f"https://example.com/{path}.png"), st.integers(0, 99)),
)
document_parts = st.one_of(
    st.builds(
        lambda data, title: DocumentPart(data, title=title),
        _payloads,
        st.sampled_from((None, "report.pdf", "契約書 😀.pdf")),
    ),
    st.builds(lambda n: DocumentPart(url=f"https://example.com/{n}.pdf"), st.integers(0, 99)),
    st.builds(lambda text: DocumentPart(text=text), short_texts),
)
audio_parts = st.builds(AudioPart, _payloads, st.sampled_from(("wav", "mp3", "flac", "pcm16")))
content_parts: st.SearchStrategy[ContentPart] = st.one_of(
    st.builds(TextPart, short_texts), image_parts, document_parts, audio_parts
)
"""Any content part: text, an image (bytes of each type, or a URL), a document (bytes, URL or
text), audio."""

part_lists = st.lists(content_parts, min_size=1, max_size=5).map(tuple)
"""A message's or a tool result's parts: any mix of text and binary parts, in order."""

user_messages_with_parts = st.builds(lambda parts: UserMessage(parts=parts), part_lists)
tool_messages_with_parts = st.builds(
    lambda call_id, name, error, parts: ToolMessage(call_id, name, is_error=error, parts=parts),
    call_ids,
    tool_names,
    st.booleans(),
    part_lists,
)
messages_with_parts = st.one_of(user_messages_with_parts, tool_messages_with_parts)
"""A user's or a tool's message holding any mix of parts."""


@st.composite
def results_with_parts(draw: st.DrawFn, call_id: str, name: str) -> ToolResult:
    """A tool result of `call_id` holding parts, its content their text (as a tool's is)."""
    parts = draw(part_lists)
    return ToolResult(call_id, name, text_of(parts), draw(st.booleans()), parts=parts)


@st.composite
def journals_with_parts(draw: st.DrawFn) -> list[Record]:
    """A journal (`journals()`) whose run input, history and tool results hold content parts:
    the same bytes often appear in several records."""
    journal = draw(journals())
    created = journal[0]
    assert isinstance(created, RunCreated)
    parts = draw(part_lists)
    history = (*created.history, *draw(st.lists(messages_with_parts, max_size=3)))
    out: list[Record] = [
        attrs.evolve(created, input=text_of(parts), input_parts=parts, history=history)
    ]
    for record in journal[1:]:
        if isinstance(record, ResultSaved) and draw(st.booleans()):
            result = draw(results_with_parts(record.result.call_id, record.result.name))
            out.append(attrs.evolve(record, result=result))
        else:
            out.append(record)
    return out


# --- state tokens ------------------------------------------------------------------------------

_EDIT_CHARACTERS = "AZaz09_-.=+/ \n\x00é😀"
"""Replacement characters: base64url ones, separators, padding, other base64, blanks, non-ASCII."""


@frozen
class CharEdit:
    """One character of a token replaced (by a different one), deleted, or inserted before it."""

    at: int
    kind: str
    character: str

    def apply(self, token: str) -> str:
        """The token with this edit; always a different text."""
        index = self.at * len(token) // SCALE
        if self.kind == "delete":
            return token[:index] + token[index + 1 :]
        if self.kind == "insert":
            return token[:index] + self.character + token[index:]
        character = self.character if self.character != token[index] else "#"
        return token[:index] + character + token[index + 1 :]


char_edits = st.builds(
    CharEdit,
    _fractions,
    st.sampled_from(("replace", "replace", "delete", "insert")),
    st.sampled_from(_EDIT_CHARACTERS),
)
"""An edit of any one character of a token: mostly a replacement, else a deletion or insertion."""


@frozen
class ByteFlip:
    """Some bits of one byte of a token's encoding flipped (read back one byte per character)."""

    at: int
    mask: int

    def apply(self, token: str) -> str:
        """The token with this byte's bits flipped: a different text of the same length."""
        data = bytearray(token.encode("latin-1"))
        data[self.at * len(data) // SCALE] ^= self.mask
        return data.decode("latin-1")


byte_flips = st.builds(ByteFlip, _fractions, st.integers(1, 255))
"""Any bits of any one byte of a token flipped."""


@frozen
class JsonEdit:
    """A change to one place of a JSON document: a value replaced (by a different one), or a
    member of an object or an item of a list dropped."""

    at: int
    drop: bool
    value: object

    def apply(self, document: object) -> object:
        """A changed copy of `document` (never equal to it)."""
        places = list(_json_places(document, ()))
        path = places[self.at * len(places) // SCALE]
        return _replaced(document, path, self._change)

    def _change(self, old: object) -> object:
        if self.drop:
            return _DROP
        return self.value if self.value != old or type(self.value) is not type(old) else [old]


_DROP = object()
_Path = tuple[str | int, ...]


def _json_places(value: object, path: _Path) -> Iterator[_Path]:
    """Every place of a JSON value (itself included), outermost first."""
    if path:
        yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _json_places(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _json_places(inner, (*path, index))


def _replaced(value: object, path: _Path, change: Callable[[object], object]) -> object:
    """A copy of `value` with the place at `path` changed (dropped when `change` says so)."""
    if not path:
        return change(value)
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        inner = _replaced(value[head], rest, change)
        kept = {key: item for key, item in value.items() if key != head}
        return kept if inner is _DROP else {**value, head: inner}
    assert isinstance(value, list) and isinstance(head, int)
    inner = _replaced(value[head], rest, change)
    return [*value[:head], *([] if inner is _DROP else [inner]), *value[head + 1 :]]


json_edits = st.builds(JsonEdit, _fractions, st.booleans(), json_values)
"""A change to one value, member or item anywhere in a JSON document."""
# --- cassettes ---------------------------------------------------------------------------------

_tool_choices = st.one_of(st.none(), st.sampled_from(("auto", "none", "required", "tool:search")))
_offered = st.one_of(st.none(), st.lists(tool_names, max_size=3).map(tuple))
recorded_requests = st.builds(
    RecordedRequest, message_lists(6).map(tuple), _maybe_texts, _offered, _tool_choices
)


@st.composite
def _recorded_answers(draw: st.DrawFn) -> AssistantMessage:
    calls = tuple(draw(st.lists(tool_calls, max_size=2)))
    return _with_reasoning(draw, draw(contents), calls, draw(_maybe_refusal))


model_responses = st.builds(
    ModelResponse,
    _recorded_answers(),
    usages,
    st.sampled_from(FinishReason),
    _maybe_texts,
)


@st.composite
def cassettes(draw: st.DrawFn) -> Cassette:
    """Cassettes with any messages, requests (known or not), responses and tool results."""
    interactions = draw(
        st.lists(st.builds(Interaction, recorded_requests, model_responses), max_size=4)
    )
    results = {result.call_id: result for result in draw(st.lists(tool_results, max_size=4))}
    history = tuple(draw(message_lists(4)))
    return Cassette(draw(contents), tuple(interactions), history, results)


@st.composite
def cassettes_with_parts(draw: st.DrawFn) -> Cassette:
    """Cassettes (`cassettes()`) whose history, requests and tool results hold content parts,
    the same parts repeated in later requests as a run's transcript repeats them."""
    cassette = draw(cassettes())
    said = tuple(draw(st.lists(messages_with_parts, min_size=1, max_size=2)))
    interactions = tuple(
        attrs.evolve(i, request=attrs.evolve(i.request, messages=(*said, *i.request.messages)))
        for i in cassette.interactions
    )
    results = dict(cassette.tool_results)
    for call_id, result in list(results.items()):
        if draw(st.booleans()):
            results[call_id] = draw(results_with_parts(call_id, result.name))
    return attrs.evolve(
        cassette,
        interactions=interactions,
        history=(*said, *cassette.history),
        tool_results=results,
    )


# --- JSON texts, as a model streams a structured answer ----------------------------------------

_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "/": "\\/",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _u_escape(char: str, upper: bool) -> str:
    """`char` as \\uXXXX escapes: one, or a surrogate pair's two for a character past U+FFFF."""
    code = ord(char)
    units = [code]
    if code > 0xFFFF:
        code -= 0x10000
        units = [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
    form = "\\u{:04X}" if upper else "\\u{:04x}"
    return "".join(form.format(unit) for unit in units)


def _encoded(char: str, how: int) -> str:
    """One character of a JSON string: raw (0) when JSON allows it, a short escape (1) where one
    exists, else a \\u escape in lower (2) or upper (3) case hex."""
    if how == 0 and char not in '"\\' and char >= " ":
        return char
    if how == 1 and char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    return _u_escape(char, upper=how == 3)


_string_contents = st.one_of(
    texts(20), st.text(alphabet=MIXED + '"\\/\b\f\n\r\t\x00\x1f\x7f', max_size=20)
)


@st.composite
def json_string_texts(draw: st.DrawFn) -> str:
    """A JSON string literal with any mix of raw characters, short escapes and \\u escapes
    (surrogate pairs included) for its text."""
    text = draw(_string_contents)
    hows = draw(st.lists(st.integers(0, 3), min_size=len(text), max_size=len(text)))
    return '"' + "".join(map(_encoded, text, hows)) + '"'


_number_texts = st.one_of(
    st.from_regex(r"\A-?(0|[1-9][0-9]{0,6})(\.[0-9]{1,4})?([eE][+-]?[0-9]{1,2})?\Z"),
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
_json_scalar_texts = st.one_of(
    st.sampled_from(("true", "false", "null")), _number_texts, json_string_texts()
)
_gaps = st.sampled_from(("", "", "", " ", "\n  ", "\t", "\r\n", "  \n"))


def _spaced(draw: st.DrawFn, token: str) -> str:
    return draw(_gaps) + token + draw(_gaps)


def _arrays(items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    @st.composite
    def arrays(draw: st.DrawFn) -> str:
        parts = draw(st.lists(items, max_size=4))
        return "[" + ",".join(_spaced(draw, part) for part in parts) + draw(_gaps) + "]"

    return arrays()


def _objects(values: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    @st.composite
    def objects(draw: st.DrawFn) -> str:
        keys = draw(st.lists(json_string_texts(), max_size=4, unique_by=_decoded_key))
        members = [_spaced(draw, key) + ":" + _spaced(draw, draw(values)) for key in keys]
        return "{" + ",".join(members) + draw(_gaps) + "}"

    return objects()


def _decoded_key(key: str) -> str:
    decoded: str = orjson.loads(key)
    return decoded


json_texts = st.recursive(
    _json_scalar_texts, lambda inner: st.one_of(_arrays(inner), _objects(inner)), max_leaves=16
)
"""JSON documents as text: nested objects and arrays, strings with every kind of escape and
any script, numbers with signs, fractions and exponents, whitespace between any two tokens.
Keys are unique (once decoded), so the document means one value."""


def _padded(text: str, before: str, after: str) -> str:
    return before + text + after


json_documents = st.builds(_padded, json_texts, _gaps, _gaps)
"""Whole documents: a JSON text with whitespace before and after."""

_JSON_CHARACTERS = '{}[]",:0123456789-+.eEtrufalsn \n\\u/`x'


@st.composite
def damaged_json_texts(draw: st.DrawFn) -> str:
    """A JSON document with one character removed, replaced or added: mostly invalid, sometimes
    still valid (a parser must agree with orjson on which)."""
    text = draw(json_documents)
    at = draw(st.integers(0, len(text)))
    change = draw(st.sampled_from(("remove", "replace", "insert")))
    char = draw(st.sampled_from(_JSON_CHARACTERS))
    if change == "insert":
        return text[:at] + char + text[at:]
    return text[:at] + (char if change == "replace" else "") + text[at + 1 :]


_prose = st.text(alphabet="abcdefghijklmnopqrsuvwxyz ,.:!?\n`", max_size=40).filter(
    lambda text: "```" not in text
)
"""Lines of prose, with inline `code` but no code fence."""


@st.composite
def fenced_answers(draw: st.DrawFn) -> tuple[str, str]:
    """A prompted model's answer and the JSON document in it: bare, or in a code fence (its
    language tag any, its closing fence maybe missing), maybe after prose and before more."""
    document = draw(json_documents)
    if draw(st.booleans()):
        return document, document
    opening = "```" + draw(st.sampled_from(("json", "JSON", "", " json", "javascript")))
    before = draw(st.one_of(st.just(""), _prose.map(lambda text: f"Here{text}\n")))
    closing = draw(st.sampled_from(("\n```", "```", "\n```  ", "\n```\r\n", "")))
    after = draw(_prose.map(lambda text: f"\n{text}")) if closing else ""
    return f"{before}{opening}\n{document}{closing}{after}", document


_SCALAR_SCHEMAS: tuple[tuple[dict[str, object], st.SearchStrategy[object]], ...] = (
    ({"type": "string"}, st.text(max_size=5)),
    ({"type": "integer"}, st.integers(-5, 5)),
    ({"type": "number"}, st.floats(-10, 10, allow_nan=False)),
    ({"type": "boolean"}, st.booleans()),
    ({"enum": ["a", "b"]}, st.sampled_from(["a", "b"])),
    ({"type": "string", "minLength": 1, "format": "email"}, st.just("a@b.c")),
)


@st.composite
def generated_schemas(draw: st.DrawFn, depth: int = 2) -> dict[str, object]:
    """A JSON schema in the dialect the schema generator writes: closed objects with optional
    properties, nullable unions, arrays, fixed tuples, scalars with constraints."""
    kinds = ["scalar", "nullable", "array", "tuple", "object"] if depth else ["scalar", "nullable"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("scalar", "nullable"):
        scalar = dict(draw(st.sampled_from(_SCALAR_SCHEMAS))[0])
        return {"anyOf": [scalar, {"type": "null"}]} if kind == "nullable" else scalar
    if kind == "array":
        return {"type": "array", "items": draw(generated_schemas(depth - 1))}
    if kind == "tuple":
        members = draw(st.lists(generated_schemas(depth - 1), min_size=1, max_size=3))
        size = len(members)
        return {"type": "array", "prefixItems": members, "minItems": size, "maxItems": size}
    return draw(object_schemas(depth - 1))


@st.composite
def object_schemas(draw: st.DrawFn, depth: int = 2) -> dict[str, object]:
    """A closed object schema, some of its properties optional."""
    names = draw(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=4))
    properties = {name: draw(generated_schemas(depth)) for name in names}
    required = [name for name in names if draw(st.booleans())]
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def values_of(schema: dict[str, object]) -> st.SearchStrategy[object]:
    """Values valid under a schema `generated_schemas` made (optional properties may be left
    out)."""
    for scalar, values in _SCALAR_SCHEMAS:
        if schema == scalar:
            return values
    if "anyOf" in schema:
        members: list[dict[str, object]] = schema["anyOf"]  # type: ignore[assignment]
        return st.one_of([values_of(member) for member in members])
    if schema.get("type") == "null":
        return st.none()
    if "prefixItems" in schema:
        items: list[dict[str, object]] = schema["prefixItems"]  # type: ignore[assignment]
        return st.tuples(*(values_of(item) for item in items)).map(list)
    if "items" in schema:
        return st.lists(values_of(schema["items"]), max_size=3)  # type: ignore[arg-type]
    return _object_values(schema)


@st.composite
def _object_values(draw: st.DrawFn, schema: dict[str, object]) -> dict[str, object]:
    properties: dict[str, dict[str, object]] = schema["properties"]  # type: ignore[assignment]
    required: list[str] = schema["required"]  # type: ignore[assignment]
    return {
        name: draw(values_of(sub))
        for name, sub in properties.items()
        if name in required or draw(st.booleans())
    }


SELECTOR_WORDS = ("weather", "file", "sql", "email", "calendar", "invoice", "map", "flight", "news")
"""A small vocabulary, so that drawn tools and conversations share terms (and tie often)."""
_selector_texts = st.lists(st.sampled_from(SELECTOR_WORDS), max_size=4).map(" ".join)


@frozen
class SpecTool:
    """A tool that is only a spec: what a selector reads (name, description, parameters)."""

    name: str
    description: str = ""
    parameters: dict[str, object] = attrs.field(factory=lambda: {"type": "object"})
    timeout: float | None = None
    exclusive: bool = False

    @property
    def spec(self) -> ToolSpec:
        """The spec offered to the model."""
        return ToolSpec(self.name, self.description, self.parameters)

    def parse_arguments(self, arguments: str) -> dict[str, object]:
        """Any JSON object."""
        value: dict[str, object] = orjson.loads(arguments or "{}")
        return value

    async def invoke(self, arguments: dict[str, object], context: RunContext[object]) -> object:
        """Nothing to do: selectors never call it."""
        return "ok"


@st.composite
def selector_tools(draw: st.DrawFn, max_size: int = 12) -> tuple[SpecTool, ...]:
    """Tools with distinct names made of the vocabulary's words; descriptions repeat often."""
    count = draw(st.integers(0, max_size))
    return tuple(
        SpecTool(f"{draw(st.sampled_from(SELECTOR_WORDS))}_{i}", draw(_selector_texts))
        for i in range(count)
    )


selector_conversations = st.lists(
    st.one_of(
        st.builds(UserMessage, _selector_texts),
        st.builds(AssistantMessage, _selector_texts),
        st.builds(ToolMessage, call_ids, tool_names, _selector_texts),
    ),
    max_size=6,
)
"""Conversations about the vocabulary's words (any roles, in any order)."""


_ENUM_VALUE_SETS = (("a", "b"), (1, 2), (1.5, 2.5), (True, False), ("x", 1))
_LITERAL_CHOICES = st.sampled_from(("a", "b", "", 0, 7, -1, True, False, None))
_SCALAR_TYPES = (str, int, float, bool, type(None))
_class_ids = itertools.count()


def _enum_type(values: tuple[object, ...], base: object) -> object:
    members = {f"M{index}": value for index, value in enumerate(values)}
    kind = str if all(isinstance(v, str) for v in values) else int
    if base is enum.StrEnum and kind is str:
        return enum.StrEnum(f"S{next(_class_ids)}", members)
    if base is enum.IntEnum and all(type(v) is int for v in values):
        return enum.IntEnum(f"I{next(_class_ids)}", members)
    return enum.Enum(f"E{next(_class_ids)}", members)


@st.composite
def _class_type(draw: st.DrawFn, depth: int, tag: object = None) -> object:
    """An attrs class, dataclass or TypedDict whose fields are drawn types (some optional);
    with `tag`, a first field `kind: Literal[tag]` (a member of a tagged union)."""
    names = draw(st.lists(st.sampled_from("abcdef"), unique=True, max_size=3))
    fields: list[tuple[str, Any, bool]] = [
        (n, draw(output_types(depth)), draw(st.booleans())) for n in names
    ]
    if tag is not None:
        fields.insert(0, ("kind", Literal[tag], False))
    fields.sort(key=lambda field: field[2])  # required ones first
    name = f"C{next(_class_ids)}"
    maker = draw(st.sampled_from(("attrs", "dataclass", "typeddict")))
    if maker == "typeddict":
        hints = {n: (NotRequired[t] if optional else t) for n, t, optional in fields}
        return TypedDict(name, hints)  # type: ignore[operator]
    if maker == "dataclass":
        return dataclasses.make_dataclass(
            name, [(n, t, dataclasses.field(default=None)) if o else (n, t) for n, t, o in fields]
        )
    attributes = {
        n: attrs.field(type=t, default=None) if o else attrs.field(type=t) for n, t, o in fields
    }
    return attrs.make_class(name, attributes)


@st.composite
def output_types(draw: st.DrawFn, depth: int = 2) -> object:
    """A Python type the schema generator maps: scalars, Enum / StrEnum / IntEnum, Literal (of
    one or several JSON kinds, None too), Optional, unions, tagged unions of classes, lists,
    tuples, and attrs classes, dataclasses and TypedDicts nesting all of these."""
    kinds = ["scalar", "enum", "literal"]
    if depth:
        kinds += ["optional", "union", "list", "tuple", "fixed", "class", "tagged"]
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        return draw(st.sampled_from(_SCALAR_TYPES))
    if kind == "enum":
        values = draw(st.sampled_from(_ENUM_VALUE_SETS))
        return _enum_type(values, draw(st.sampled_from((enum.Enum, enum.StrEnum, enum.IntEnum))))
    if kind == "literal":
        return Literal[tuple(draw(st.lists(_LITERAL_CHOICES, min_size=1, max_size=4)))]
    return draw(_composite_type(kind, depth - 1))


@st.composite
def _composite_type(draw: st.DrawFn, kind: str, depth: int) -> object:
    inner = output_types(depth)
    if kind == "optional":
        return _union_of([draw(inner), None])
    if kind == "union":
        return _union_of(draw(st.lists(inner, min_size=2, max_size=3)))
    if kind == "list":
        return list[draw(inner)]  # type: ignore[misc]
    if kind == "tuple":
        return tuple[draw(inner), ...]  # type: ignore[misc]
    if kind == "fixed":
        return tuple[tuple(draw(st.lists(inner, min_size=1, max_size=3)))]  # type: ignore[misc]
    if kind == "class":
        return draw(_class_type(depth))
    return _union_of([draw(_class_type(depth, tag=tag)) for tag in ("cat", "dog")])


def _union_of(members: list[object]) -> object:
    """`typing.Union` of the members (what `X | Y | None` makes, built from a list)."""
    return Union.__getitem__(tuple(members))


# --- Temporal payloads (tests/temporal/test_payloads.py) ---------------------------------------

_specs = st.builds(
    ToolSpec,
    tool_names,
    short_texts,
    st.dictionaries(st.sampled_from(["type", "properties", "required"]), json_values, max_size=3),
)
_choices = st.one_of(st.sampled_from(ToolChoice), st.builds(ForcedTool, tool_names))
_settings = st.builds(
    ModelSettings,
    temperature=st.one_of(st.none(), st.floats(0, 2)),
    max_output_tokens=st.one_of(st.none(), st.integers(1, 10**6)),
    stop_sequences=st.lists(short_texts.filter(str.strip), max_size=2).map(tuple),
    seed=st.one_of(st.none(), st.integers(0, 2**31)),
    response_format=st.one_of(
        st.none(),
        st.builds(
            ResponseFormat,
            st.just(ResponseFormatKind.JSON_SCHEMA),
            st.just("answer"),
            st.just({"type": "object", "properties": {"n": {"type": "integer"}}}),
        ),
    ),
)
model_requests = st.builds(
    ModelRequest,
    st.lists(st.one_of(messages, messages_with_parts), max_size=6).map(tuple),
    _maybe_texts,
    st.lists(_specs, max_size=3).map(tuple),
    _choices,
    _settings,
)
"""Model requests with any messages (parts included), tool specs, tool choice and settings."""

model_deltas = st.one_of(
    st.builds(TextDelta, short_texts),
    st.builds(ReasoningDelta, short_texts),
    st.builds(
        ToolCallDelta, st.integers(0, 5), short_texts, st.one_of(st.none(), call_ids), _maybe_texts
    ),
)
_scopes = st.one_of(st.booleans(), st.sampled_from(DecisionScope))
decisions = st.one_of(
    st.builds(Approve, _scopes),
    st.builds(Deny, short_texts.filter(str.strip), _scopes),
    st.builds(Edit, st.dictionaries(st.sampled_from(["q", "n"]), json_values, max_size=2)),
    st.builds(ExternalResult, json_values),
    st.builds(ExternalFailure, short_texts.filter(str.strip)),
)
"""Every kind of decision on a held call."""


# --- streamed events ---------------------------------------------------------------------------

_texts = short_texts
react_errors = st.one_of(
    st.builds(ReactLoopError, _texts),
    st.builds(InvalidRequestError, _texts, status=st.one_of(st.none(), st.integers(400, 499))),
    st.builds(RateLimitedError, _texts, retry_after=st.one_of(st.none(), _finite)),
    st.builds(ToolTimeoutError, tool_names, st.floats(0.1, 600)),
    st.builds(
        LeaseLostError, _ids, _ids, st.one_of(st.none(), _ids), st.lists(call_ids).map(tuple)
    ),
)
"""reactloop errors of several classes, with their own fields."""
model_errors = st.one_of(
    st.builds(ModelError, _texts),
    st.builds(InvalidRequestError, _texts),
    st.builds(RateLimitedError, _texts, retry_after=st.one_of(st.none(), _finite)),
)
any_errors = st.one_of(react_errors, st.builds(ValueError, _texts), st.builds(KeyError, _texts))
"""What a hook may raise: reactloop's errors, or any other exception."""

phase_decisions = st.one_of(
    st.just(Proceed()),
    st.just(NextIteration()),
    st.builds(
        Stop, st.sampled_from(StopReason), _texts, json_values, st.one_of(st.none(), react_errors)
    ),
)
pending_calls = st.builds(
    PendingCall,
    call_ids,
    tool_names,
    tool_arguments,
    _texts,
    st.sampled_from(HoldKind),
    st.one_of(st.none(), _finite),
)
steps = st.builds(
    Step,
    st.integers(1, 50),
    st.one_of(st.none(), model_responses),
    st.lists(tool_results, max_size=3).map(tuple),
    usages,
    _finite,
    _finite,
    st.lists(_texts, max_size=2).map(tuple),
)
run_results = st.builds(
    RunResult,
    _ids,
    st.one_of(st.none(), _texts),
    st.sampled_from(StopReason),
    _texts,
    message_lists(4).map(tuple),
    st.lists(steps, max_size=2).map(tuple),
    usages,
    st.lists(tool_names, max_size=3).map(tuple),
    _finite,
    st.one_of(st.none(), react_errors),
    _maybe_texts,
    pending=st.lists(pending_calls, max_size=2).map(tuple),
    phase_data=phase_data,
)
_flat_events = st.one_of(
    st.builds(RunStarted, _ids, _texts),
    st.builds(StepStarted, st.integers(1, 50)),
    st.builds(PhaseFinished, _texts, phase_decisions),
    st.builds(TextStreamed, _texts),
    st.builds(ReasoningStreamed, _texts),
    st.builds(ToolCallStreamed, st.integers(0, 5), _texts, _maybe_texts, st.none() | call_ids),
    st.builds(ToolCallStarted, tool_calls),
    st.builds(ToolCallFinished, tool_results),
    st.builds(ToolResultDiscarded, tool_results, react_errors),
    st.builds(StepFinished, steps),
    st.builds(HookFailed, _texts, _texts, any_errors),
    st.builds(ModelRetrying, st.integers(1, 5), st.sampled_from(ErrorCode), _finite, _counts),
    st.builds(ModelSwitched, _texts, _texts, model_errors),
    st.builds(OutputStreamed, json_values),
    st.builds(RunPaused, st.lists(pending_calls, max_size=3).map(tuple)),
    st.builds(RunFailed, react_errors),
    st.builds(RunFinished, run_results),
)
events = st.one_of(
    _flat_events,
    st.builds(
        NestedEvent,
        st.lists(st.builds(AgentCall, tool_names, call_ids, _ids), min_size=1, max_size=3).map(
            tuple
        ),
        _flat_events,
    ),
)
"""Every kind of event a streamed run gives, a sub-run's (nested) included."""


# --- text that may not be valid Unicode --------------------------------------------------------

rough_texts = st.text(
    alphabet=st.one_of(
        st.sampled_from(MIXED), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
    ),
    max_size=12,
)
"""Text that may hold lone surrogates (what `os.fsdecode` gives for a non-UTF-8 file name)."""

_rough_calls = st.builds(ToolCall, rough_texts, rough_texts, call_ids)
_rough_reasoning = st.builds(
    ReasoningPart, rough_texts, st.lists(rough_texts, max_size=2).map(tuple)
)
_rough_assistants = st.one_of(
    st.builds(
        AssistantMessage,
        rough_texts,
        st.lists(_rough_calls, max_size=2).map(tuple),
        st.one_of(st.none(), rough_texts),
    ),
    st.builds(
        lambda parts: AssistantMessage(parts=parts),
        st.lists(st.one_of(_rough_reasoning, _rough_calls), max_size=3).map(tuple),
    ),
)
rough_records = st.one_of(
    _rough_assistants,
    st.builds(ModelResponse, _rough_assistants, usages, st.sampled_from(FinishReason), rough_texts),
    st.builds(UserMessage, rough_texts),
    st.builds(SystemMessage, rough_texts),
    st.builds(ToolMessage, call_ids, rough_texts, rough_texts, st.booleans()),
    st.builds(ToolResult, call_ids, rough_texts, rough_texts, st.booleans()),
)
"""Messages, responses and tool results whose text may not be valid Unicode."""

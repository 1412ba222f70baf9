"""The model's reasoning in the command line: streamed reasoning as one `thinking:` line, a
stored run's reasoning as one line per step, the trace page's data with the readable text only;
signatures, redacted data and encrypted content are never shown."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from attrs import define

from reactloop import ReActLoop
from reactloop._cli._lines import Kind, Line, Narrator, reasoning_text
from reactloop._cli._runs import export_document, stored_lines
from reactloop._cli._trace import (
    REASONING_CHARS,
    message_of,
    read_export,
    stored_trace,
    write_trace,
)
from reactloop._cli._views import STYLES, LiveView, _rich_modules
from reactloop._core._contracts import DeltaSink
from reactloop._core._events import (
    ReasoningStreamed,
    StepFinished,
    StepStarted,
    TextStreamed,
    ToolCallStarted,
)
from reactloop._core._messages import AssistantMessage, ModelResponse, ToolCall, Usage
from reactloop._core._parts import ReasoningPart, TextPart
from reactloop._core._records import StoredRun
from reactloop._core._state import Step
from reactloop._durable._stores import SqliteStore
from reactloop.models import FinishReason, ModelRequest, ReasoningDelta, TextDelta
from reactloop.testing import FakeTool, ScriptedModel

SIGNATURE = "EqQBCkgIARABGAIiQL-signature-SECRET"
REDACTED = "EmwKAhgBEgy3va3pzix-redacted-SECRET"
ENCRYPTED = "gAAAAABo-encrypted-SECRET"
SECRETS = (SIGNATURE, REDACTED, ENCRYPTED)

THOUGHT = ReasoningPart("I should add 2 and 3 with the tool.", signature=SIGNATURE)
HIDDEN = ReasoningPart(redacted=REDACTED)
SEALED = ReasoningPart(id="rs_1", encrypted=ENCRYPTED)
SUMMED = ReasoningPart(summary=("Adding the numbers.", "Then answering."), encrypted=ENCRYPTED)
SIGNED = ReasoningPart(signature=SIGNATURE)


def narrator() -> Narrator:
    return Narrator(lambda: 0.0)


def thinking_step(*parts: ReasoningPart) -> Step:
    call = ToolCall("add", '{"a": 2, "b": 3}', "c1")
    message = AssistantMessage(parts=[*parts, TextPart("Adding."), call], refusal=None)
    return Step(1, ModelResponse(message), (), Usage(3, 2), 0.0, 0.5)


def test_streamed_reasoning_becomes_one_thinking_line_before_the_models_text() -> None:
    story = narrator()
    assert story.watch(ReasoningStreamed("Let me ")) == []
    assert story.watch(ReasoningStreamed("add.")) == []
    assert story.status == "model thinking: Let me add."
    assert story.watch(TextStreamed("Adding.")) == [Line(Kind.THINKING, "thinking: Let me add.")]
    assert story.status == "model writing: Adding."
    lines = story.watch(ToolCallStarted(ToolCall("add", '{"a": 1}', "c1")))
    assert lines == [Line(Kind.MODEL, "model: Adding."), Line(Kind.CALL, "call add(a=1)")]


def test_reasoning_after_text_ends_the_text_line_first() -> None:
    story = narrator()
    story.watch(TextStreamed("First."))
    assert story.watch(ReasoningStreamed("Then think.")) == [Line(Kind.MODEL, "model: First.")]
    assert story.flush() == [Line(Kind.THINKING, "thinking: Then think.")]


@define
class Thinker:
    """Streams its reasoning, then its text and its call; then answers "5"."""

    calls: int = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        raise AssertionError("the command line streams")

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        self.calls += 1
        if self.calls > 1:
            await on_delta(TextDelta("5"))
            return ModelResponse(AssistantMessage("5"))
        for piece in ("I should add ", "2 and 3 ", "with the tool."):
            await on_delta(ReasoningDelta(piece))
        await on_delta(TextDelta("Adding."))
        call = ToolCall("add", '{"a": 2, "b": 3}', "c1")
        message = AssistantMessage(parts=[THOUGHT, TextPart("Adding."), call], refusal=None)
        return ModelResponse(message, finish_reason=FinishReason.TOOL_CALLS)


@pytest.mark.anyio
async def test_a_streamed_runs_lines_show_its_reasoning_once_in_its_place() -> None:
    story, lines = narrator(), []
    loop = ReActLoop(Thinker(), tools=[FakeTool("add")])
    async with loop.stream("2+3?") as events:
        async for event in events:
            lines += story.watch(event)
    kinds = [line.kind for line in lines][1:6]
    assert kinds == [Kind.STEP, Kind.THINKING, Kind.MODEL, Kind.CALL, Kind.OK]
    assert lines[2].text == "thinking: I should add 2 and 3 with the tool."
    assert [line.kind for line in lines].count(Kind.THINKING) == 1


def test_the_live_view_dims_the_reasoning_and_styles_every_kind() -> None:
    assert set(STYLES) == set(Kind)
    rich = _rich_modules()
    assert rich is not None
    view, out = LiveView(rich), io.StringIO()
    view.console = rich["console"].Console(file=out, force_terminal=True, color_system="standard")
    view.show([Line(Kind.THINKING, "thinking: I should add.")])
    assert out.getvalue() == "\x1b[2;3mthinking: I should add.\x1b[0m\n"  # dim, italic


def test_a_long_thought_is_cut_to_one_short_line() -> None:
    story = narrator()
    story.watch(ReasoningStreamed("word\n" * 100))
    [line] = story.flush()
    assert line.text == "thinking: " + ("word " * 16)[:79] + "…"


def test_reasoning_that_streamed_nothing_is_shown_when_its_step_ends() -> None:
    story = narrator()
    story.watch(StepStarted(1))
    lines = story.watch(StepFinished(thinking_step(HIDDEN)))
    assert lines[0] == Line(Kind.THINKING, "thinking (redacted)")
    assert lines[1].kind is Kind.USAGE and len(lines) == 2


def test_reasoning_that_streamed_is_not_shown_again_when_its_step_ends() -> None:
    story = narrator()
    story.watch(StepStarted(1))
    story.watch(ReasoningStreamed("I should add 2 and 3 with the tool."))
    lines = story.watch(StepFinished(thinking_step(THOUGHT)))
    assert [line.kind for line in lines] == [Kind.THINKING, Kind.USAGE]
    story.watch(StepStarted(2))
    assert story.watch(StepFinished(thinking_step(THOUGHT)))[0].text.startswith("thinking: I ")


@pytest.mark.parametrize(
    ("parts", "shown"),
    [
        ((THOUGHT,), "thinking: I should add 2 and 3 with the tool."),
        ((HIDDEN,), "thinking (redacted)"),
        ((SEALED,), "reasoning (encrypted)"),
        ((SIGNED,), "thinking (signature only)"),
        ((SUMMED,), "thinking: Adding the numbers. Then answering."),
        ((THOUGHT, HIDDEN), "thinking: I should add 2 and 3 with the tool. (+redacted)"),
        ((HIDDEN, SEALED), "thinking (encrypted, redacted)"),
    ],
)
def test_a_messages_reasoning_is_one_line_without_its_opaque_values(
    parts: tuple[ReasoningPart, ...], shown: str
) -> None:
    assert reasoning_text(parts) == shown


def test_the_page_gets_the_readable_reasoning_cut_and_only_a_summary_of_the_rest() -> None:
    long = ReasoningPart("x" * (REASONING_CHARS + 10), signature=SIGNATURE)
    message = AssistantMessage(parts=[long, HIDDEN, SEALED, TextPart("Hi.")], refusal=None)
    shown = message_of(message)
    assert shown["text"] == "Hi."
    assert [thought["summary"] for thought in shown["reasoning"]][1:] == [
        "thinking (redacted)",
        "reasoning (encrypted)",
    ]
    assert len(shown["reasoning"][0]["text"]) == REASONING_CHARS
    assert shown["reasoning"][0]["text"].endswith("…")
    assert [thought["text"] for thought in shown["reasoning"]][1:] == ["", ""]
    assert not any(secret in str(shown) for secret in SECRETS)


async def reasoned_run(store: SqliteStore) -> StoredRun:
    """A run whose tool-call response carries three kinds of reasoning, journaled in `store`,
    as the store loads it back."""
    call = ToolCall("add", '{"a": 2, "b": 3}', "c1")
    message = AssistantMessage(parts=[THOUGHT, HIDDEN, SEALED, call], refusal=None)
    first = ModelResponse(message, finish_reason=FinishReason.TOOL_CALLS)
    loop = ReActLoop(ScriptedModel([first, "5"]), tools=[FakeTool("add")], store=store)
    async with loop:
        result = await loop.run("2+3?")
    return await store.load(result.run_id)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "runs.db")
    yield opened
    await opened.aclose()


@pytest.mark.anyio
async def test_a_stored_runs_view_shows_each_steps_reasoning_on_one_line(
    store: SqliteStore,
) -> None:
    lines = stored_lines(await reasoned_run(store))
    thinking = [line.text for line in lines if line.kind is Kind.THINKING]
    assert thinking == ["thinking: I should add 2 and 3 with the tool. (+encrypted, redacted)"]
    assert not any(secret in line.text for line in lines for secret in SECRETS)


@pytest.mark.anyio
async def test_an_exported_runs_trace_page_holds_no_opaque_reasoning_value(
    store: SqliteStore,
) -> None:
    document = export_document(await reasoned_run(store))
    assert SIGNATURE.encode() in document  # the export is the journal: it keeps them
    page = write_trace(stored_trace(read_export(document, "run.json")))
    assert "I should add 2 and 3 with the tool." in page
    assert "thinking (redacted)" in page and "reasoning (encrypted)" in page
    assert not any(secret in page for secret in SECRETS)

"""The command line's lines and views: what each event says, the status line, and which view a
terminal gets (live with rich, plain without it or on a pipe)."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop._cli import _views
from reactloop._cli._inert import inert, inert_json
from reactloop._cli._lines import Kind, Line, Narrator, result_lines, shorten, shown_arguments
from reactloop._cli._views import INSTALL_HINT, LiveView, PlainView, choose_view
from reactloop._core._approvals import HoldKind, PendingCall
from reactloop._core._decisions import StopReason
from reactloop._core._events import (
    AgentCall,
    HookFailed,
    ModelRetrying,
    ModelSwitched,
    NestedEvent,
    RunFailed,
    RunPaused,
    StepStarted,
    TextStreamed,
    ToolCallStarted,
)
from reactloop._core._messages import AssistantMessage, ToolCall, ToolMessage, Usage, UserMessage
from reactloop._core._state import RunResult
from reactloop._errors import ErrorCode, ProviderUnavailableError, ReactLoopError


def narrator() -> Narrator:
    return Narrator(lambda: 0.0)


def test_streamed_text_becomes_one_model_line_before_the_next_event() -> None:
    story = narrator()
    assert story.watch(TextStreamed("Thinking ")) == []
    assert story.watch(TextStreamed("hard.")) == []
    assert story.status == "model writing: Thinking hard."
    lines = story.watch(ToolCallStarted(ToolCall("add", '{"a": 1}', "c1")))
    assert lines == [Line(Kind.MODEL, "model: Thinking hard."), Line(Kind.CALL, "call add(a=1)")]
    assert story.status == "running add"


def test_the_status_keeps_its_note_across_events() -> None:
    story = narrator()
    story.note = "interrupting · "
    story.watch(StepStarted(2))
    assert story.status == "interrupting · step 2: waiting for the model"


@pytest.mark.parametrize(
    ("event", "text"),
    [
        (
            ModelRetrying(2, ErrorCode.RATE_LIMITED, 1.5, 3),
            "model call 2 failed (rate_limited), retry in 1.5 s",
        ),
        (
            HookFailed("Audit", "after_run", ValueError("boom")),
            "hook Audit failed at after_run: boom",
        ),
        (RunFailed(ReactLoopError("it broke")), "run failed [unknown]: it broke"),
        (
            ModelSwitched("anthropic:claude", "openai:gpt-4o", ProviderUnavailableError("busy")),
            "model anthropic:claude failed (provider_unavailable), switching to openai:gpt-4o",
        ),
    ],
)
def test_other_events_say_what_happened(event: Any, text: str) -> None:
    assert [line.text for line in narrator().watch(event)] == [text]


def test_a_sub_runs_events_are_indented_and_named_by_their_agent_path() -> None:
    story = narrator()
    path = (AgentCall("planner", "c1", "r2"), AgentCall("researcher", "c2", "r3"))
    event = NestedEvent(path, ToolCallStarted(ToolCall("search", '{"q": "x"}', "c3")))
    assert story.watch(event) == [Line(Kind.CALL, '    [planner > researcher] call search(q="x")')]
    assert story.status == "agent planner > researcher: running search"
    assert story.watch(NestedEvent(path[:1], TextStreamed("thinking"))) == []
    assert story.flush() == []  # a sub-run's text is its own, not the parent's


def test_a_pause_lists_each_held_call() -> None:
    held = PendingCall("c9", "transfer", {"amount": 7}, "needs approval", HoldKind.APPROVAL)
    lines = narrator().watch(RunPaused((held,)))
    assert lines == [
        Line(Kind.NOTE, "held: transfer(amount=7) — needs approval [approval, call c9]")
    ]


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [('{"a": 1, "b": "x"}', 'a=1, b="x"'), ("[1, 2]", "[1, 2]"), ("{not json", "{not json")],
)
def test_arguments_are_shown_as_names_and_json_values(arguments: str, shown: str) -> None:
    assert shown_arguments(arguments) == shown


def test_long_text_is_cut_to_one_line() -> None:
    assert shorten("a\nb   c") == "a b c"
    assert shorten("x" * 500, 10) == "x" * 9 + "…"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_the_plain_view() -> None:
    assert isinstance(choose_view(False, io.StringIO()), PlainView)


def test_a_terminal_gets_the_live_view_unless_plain_is_asked() -> None:
    assert isinstance(choose_view(False, Tty()), LiveView)
    assert isinstance(choose_view(True, Tty()), PlainView)


def test_without_rich_a_terminal_gets_plain_lines_and_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_views, "RICH_MODULES", ("no_such_rich_module",))
    out = Tty()
    view = choose_view(False, out)
    assert isinstance(view, PlainView)
    assert capsys.readouterr().err == f"reactloop: {INSTALL_HINT}\n"
    assert "pip install 'reactloop[cli]'" in INSTALL_HINT
    view.show([Line(Kind.STEP, "step 1")])
    assert out.getvalue() == "step 1\n"


UNSAFE = [
    *map(chr, range(0x00, 0x20)),  # C0, ESC among them
    "\x7f",  # DEL
    *map(chr, range(0x80, 0xA0)),  # C1: CSI \x9b, OSC \x9d, ...
    *map(chr, range(0x202A, 0x202F)),  # bidi embeddings and overrides
    *map(chr, range(0x2066, 0x206A)),  # bidi isolates
    "\u200e",
    "\u200f",
    "\u061c",  # bidi marks
    "\u2028",
    "\u2029",  # line and paragraph separators
    "\ud800",
    "\udcff",  # lone surrogates (os.fsdecode of a non-UTF-8 name)
]


def acting(text: str, *, lines: bool = False) -> set[str]:
    """The characters of `text` a terminal would act on (newline and tab allowed on lines)."""
    allowed = {"\n", "\t"} if lines else set()
    return {char for char in text if char in UNSAFE and char not in allowed}


@pytest.mark.parametrize("char", UNSAFE, ids=lambda char: f"U+{ord(char):04X}")
def test_every_character_a_terminal_acts_on_is_shown_as_a_visible_escape(char: str) -> None:
    shown = inert(f"a{char}b")
    assert not acting(shown)
    assert shown.startswith("a\\") and shown.endswith("b") and len(shown) > 3


@given(st.text())
def test_no_text_gets_through_with_a_character_a_terminal_acts_on(text: str) -> None:
    assert not acting(inert(text))
    assert not acting(inert(text, lines=True), lines=True)
    assert inert(text, lines=True).count("\n") == text.count("\n")
    assert "\n" not in inert(text)


@pytest.mark.parametrize(
    "text", ["plain", "Grüße, 東京, مرحبا, שלום", "👨‍👩‍👧 family", "[bold]not markup[/bold]"]
)
def test_text_a_terminal_only_prints_is_left_as_it_is(text: str) -> None:
    assert inert(text) == text


def test_escapes_are_readable() -> None:
    assert inert("\x1b]0;title\x07") == "\\x1b]0;title\\x07"
    assert inert("a\r\nb\tc") == "a\\r\\nb\\tc"
    assert inert("a\r\nb\tc", lines=True) == "a\\r\nb\tc"
    assert inert("\u202eevil") == "\\u202eevil"


@given(
    st.recursive(
        st.none() | st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)
    )
)
def test_an_export_is_the_same_json_with_nothing_a_terminal_acts_on(value: object) -> None:
    raw = orjson.dumps({"value": value}, option=orjson.OPT_INDENT_2)
    safe = inert_json(raw)
    assert orjson.loads(safe) == {"value": value}
    assert not acting(safe.decode(), lines=True)


def test_the_plain_view_writes_lines_inert_keeping_an_answers_lines() -> None:
    out = io.StringIO()
    PlainView(out).show(
        [
            Line(Kind.MODEL, "model: \x1b[2Jhi\nthere"),
            Line(Kind.ANSWER, "answer (completed): one\x1b]52;c;eA==\x07\ntwo", multiline=True),
        ]
    )
    assert out.getvalue() == (
        "model: \\x1b[2Jhi\\nthere\nanswer (completed): one\\x1b]52;c;eA==\\x07\ntwo\n"
    )


def result(output: str | None, messages: tuple[Any, ...]) -> RunResult[str]:
    return RunResult("r1", output, StopReason.INTERRUPTED, "", messages, (), Usage(), (), 0.0)


def test_an_interrupted_run_shows_the_text_it_kept_never_none() -> None:
    said = (UserMessage("q"), AssistantMessage("Half an ans"), ToolMessage("c1", "add", "5"))
    assert result_lines(result(None, said), 0.0)[0] == Line(
        Kind.ANSWER, "answer (interrupted), partial: Half an ans", multiline=True
    )
    assert result_lines(result(None, (UserMessage("q"),)), 0.0)[0] == Line(
        Kind.ANSWER, "answer (interrupted): none (the run kept no text)"
    )
    assert result_lines(result("Stopped.", said), 0.0)[0].text == "answer (interrupted): Stopped."

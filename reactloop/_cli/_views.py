"""Where the lines go: `PlainView` prints one line per event (pipes, CI: no colours, no cursor
movement); `LiveView` (the `cli` extra, rich) styles them and keeps a live status line below.
Both write every line inert (`inert`), and the live view hands rich `Text`, never markup: a
run's text can neither act on the terminal nor style itself."""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Sequence
from types import TracebackType
from typing import IO, Any, Protocol

from reactloop._cli._inert import inert
from reactloop._cli._lines import Kind, Line

INSTALL_HINT = "the live view needs rich: pip install 'reactloop[cli]' (showing plain lines)"

RICH_MODULES = ("console", "live", "spinner", "text")

STYLES = {
    Kind.RUN: "bold",
    Kind.STEP: "bold cyan",
    Kind.MODEL: "white",
    Kind.CALL: "yellow",
    Kind.OK: "green",
    Kind.ERROR: "bold red",
    Kind.NOTE: "magenta",
    Kind.THINKING: "dim italic",
    Kind.ANSWER: "bold green",
    Kind.USAGE: "dim",
}


class View(Protocol):
    """A run's view: lines as they come, and what the run does now (shown where it can be)."""

    def show(self, lines: Sequence[Line]) -> None:
        """Print these lines."""

    def status(self, text: str) -> None:
        """The run's current activity."""

    def __enter__(self) -> View: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class PlainView:
    """One plain line per event; the status is not shown (it would need cursor movement)."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout

    def show(self, lines: Sequence[Line]) -> None:
        """Print each line inert, flushed (a pipe's reader sees it at once)."""
        for line in lines:
            print(inert(line.text, lines=line.multiline), file=self.out, flush=True)

    def status(self, text: str) -> None:
        """Nothing: a plain view has no status line."""

    def __enter__(self) -> PlainView:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class _Status:
    """The status line's content, drawn at each refresh: the activity and the time so far."""

    def __init__(self, spinner: Any, text_type: Any) -> None:
        self.spinner = spinner
        self.text_type = text_type
        self.text = "starting"
        self.started = time.monotonic()

    def __rich__(self) -> Any:
        shown = f"{inert(self.text)} · {time.monotonic() - self.started:.1f} s"
        self.spinner.update(text=self.text_type(shown))  # Text: a str would be read as markup
        return self.spinner


class LiveView:
    """Styled lines above a live status line (a spinner, the activity, the run's time)."""

    def __init__(self, rich: Any) -> None:
        self._rich = rich
        self.console = rich["console"].Console(highlight=False)
        self._status = _Status(rich["spinner"].Spinner("dots"), rich["text"].Text)
        self._live = rich["live"].Live(
            self._status, console=self.console, refresh_per_second=10, transient=True
        )

    def show(self, lines: Sequence[Line]) -> None:
        """Print the lines above the status line, each styled by its kind."""
        for line in lines:
            shown = inert(line.text, lines=line.multiline)
            text = self._rich["text"].Text(shown, style=STYLES[line.kind])
            self.console.print(text)

    def status(self, text: str) -> None:
        """Show `text` in the status line."""
        self._status.text = text

    def __enter__(self) -> LiveView:
        self._live.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._live.__exit__(kind, error, tb)


def _rich_modules() -> dict[str, Any] | None:
    """rich's modules the live view uses, or None when the `cli` extra is not installed."""
    try:
        return {name: importlib.import_module(f"rich.{name}") for name in RICH_MODULES}
    except ImportError:
        return None


def choose_view(plain: bool, out: IO[str] | None = None) -> View:
    """The live view on a terminal with rich installed; plain lines otherwise (with a note on
    standard error when only rich is missing)."""
    stream = out or sys.stdout
    if plain or not stream.isatty():
        return PlainView(stream)
    rich = _rich_modules()
    if rich is None:
        print(f"reactloop: {INSTALL_HINT}", file=sys.stderr)
        return PlainView(stream)
    return LiveView(rich)

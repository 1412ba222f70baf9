"""The command line's live view in a real pseudo-terminal (pexpect), read as a terminal shows
it (pyte): styled lines and a status line, and Ctrl-C: once interrupts, twice cancels."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pexpect
import pyte
import pytest

from reactloop._core._records import RunCreated, RunParked
from reactloop._durable._stores import SqliteStore
from reactloop._errors import ErrorCode
from tests.helpers.cli_model import FakeModel, Turn, fake_model

PROJECT = Path(__file__).resolve().parents[2]
COLUMNS, ROWS = 120, 40
WAIT = 30.0
"""Longest a test waits for the screen to show something (a slow machine, not a real clock)."""


class Terminal:
    """A command running in a pseudo-terminal, and the screen it draws."""

    def __init__(self, *args: str) -> None:
        env = {name: value for name, value in os.environ.items() if name != "NO_COLOR"}
        env.update(TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(ROWS))
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "reactloop", *args],
            cwd=str(PROJECT),
            env=env,
            dimensions=(ROWS, COLUMNS),
            encoding="utf-8",
        )
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.Stream(self.screen)
        self.raw = ""

    @property
    def text(self) -> str:
        """The screen's lines, right-trimmed."""
        return "\n".join(line.rstrip() for line in self.screen.display)

    def _read(self) -> bool:
        """Feed what the child wrote to the screen; False once it has exited."""
        try:
            data = self.child.read_nonblocking(65536, timeout=0.1)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw += data
        self.stream.feed(data)
        return True

    def wait_for(self, shown: Callable[[str], bool] | str) -> str:
        """Read until the screen shows `shown` (text, or a test on the screen's text)."""
        check = shown if callable(shown) else (lambda screen: shown in screen)
        deadline = time.monotonic() + WAIT
        while not check(self.text):
            alive = self._read()
            if not alive and not check(self.text):
                raise AssertionError(f"the command ended first; the screen:\n{self.text}")
            if time.monotonic() > deadline:
                raise AssertionError(f"not shown in {WAIT} s; the screen:\n{self.text}")
        return self.text

    def finish(self) -> int:
        """Read to the end; the exit code."""
        deadline = time.monotonic() + WAIT
        while self._read():
            assert time.monotonic() < deadline, self.text
        self.child.close()
        status = self.child.exitstatus
        assert status is not None, f"killed by a signal; the screen:\n{self.text}"
        return status


@pytest.fixture(params=["asyncio", "trio"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def held() -> Iterator[FakeModel]:
    """A model that thinks until the test releases it, then calls a tool, then answers."""
    turns = [Turn("Adding.", (("add", {"a": 2, "b": 3}),), hold=True), Turn("It is 5.")]
    with fake_model(turns) as fake:
        yield fake


def live_run(fake: FakeModel, backend: str) -> Terminal:
    return Terminal(
        "--backend",
        backend,
        "run",
        "--model",
        fake.model,
        "--tools",
        "tests.helpers.cli_tools:add",
        "2+3?",
    )


def test_the_live_view_shows_steps_calls_results_and_usage(held: FakeModel, backend: str) -> None:
    terminal = live_run(held, backend)
    terminal.wait_for(
        lambda screen: re.search(r"step 1: waiting for the model · \d+\.\d s", screen) is not None
    )
    held.release.set()
    screen = terminal.wait_for("answer (completed): It is 5.")
    assert terminal.finish() == 0
    screen = terminal.text
    assert "step 1" in screen and "call add(a=2, b=3)" in screen
    assert "done add (" in screen and "-> 5" in screen
    assert "2 steps, 22 in + 14 out = 36 tokens" in screen
    assert "waiting for the model" not in screen  # the status line goes when the run ends
    assert "\x1b[" in terminal.raw  # styled: a terminal's view, not the plain one


def test_one_ctrl_c_cuts_a_model_call_short(held: FakeModel, backend: str) -> None:
    terminal = live_run(held, backend)
    terminal.wait_for("waiting for the model")
    assert held.wait_for_requests(1)
    terminal.child.sendintr()
    terminal.wait_for("interrupt: the run stops now")
    terminal.wait_for("answer (interrupted)")  # the model was never released: the call was cut
    assert terminal.finish() == 0
    assert "call add(" not in terminal.text  # its answer never came: no tool ran
    assert len(held.requests) == 1  # no second model call


def test_one_ctrl_c_during_the_final_answer_shows_its_partial_text(backend: str) -> None:
    final = "It is 5, because two and three make five."
    turns = [Turn("Adding.", (("add", {"a": 2, "b": 3}),)), Turn(final, shown=9)]
    with fake_model(turns) as fake:
        terminal = live_run(fake, backend)
        terminal.wait_for(f"model writing: {final[:9]}")
        terminal.child.sendintr()  # the rest of the answer is held until the release
        screen = terminal.wait_for(f"answer (interrupted): {final[:9].rstrip()}")
        assert not fake.release.is_set()
        assert terminal.finish() == 0
    assert final[9:] not in screen and "-> 5" in screen
    assert len(fake.requests) == 2


def test_a_second_ctrl_c_cancels_the_run(backend: str) -> None:
    with fake_model([Turn("Waiting.", (("wait", {}),)), Turn("Done.")]) as fake:
        agent = ["--model", fake.model, "--tools", "tests.helpers.cli_tools:wait"]
        terminal = Terminal("--backend", backend, "run", *agent, "wait")
        terminal.wait_for("running wait")
        terminal.child.sendintr()  # a tool running finishes first: this one never does
        terminal.wait_for("interrupt: the run stops now")
        assert "answer (" not in terminal.text
        terminal.child.sendintr()
        terminal.wait_for("cancelled: the run was cancelled at once")
        assert terminal.finish() == 130
    assert "answer (" not in terminal.text
    assert "Traceback" not in terminal.raw


def test_the_demo_in_a_terminal(backend: str) -> None:
    terminal = Terminal("--backend", backend, "demo", "--pace", "0")
    terminal.wait_for("answer (completed): Tokyo is sunny")
    assert terminal.finish() == 0
    assert terminal.text.count("call get_weather(") == 2


def test_the_demo_can_be_paced_to_watch_it_and_press_ctrl_c(backend: str) -> None:
    terminal = Terminal("--backend", backend, "demo", "--pace", "1000")  # held until Ctrl-C
    terminal.wait_for(lambda screen: re.search(r"run \w+: Paris or Tokyo", screen) is not None)
    terminal.wait_for(lambda screen: re.search(r"starting · \d+\.\d s", screen) is not None)
    assert terminal.child.isalive()  # the scripted model thinks: the view can be watched
    terminal.child.sendintr()
    terminal.wait_for("interrupt: the run stops")
    terminal.child.sendintr()  # in case the first waits out the pause: this one cancels
    terminal.wait_for(lambda screen: "answer (interrupted)" in screen or "cancelled:" in screen)
    assert terminal.finish() in (0, 130)
    assert "Traceback" not in terminal.raw


def test_an_interrupted_run_resumes_to_its_end(held: FakeModel, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    agent = ["--model", held.model, "--tools", "tests.helpers.cli_tools:add", "--store", store]
    terminal = Terminal("run", *agent, "2+3?")
    terminal.wait_for("waiting for the model")
    assert held.wait_for_requests(1)
    terminal.child.sendintr()
    terminal.wait_for("interrupt: the run stops")  # the model call is cut: no release needed
    run_id = terminal.wait_for("answer (interrupted)").split()[1].rstrip(":")
    assert terminal.finish() == 0
    resumed = Terminal("runs", "resume", run_id, *agent)
    resumed.wait_for("answer (completed): It is 5.")
    assert resumed.finish() == 0
    assert len(held.requests) == 2


def test_a_paused_run_asks_for_each_decision_at_the_prompt(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    turns = [Turn("", (("transfer", {"amount": 7}),)), Turn("Moved.")]
    with fake_model(turns) as fake:
        agent = [
            "--model",
            fake.model,
            "--tools",
            "tests.helpers.cli_tools:transfer",
            "--store",
            store,
        ]
        terminal = Terminal("run", *agent, "move 7")
        run_id = terminal.wait_for("answer (awaiting_approval)").split()[1].rstrip(":")
        assert terminal.finish() == 0
        resumed = Terminal("runs", "resume", run_id, *agent)
        resumed.wait_for("approve transfer(amount=7)?")
        resumed.child.sendline("y")
        resumed.wait_for("answer (completed): Moved.")
        assert resumed.finish() == 0
    assert "done transfer (" in resumed.text and "-> moved 7" in resumed.text


HOSTILE = (
    "A\x1b]0;PWNED\x07B\x1b[2J\x1b[HC\rOVERWRITE\x1b]52;c;cHduZWQ=\x07D\u202eE\x9b1mF"
    " [bold red]G[/] [/oops]"
)
"""Run text that titles the window, clears the screen, overwrites the line, writes the
clipboard (OSC 52), reverses the text (bidi) and uses a C1 CSI, then rich markup."""

SHOWN = (
    r"A\x1b]0;PWNED\x07B",
    r"\x1b[2J\x1b[HC\rOVERWRITE",
    r"\x1b]52;c;cHduZWQ=\x07D\u202eE\x9b1mF",
    "[bold red]G[/] [/oops]",
)
"""How a terminal shows it once inert: every escape visible, the markup as written."""


def assert_inert(terminal: Terminal, first_line: str) -> None:
    """The run's text had no effect on the terminal and shows escaped."""
    flat = "".join(terminal.screen.display)
    assert terminal.screen.title == ""  # no window title set
    assert terminal.text.lstrip().startswith(first_line)  # not cleared, not overwritten
    assert all(shown in flat for shown in SHOWN), terminal.text
    for acting in ("\x07", "\x1b]", "\x9b", "\u202e"):
        assert acting not in terminal.raw
    assert "Traceback" not in terminal.raw


@pytest.fixture
def hostile() -> Iterator[FakeModel]:
    """A model whose text, tool calls (arguments, a tool name) and answer are hostile."""
    calls = (("shout", {"text": HOSTILE}), ("nope\x1b[2J", {"x": HOSTILE}))
    with fake_model([Turn(HOSTILE, calls), Turn(HOSTILE)]) as fake:
        yield fake


def test_a_runs_text_cannot_act_on_the_terminal_in_the_live_view(
    hostile: FakeModel, backend: str
) -> None:
    terminal = Terminal(
        "--backend",
        backend,
        "run",
        "--model",
        hostile.model,
        "--tools",
        "tests.helpers.cli_tools:shout",
        HOSTILE,
    )
    terminal.wait_for(r"answer (completed): A\x1b]0;PWNED")
    assert terminal.finish() == 0
    assert_inert(terminal, "run ")
    assert r"call nope\x1b[2J(" in terminal.text


def test_runs_show_and_runs_list_print_a_runs_text_inert(
    hostile: FakeModel, tmp_path: Path
) -> None:
    path = tmp_path / "runs.db"
    store = f"sqlite:///{path}"
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "reactloop",
            "run",
            "--model",
            hostile.model,
            "--store",
            store,
            "--tools",
            "tests.helpers.cli_tools:shout",
            HOSTILE,
        ],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert "\x1b" not in ran.stdout and r"\x1b]0;PWNED" in ran.stdout  # the plain lines too
    run_id = ran.stdout.split()[1].rstrip(":")
    shown = Terminal("runs", "show", run_id, "--store", store)
    shown.wait_for("answer (completed)")
    assert shown.finish() == 0
    assert_inert(shown, f"run {run_id} (finished)")

    async def parked() -> None:
        sqlite = SqliteStore(path, worker_id="w1")
        await sqlite.create_run(RunCreated("r2", "hi", None, (), 0.0, user_id="u", session_id="s"))
        await sqlite.append("r2", [RunParked(HOSTILE, 0.0, ErrorCode.CONFIGURATION, None, "w1")])
        await sqlite.aclose()

    anyio.run(parked)
    with contextlib.closing(sqlite3.connect(path)) as db, db:  # ids as an older version kept them
        db.execute(
            "UPDATE runs SET user_id = ?, session_id = ? WHERE run_id = 'r2'", (HOSTILE,) * 2
        )
    listed = Terminal("runs", "list", "--store", store)
    listed.wait_for(f"{run_id}  finished")
    assert listed.finish() == 0
    assert_inert(listed, "r2  parked")

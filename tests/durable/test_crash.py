"""Crash tests: a durable run on SQLite and on PostgreSQL is SIGKILLed (mid-batch after two of
three tools, during a model call, between two phases) and resumed in a fresh process; no
finished work is repeated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from reactloop._core._repair import INTERRUPTED_RESULT
from tests.helpers.postgres_server import expire

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 60.0


@pytest.fixture
def url(shared_store_url: str) -> str:
    """The store the child processes share (see `shared_store_url`)."""
    return shared_store_url


def child(folder: Path, how: str, stage: str, backend: str, url: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "tests.helpers.durable_child",
        str(folder),
        how,
        stage,
        backend,
        url,
    ]
    return subprocess.Popen(command, cwd=ROOT)


def wait_for(ready: Path, process: subprocess.Popen[bytes]) -> None:
    """Poll (a real process: no fake clock reaches it) until `ready` exists."""
    deadline = time.monotonic() + DEADLINE
    while not ready.exists():
        assert process.poll() is None, "the child ended before reaching the crash point"
        assert time.monotonic() < deadline, "the child never reached the crash point"
        time.sleep(0.02)


def calls(folder: Path, name: str) -> list[str]:
    path = folder / name
    return path.read_text().split() if path.exists() else []


def crash_and_resume(folder: Path, how: str, backend: str, url: str) -> dict[str, object]:
    running = child(folder, how, "run", backend, url)
    wait_for(folder / "marker", running)
    os.kill(running.pid, signal.SIGKILL)
    running.wait()
    if url.startswith("postgresql:"):  # the dead worker's lease: time passes, it runs out
        expire(url, (folder / "run_id").read_text(), owner="dead")
    resumed = child(folder, how, "resume", backend, url)
    assert resumed.wait(timeout=DEADLINE) == 0
    summary: dict[str, object] = orjson.loads((folder / "result.json").read_bytes())
    return summary


def assert_complete(summary: dict[str, object]) -> None:
    assert summary["output"] == "finished" and summary["stop"] == "completed"
    made, answered = summary["calls"], summary["answered"]
    assert isinstance(made, list) and isinstance(answered, list)
    assert sorted(made) == sorted(answered) and len(made) == 3


BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])


@pytest.mark.slow
@BACKENDS
def test_killed_mid_batch_after_two_of_three_tools(tmp_path: Path, backend: str, url: str) -> None:
    summary = crash_and_resume(tmp_path, "batch", backend, url)
    assert_complete(summary)
    assert calls(tmp_path, "t1.calls") == calls(tmp_path, "t2.calls") == ["run"]
    assert calls(tmp_path, "t3.calls") == ["run"]  # started once, never run again
    contents = summary["contents"]
    assert isinstance(contents, dict) and contents["c3"] == INTERRUPTED_RESULT
    assert calls(tmp_path, "model.resume") == ["after", "tools"]


@pytest.mark.slow
@BACKENDS
def test_killed_during_a_model_call(tmp_path: Path, backend: str, url: str) -> None:
    summary = crash_and_resume(tmp_path, "model", backend, url)
    assert_complete(summary)
    for name in ("t1", "t2", "t3"):
        assert calls(tmp_path, f"{name}.calls") == ["run"]
    assert calls(tmp_path, "model.resume") == ["after", "tools"]  # the first response is saved


@pytest.mark.slow
@BACKENDS
def test_killed_between_two_phases(tmp_path: Path, backend: str, url: str) -> None:
    summary = crash_and_resume(tmp_path, "phases", backend, url)
    assert_complete(summary)
    for name in ("t1", "t2", "t3"):
        assert calls(tmp_path, f"{name}.calls") == ["resume"]
    assert calls(tmp_path, "model.run") == ["first"]
    assert calls(tmp_path, "model.resume") == ["after", "tools"]

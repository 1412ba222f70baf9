"""A paused run is resumed in another process (a restart between the pause and the decision) on
SQLite and PostgreSQL: the approved calls run once, there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 60.0


def child(folder: Path, stage: str, backend: str, store_url: str) -> None:
    command = [
        sys.executable,
        "-m",
        "tests.helpers.approval_child",
        str(folder),
        stage,
        backend,
        store_url,
    ]
    subprocess.run(command, cwd=ROOT, check=True, timeout=DEADLINE)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_paused_run_is_approved_after_a_restart(
    tmp_path: Path, backend: str, shared_store_url: str
) -> None:
    url = shared_store_url
    child(tmp_path, "run", backend, url)
    paused = orjson.loads((tmp_path / "paused.json").read_bytes())
    assert paused["stop"] == "awaiting_approval" and len(paused["pending"]) == 2
    assert not (tmp_path / "pay.calls").exists()
    child(tmp_path, "resume", backend, url)
    done = orjson.loads((tmp_path / "done.json").read_bytes())
    assert done == {"output": "done", "stop": "completed"}
    assert sorted((tmp_path / "pay.calls").read_text().split()) == ["1", "2"]

"""A run cancelled during an MCP call returns promptly whatever the server does: a real stdio
server (tests/helpers/mcp_stubborn_server.py) that ignores `notifications/cancelled`, outlives its
closed stdin and ignores SIGTERM is killed at once, and no process is left behind."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from reactloop import ReActLoop
from reactloop._core._events import ToolCallStarted
from reactloop._tools._mcp._servers import MCPServerStdio
from reactloop.testing import ScriptedModel, call
from tests.helpers.mcp_helpers import ROOT, alive, children, eventually

pytestmark = pytest.mark.anyio

HANG_GUARD = 30.0
"""Longest the test waits for the cancelled run (a slow machine, not a timing check)."""
MARKER = "mcp_stubborn_server"


def stubborn(notes: Path) -> MCPServerStdio:
    return MCPServerStdio(sys.executable, ["-m", "tests.helpers." + MARKER, str(notes)], cwd=ROOT)


def noted(notes: Path) -> list[str]:
    return notes.read_text().split() if notes.exists() else []


async def test_a_run_cancelled_during_a_call_its_server_ignores_returns_at_once(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    loop = ReActLoop(ScriptedModel([call("stall"), "never"]), tools=[stubborn(notes)])
    with anyio.fail_after(HANG_GUARD), anyio.CancelScope() as outside:
        async with loop.stream("go") as events:
            async for event in events:
                if isinstance(event, ToolCallStarted):
                    await eventually(lambda: noted(notes) == ["stall"])  # the server has it
                    pids = children(MARKER)
                    outside.cancel()
    assert outside.cancelled_caught
    assert len(pids) == 1 and not any(alive(pid) for pid in pids)
    assert not children(MARKER)
    assert noted(notes) == ["stall"]  # killed at once: no polite SIGTERM, no grace waited out

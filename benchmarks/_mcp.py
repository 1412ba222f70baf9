"""(l) One MCP tool call through reactloop against the same call made directly with the SDK.

Both sides talk to the same process of the stdio server (benchmarks/_mcp_server.py), over the same
session, opened once before measuring: two processes of one server differ by more than the
difference measured (scheduling, caches), so the SDK's side calls the session reactloop opened.
That session's read stream passes reactloop's exit watcher, so the watcher's cost is in both
columns. reactloop's side is a run whose scripted model calls the server's `echo` `mcp_calls`
times (each call validated against the server's schema, invoked, its result converted and
rendered, one loop step each); the SDK's side is `ClientSession.call_tool` that many times. The
figure is the time per call; the second column is the SDK's. Needs the `mcp` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp import ClientSession

from benchmarks._fakes import FINAL_TEXT, InstantModel, Script
from benchmarks._figures import Figure, Measure, Target
from benchmarks._rig import HANDWRITTEN, REACTLOOP
from benchmarks._scenarios import Sizes, _figure, _measure, _timed
from reactloop import ReActLoop
from reactloop._tools._mcp._servers import MCPServerStdio

ROOT = Path(__file__).resolve().parent.parent
COMMAND = (sys.executable, "-m", "benchmarks._mcp_server")


def _session_of(server: MCPServerStdio) -> ClientSession:
    """The SDK session of the server's open connection (private: measuring only)."""
    connection = server.open_source
    live = getattr(connection, "_live", None)
    assert live is not None, "the server is not running"
    session: ClientSession = live.session
    return session


async def mcp_calls(sizes: Sizes) -> list[Figure]:
    """(l) Per-call time of `mcp_calls` sequential MCP tool calls: reactloop, then the SDK."""
    count = sizes.mcp_calls
    server = MCPServerStdio(COMMAND[0], list(COMMAND[1:]), cwd=ROOT)
    loop = ReActLoop(InstantModel(Script(count)), tools=[server], max_iterations=count + 1)

    async def ours() -> None:
        result = await loop.run("go")
        assert result.output == FINAL_TEXT, result.error

    async with server:
        session = _session_of(server)

        async def theirs() -> None:
            for n in range(count):
                answer = await session.call_tool("echo", {"n": n})
                assert not answer.is_error

        contenders = {REACTLOOP: _timed(ours, count), HANDWRITTEN: _timed(theirs, count)}
        samples = await _measure(sizes, contenders)
    metric = f"{count} MCP tool calls over stdio: per call"
    return [_figure("l", metric, "us", samples, target=Target(1.1, Measure.RATIO),
                    note="second column: the SDK's ClientSession.call_tool")]  # fmt: skip

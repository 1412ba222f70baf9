"""Real MCP servers for the toolset tests: the test server (tests/helpers/mcp_server.py) over HTTP
or stdio, `mcp-server-time` over stdio, and /proc checks that no server process is left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from reactloop._core._contracts import Tool
from reactloop._tools._mcp._servers import MCPServerHTTP, MCPServerStdio
from reactloop._tools._mcp._tools import MCPTool

ROOT = Path(__file__).resolve().parents[2]
TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")


@contextmanager
def http_server() -> Iterator[str]:
    """Serve tests/helpers/mcp_server.py over streamable HTTP in a subprocess; yield its URL."""
    command = [sys.executable, "-m", "tests.helpers.mcp_server", "http"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def stdio_server(**options: Any) -> MCPServerStdio:
    """tests/helpers/mcp_server.py as a stdio server."""
    return MCPServerStdio(
        sys.executable, ["-m", "tests.helpers.mcp_server", "stdio"], cwd=ROOT, **options
    )


def time_server(**options: Any) -> MCPServerStdio:
    """The `mcp-server-time` package's server, answering in UTC."""
    return MCPServerStdio(TIME_SERVER, ["--local-timezone", "UTC"], **options)


def http(url: str, **options: Any) -> MCPServerHTTP:
    """An `MCPServerHTTP` for the test server at `url`."""
    return MCPServerHTTP(url, **options)


def by_remote(tools: Sequence[Tool]) -> dict[str, MCPTool]:
    """Listed MCP tools by the server's own names."""
    found = {tool.remote_name: tool for tool in tools if isinstance(tool, MCPTool)}
    assert len(found) == len(tools)
    return found


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (read from /proc, no psutil)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def children(marker: str) -> set[int]:
    """Live child processes of this process whose command line contains `marker`."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and marker in command and alive(int(entry.name)):
            found.add(int(entry.name))
    return found


async def eventually(check: Any, seconds: float = 10.0) -> None:
    """Wait until `check()` (sync or async) is true: a real server answers in its own time."""
    with anyio.fail_after(seconds):
        for _ in range(100_000):
            outcome = check()
            if not isinstance(outcome, bool):
                outcome = await outcome
            if outcome:
                return
            await anyio.sleep(0.02)

"""An MCP stdio server that will not be stopped politely, for the tests of cancelling an MCP call.

Its `stall` tool ignores `notifications/cancelled` (so the server outlives its closed stdin while
the call lasts) and notes in the file named by its first argument that it started; the process
ignores SIGTERM, noting each one it gets in that file too. Only SIGKILL stops it.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer("reactloop-stubborn", log_level="WARNING")
NOTES = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("stubborn-notes")


def note(what: str) -> None:
    """Append one line to the notes file (the test reads it)."""
    with NOTES.open("a") as notes:
        notes.write(what + "\n")


@server.tool(structured_output=False)
async def stall() -> str:
    """Never answers, whatever the client says (a cancellation does not reach it)."""
    note("stall")
    with anyio.CancelScope(shield=True):
        await anyio.sleep_forever()
    return "unreachable"


def on_term(number: int, frame: FrameType | None) -> None:
    note("SIGTERM")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_term)
    server.run("stdio")

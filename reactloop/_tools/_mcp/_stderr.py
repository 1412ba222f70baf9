"""Where a stdio MCP server's own log lines (its stderr) go. By default each line becomes a record
of the `reactloop.mcp` logger at INFO, quiet unless the application shows such records, so that a
server's chatter never lands in the user's terminal; `MCPServerStdio(stderr="inherit")` passes
this process's stderr on instead (the server writes there itself)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

import anyio

LOGGER = logging.getLogger("reactloop.mcp")
STDERR_CHOICES = ("log", "inherit")
_CHUNK = 65536


@asynccontextmanager
async def server_stderr(name: str, choice: str, inherited: TextIO) -> AsyncIterator[TextIO]:
    """The file a server started in the block writes its stderr to: `inherited` for "inherit"
    (and where a pipe cannot be waited on: Windows), else a pipe whose lines are logged."""
    if choice == "inherit" or sys.platform == "win32":
        yield inherited
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    try:
        with os.fdopen(write_fd, "w", encoding="utf-8") as writer:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_forward, name, read_fd)
                try:
                    yield writer
                finally:
                    tasks.cancel_scope.cancel()
    finally:
        os.close(read_fd)


async def _forward(name: str, fd: int) -> None:
    """Log each line read from `fd` until the block ends (what is left then, too)."""
    pending = b""
    try:
        while True:
            await anyio.wait_readable(fd)
            chunk = _read(fd)
            if not chunk:
                return
            *lines, pending = (pending + chunk).split(b"\n")
            _log(name, lines)
    finally:
        _log(name, (pending + _read(fd)).split(b"\n"))


def _read(fd: int) -> bytes:
    """What the pipe holds now (b"" when empty or closed)."""
    try:
        return os.read(fd, _CHUNK)
    except OSError:  # BlockingIOError: nothing to read now
        return b""


def _log(name: str, lines: list[bytes]) -> None:
    """One INFO record per non-empty line."""
    for line in lines:
        text = line.decode("utf-8", "replace").rstrip("\r")
        if text:
            LOGGER.info("MCP server %s: %s", name, text)

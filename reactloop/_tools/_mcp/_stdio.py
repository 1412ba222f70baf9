"""The stdio transport of an MCP server, with a stop that a cancelled caller never waits on.

The SDK's `stdio_client` stops a server politely: it closes the server's stdin, waits up to 2 s
for it to exit, sends SIGTERM, waits 2 s more, then kills it, shielded from cancellation. So a run
cancelled during a call waits seconds when the server ignores `notifications/cancelled` or is
slow to exit. This transport speaks the same newline-delimited JSON-RPC (the SDK's message types)
but, when its block is left by a cancellation, kills the server's process group at once; a normal
close keeps the polite sequence. Either way the process is reaped: none is left behind. POSIX
only: on Windows the SDK's transport (its job objects) is used.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, TextIO

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from anyio.streams.text import TextReceiveStream
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams

EXIT_GRACE = 2.0
"""Seconds a server gets to exit on its own after its stdin closes (a normal close), and again
after SIGTERM, as the SDK gives."""

REAP_LIMIT = 2.0
"""Longest wait for a killed process to be seen gone (only an unkillable one runs it out)."""

Incoming = MemoryObjectSendStream[SessionMessage | Exception]


@asynccontextmanager
async def posix_stdio_client(
    server: StdioServerParameters, errlog: TextIO
) -> AsyncIterator[TransportStreams]:
    """Start the server in a process group of its own; leaving stops it (killed at once when
    the block is left by a cancellation) and reaps it."""
    process = await anyio.open_process(
        [server.command, *server.args],
        env=get_default_environment() | (server.env or {}),
        stderr=errlog,
        cwd=server.cwd,
        start_new_session=True,
    )
    incoming, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    cancelled = False
    async with process, anyio.create_task_group() as tasks:
        tasks.start_soon(_read, process, incoming, server.encoding)
        tasks.start_soon(_write, process, outgoing, server.encoding)
        try:
            yield read, write
        except anyio.get_cancelled_exc_class():
            cancelled = True
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, at_once=cancelled)
            tasks.cancel_scope.cancel()
            for stream in (read, write, incoming, outgoing):
                stream.close()


async def _read(process: anyio.abc.Process, incoming: Incoming, encoding: str) -> None:
    """Each line the server writes, parsed, to the session (an unparsable one as its error)."""
    assert process.stdout is not None
    buffer = ""
    with incoming, suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async for chunk in TextReceiveStream(process.stdout, encoding=encoding):
            *lines, buffer = (buffer + chunk).split("\n")
            for line in lines:
                await incoming.send(_parsed(line))


def _parsed(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        return error


async def _write(
    process: anyio.abc.Process, outgoing: MemoryObjectReceiveStream[SessionMessage], encoding: str
) -> None:
    """Each message of the session, as one line on the server's stdin."""
    assert process.stdin is not None
    with outgoing, suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async for message in outgoing:
            text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
            await process.stdin.send((text + "\n").encode(encoding))


async def _stop(process: anyio.abc.Process, *, at_once: bool) -> None:
    """Close stdin; then, unless the server exits within the grace periods (none when `at_once`),
    SIGTERM and SIGKILL its process group; wait until it is gone."""
    assert process.stdin is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if at_once:
        _signal_group(process, signal.SIGKILL)
    elif not await _exited(process, EXIT_GRACE):
        _signal_group(process, signal.SIGTERM)
        if not await _exited(process, EXIT_GRACE):
            _signal_group(process, signal.SIGKILL)
    await _exited(process, REAP_LIMIT)


def _signal_group(process: anyio.abc.Process, sent: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sent)


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    """Whether the process exits within `seconds`."""
    with anyio.move_on_after(seconds):
        await process.wait()
        return True
    return False


if sys.platform == "win32":  # job objects, not process groups: the SDK's own transport
    from mcp.client.stdio import stdio_client
else:
    stdio_client = posix_stdio_client

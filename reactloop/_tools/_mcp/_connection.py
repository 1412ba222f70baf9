"""One connection to an MCP server: the session's lifetime, restarts, the cached tool list, calls.

The session lives in a task of the connection's own task group (so that a restart, asked for by
whichever task makes a call, starts the new session there too); leaving the connection stops it
and, for stdio, the process (the SDK's transport closes stdin, then terminates and reaps it, even
under cancellation). This module needs the `mcp` extra.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO, cast

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types
from attrs import define
from mcp import ClientSession, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from reactloop._core import ToolSpec
from reactloop._errors import ContractError, ToolsetConnectionError, ToolsetError, name_of
from reactloop._schema import compile_input
from reactloop._tools._mcp._servers import MCPServerBase, MCPServerHTTP, MCPServerStdio
from reactloop._tools._mcp._stderr import server_stderr
from reactloop._tools._mcp._stdio import stdio_client
from reactloop._tools._mcp._tools import (
    MCPTool,
    chosen,
    needs_approval,
    offered_name,
    same_tools,
)
from reactloop._version import __version__

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.message import SessionMessage

CLIENT_INFO = mcp_types.Implementation(name="reactloop", version=__version__)
MAX_PAGES = 100


def leaf(error: BaseException) -> BaseException:
    """The one exception inside nested single-member exception groups (task-group wrapping)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def described(error: BaseException) -> str:
    """An exception as a message quotes it: its type, and its text when it has one."""
    error = leaf(error)
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def transport(server: MCPServerBase) -> AbstractAsyncContextManager[TransportStreams]:
    """The SDK transport for one session of `server`: a process, or an HTTP session."""
    if isinstance(server, MCPServerHTTP):
        return _http(server)
    if isinstance(server, MCPServerStdio):
        return _stdio(server)
    raise TypeError(f"{type(server).__name__} is not an MCP server of a known transport")


@asynccontextmanager
async def _stdio(server: MCPServerStdio) -> AsyncIterator[TransportStreams]:
    """Start the process (its stderr where `server.stderr` says); leaving closes its stdin, then
    terminates and reaps it."""
    parameters = StdioServerParameters(
        command=server.command, args=list(server.args), env=server.env, cwd=server.cwd
    )
    async with (
        server_stderr(server.name, server.stderr, server_errlog()) as errlog,
        stdio_client(parameters, errlog=errlog) as streams,
    ):
        yield streams


def server_errlog() -> TextIO:
    """Where a stdio server's stderr goes: this process's stderr as it is now (the SDK's default
    is the one it saw when imported, which a test runner or a notebook may have replaced and
    closed since); its original stderr when the current one has no file descriptor (a notebook's
    stream); nowhere when neither has one."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None and stream.fileno() >= 0:
                return stream
        except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError
            continue
    return cast(TextIO, subprocess.DEVNULL)  # the process is started with stderr=DEVNULL


@asynccontextmanager
async def _http(server: MCPServerHTTP) -> AsyncIterator[TransportStreams]:
    """An HTTP client sending the server's headers, and a streamable HTTP session over it."""
    async with (
        create_mcp_http_client(headers=server.headers) as client,
        streamable_http_client(server.url, http_client=client) as streams,
    ):
        yield streams


class _Watched:
    """The transport's read stream, setting `ended` once the server's side closes (a stdio
    server that exited), so that the next call starts a new session instead of failing."""

    def __init__(self, stream: ReadStream[SessionMessage | Exception], ended: anyio.Event) -> None:
        self._stream = stream
        self._ended = ended

    @property
    def last_context(self) -> Any:
        """The sender's context snapshot, when the transport keeps one (streamable HTTP)."""
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._ended.set()
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Watched:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@define
class _Live:
    """A running session; `done` is set when it ended (stopped, crashed, or lost)."""

    session: ClientSession
    done: anyio.Event
    error: BaseException | None = None


class Connection:
    """An open MCP session as a `ToolSource`: tools listed once, refreshed after the server's
    `notifications/tools/list_changed` (or a restart); calls restart a crashed server while
    the server's `ServerRestartPolicy` allows: `max_restarts` in a row, counted again from zero
    after each call that succeeds (a long-lived connection is not used up by rare crashes)."""

    def __init__(self, server: MCPServerBase, tasks: anyio.abc.TaskGroup) -> None:
        self._server = server
        self._tasks = tasks
        self._lock = anyio.Lock()
        self._live: _Live | None = None
        self._closed = False
        self.restarts = 0
        self._in_a_row = 0  # restarts since the last call that succeeded
        self._changes = 0
        self._listed = -1
        self._tools: tuple[MCPTool, ...] = ()

    @property
    def running(self) -> bool:
        """Whether a session is up now (False once the server exited, until a call restarts it)."""
        return self._live is not None and not self._live.done.is_set()

    async def _on_message(self, message: IncomingMessage) -> None:
        """Marks the tool list stale when the server says it changed."""
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._changes += 1
        await anyio.lowlevel.checkpoint()

    async def _serve(self, *, task_status: anyio.abc.TaskStatus[_Live | Exception]) -> None:
        """Run one session until it is stopped or ends; a failure to start is handed to the
        caller of `start` as the started value (not raised through the task group)."""
        done, live = anyio.Event(), None
        try:
            async with transport(self._server) as (read, write):
                watched = _Watched(read, done)
                session = ClientSession(
                    watched, write, message_handler=self._on_message, client_info=CLIENT_INFO
                )
                async with session:
                    with anyio.fail_after(self._server.connect_timeout):
                        await session.initialize()
                    live = _Live(session, done)
                    task_status.started(live)
                    await done.wait()
        except Exception as error:
            if live is None:
                task_status.started(error)
            else:
                live.error = error
        finally:
            done.set()

    async def start(self) -> _Live:
        """Start a session in the connection's task group; `ToolsetConnectionError` if the
        server cannot be started or does not answer the handshake in time."""
        started: _Live | Exception = await self._tasks.start(self._serve)
        if isinstance(started, Exception):
            problem = f"could not be started or reached ({described(started)})"
            if isinstance(leaf(started), TimeoutError):
                timeout = self._server.connect_timeout
                problem = f"did not answer the MCP handshake within {timeout:g} s (connect_timeout)"
            raise ToolsetConnectionError(self._server.name, problem) from started
        self._live = started
        return started

    async def _running(self) -> _Live:
        """The live session, starting a new one when the last ended and the policy allows."""
        live = self._live
        if live is not None and not live.done.is_set():
            return live
        async with self._lock:
            if self._closed:
                raise ToolsetError(self._server.name, "its connection is closed")
            live = self._live
            if live is not None and not live.done.is_set():
                return live
            allowed = self._server.restart.max_restarts
            if self._in_a_row >= allowed:
                problem = (
                    f"the server is gone and was restarted {self._in_a_row} times in a row without "
                    f"a call succeeding (restart=ServerRestartPolicy(max_restarts={allowed}))"
                )
                raise ToolsetConnectionError(self._server.name, problem)
            self.restarts += 1
            self._in_a_row += 1
            self._changes += 1  # a new process may offer other tools
            return await self.start()

    async def call(self, remote_name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """`tools/call` on the live session; a connection lost meanwhile is a
        `ToolsetConnectionError` (cancellation goes through: the SDK tells the server)."""
        live = await self._running()
        try:
            answered = await live.session.call_tool(remote_name, arguments)
        except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError) as error:
            if isinstance(error, MCPError) and not _connection_lost(error, live):
                problem = f"tools/call {remote_name!r} failed: {error}"
                raise ToolsetError(self._server.name, problem) from error
            live.done.set()
            problem = f"the server closed the connection during {remote_name!r} ({error})"
            raise ToolsetConnectionError(self._server.name, problem) from error
        self._in_a_row = 0
        return answered

    async def list_tools(self) -> tuple[MCPTool, ...]:
        """The offered tools: the same tuple while nothing changed, a fresh listing after."""
        if self._listed == self._changes and self._live is not None:
            return self._tools
        live = await self._running()
        changes = self._changes
        listed = await self._fetch(live)
        tools = self._wrap(listed)
        if not same_tools(self._tools, tools):
            self._tools = tools
        self._listed = changes
        return self._tools

    async def _fetch(self, live: _Live) -> list[mcp_types.Tool]:
        """Every page of `tools/list`, within the server's timeout."""
        found: list[mcp_types.Tool] = []
        cursor: str | None = None
        seconds = self._server.timeout or self._server.connect_timeout
        try:
            with anyio.fail_after(seconds):
                for _ in range(MAX_PAGES):
                    params = mcp_types.PaginatedRequestParams(cursor=cursor)
                    page = await live.session.list_tools(params=params)
                    found.extend(page.tools)
                    cursor = page.next_cursor
                    if cursor is None:
                        break
        except TimeoutError:
            problem = f"tools/list got no answer within {seconds:g} s"
            raise ToolsetConnectionError(self._server.name, problem) from None
        except MCPError as error:
            raise ToolsetError(self._server.name, f"tools/list failed: {error}") from error
        return found

    def _wrap(self, listed: list[mcp_types.Tool]) -> tuple[MCPTool, ...]:
        """The chosen tools as `MCPTool`s, reusing the previous object of an unchanged tool (so
        its schema is compiled once); two tools offered under one name is a `ToolsetError`."""
        server, known = self._server, {tool.remote_name: tool for tool in self._tools}
        tools: dict[str, MCPTool] = {}
        for listed_tool in listed:
            if not self._chosen(listed_tool):
                continue
            tool = self._tool(listed_tool, known.get(listed_tool.name))
            other = tools.get(tool.name)
            if other is not None:
                problem = (
                    f"its tools {other.remote_name!r} and {tool.remote_name!r} are both offered "
                    f"as {tool.name!r} (characters other than letters, digits, '_' and '-' "
                    "become '_'); leave one out with tool_filter"
                )
                raise ToolsetError(server.name, problem)
            tools[tool.name] = tool
        return tuple(tools.values())

    def _chosen(self, listed: mcp_types.Tool) -> bool:
        """The filter's verdict; a predicate that raises breaks its contract (`ContractError`)."""
        tool_filter = self._server.tool_filter
        try:
            return chosen(listed, tool_filter)
        except Exception as error:
            culprit = f"tool_filter {name_of(tool_filter)} of toolset {self._server.name!r}"
            rule = "a tool_filter predicate returns True or False and does not raise"
            raise ContractError(culprit, rule, error) from error

    def _tool(self, listed: mcp_types.Tool, previous: MCPTool | None) -> MCPTool:
        server = self._server
        spec = ToolSpec(
            offered_name(listed.name, server.prefix), listed.description or "", listed.input_schema
        )
        if previous is not None and previous.spec == spec:
            return previous
        approval = needs_approval(listed.name, server.requires_approval)
        convert = compile_input(listed.input_schema)
        return MCPTool(spec, listed.name, server.timeout, approval, self, convert)

    def close(self) -> None:
        """Stop the session (its task then stops the server); calls after this fail."""
        self._closed = True
        if self._live is not None:
            self._live.done.set()


def _connection_lost(error: MCPError, live: _Live) -> bool:
    return live.done.is_set() or error.error.code == mcp_types.CONNECTION_CLOSED


@asynccontextmanager
async def open_connection(server: MCPServerBase) -> AsyncIterator[Connection]:
    """Connect to `server` for the block; leaving it (however) stops the session and process.

    An exception from the block leaves as it came, not wrapped in the task group's group.
    """
    failure: Exception | None = None
    async with anyio.create_task_group() as tasks:
        connection = Connection(server, tasks)
        try:
            await connection.start()
            yield connection
        except Exception as error:
            failure = error
        finally:
            connection.close()
    if failure is not None:
        raise failure

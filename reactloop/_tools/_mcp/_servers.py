"""MCP servers as toolsets: `MCPServerStdio` (a subprocess) and `MCPServerHTTP` (streamable HTTP).

Both implement the `Toolset` contract: `connect()` opens a connection of its own (a run that finds
the server closed does this for its duration); `async with server:` keeps one open, shared by
every run meanwhile (`open_source`). Options are checked at construction. The `mcp` SDK is an
extra (`pip install 'reactloop[mcp]'`): this module imports it only when a server is created.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

from attrs import frozen

from reactloop._errors import ConfigurationError, ToolsetError
from reactloop._tools._mcp._stderr import STDERR_CHOICES
from reactloop._validate import (
    accepts,
    checked_arguments,
    fail,
    integer,
    items,
    number,
    optional_number,
    optional_text,
    text,
)

if TYPE_CHECKING:
    from reactloop._core import ToolSource
    from reactloop._tools._mcp._tools import Approval, ToolFilter

INSTALL = "pip install 'reactloop[mcp]'"
_PREFIX = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_PREFIX_RULE = "None or 1 to 32 letters, digits, '_' or '-'"


def require_sdk() -> None:
    """Fail with a `ConfigurationError` saying how to install the extra when `mcp` is missing."""
    try:
        importlib.import_module("mcp")
    except ImportError as error:
        raise ConfigurationError(
            f"MCP servers need the official MCP SDK, which is not installed ({error}): {INSTALL}",
            option="mcp",
            value=None,
            rule=f"the `mcp` extra installed ({INSTALL})",
        ) from error


@checked_arguments
@frozen
class ServerRestartPolicy:
    """How often a server that crashed or exited is started again for later calls: at most
    `max_restarts` times in a row, counted from zero again after each call that succeeds (0:
    never). The call it was answering gets an error."""

    max_restarts: int = 2

    def __attrs_post_init__(self) -> None:
        integer("ServerRestartPolicy.max_restarts", self.max_restarts, minimum=0)


def _strings(option: str, value: object, what: str) -> tuple[str, ...]:
    found = items(option, value, what)
    for item in found:
        if not isinstance(item, str):
            fail(option, value, f"a sequence of {what}")
    return tuple(str(item) for item in found)


def _string_map(option: str, value: object) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        fail(option, value, "None or a mapping of strings to strings")
    return dict(value)


def _tool_filter(option: str, value: object) -> ToolFilter | None:
    if value is None:
        return None
    names = "a collection of tool names, a predicate over the server's tool, or None"
    if callable(value) and not isinstance(value, type):
        if not accepts(value, 1):
            fail(option, value, names)
        return value
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Collection):
        fail(option, value, names)
    return frozenset(_strings(option, value, "tool names"))


def _approval(option: str, value: object) -> Approval:
    if isinstance(value, bool):
        return value
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Collection):
        fail(option, value, "True, False or a collection of the server's tool names")
    return frozenset(_strings(option, value, "tool names"))


class MCPServerBase:
    """What both transports share: naming, filters, timeouts, restarts, approval, lifecycle.

    Not used directly: create an `MCPServerStdio` or an `MCPServerHTTP`.
    """

    def __init__(
        self,
        *,
        kind: str,
        name: str,
        prefix: str | None,
        tool_filter: object,
        timeout: float | None,
        connect_timeout: float,
        restart: ServerRestartPolicy,
        requires_approval: object,
    ) -> None:
        self._name = text(f"{kind}.name", name)
        if prefix is not None and (not isinstance(prefix, str) or not _PREFIX.match(prefix)):
            fail(f"{kind}.prefix", prefix, _PREFIX_RULE)
        self.prefix = prefix
        self.tool_filter = _tool_filter(f"{kind}.tool_filter", tool_filter)
        self.timeout = optional_number(f"{kind}.timeout", timeout)
        self.connect_timeout = number(f"{kind}.connect_timeout", connect_timeout)
        if not isinstance(restart, ServerRestartPolicy):
            rule = "a ServerRestartPolicy (ServerRestartPolicy(max_restarts=0): never restart)"
            fail(f"{kind}.restart", restart, rule)
        self.restart = restart
        self.requires_approval = _approval(f"{kind}.requires_approval", requires_approval)
        self._stack: AsyncExitStack | None = None
        self._source: ToolSource | None = None

    @property
    def name(self) -> str:
        """A short name for messages: the one given, else the command or the URL."""
        return self._name

    @property
    def open_source(self) -> ToolSource | None:
        """The connection kept while the server is entered (`async with server:`); else None."""
        return self._source

    def connect(self) -> AbstractAsyncContextManager[ToolSource]:
        """Open a connection of its own (start the process, the session); leaving the block
        closes it and stops the process, whatever the ending."""
        from reactloop._tools._mcp._connection import open_connection  # the SDK: when used

        return open_connection(self)

    async def __aenter__(self) -> Self:
        """Open the connection every run shares until the block ends; entering a server that is
        already entered is a `ToolsetError` (enter it once; `connect()` opens another)."""
        if self._stack is not None:
            problem = (
                "it is already entered (`async with`): enter it once, and every run meanwhile "
                "shares its connection; connect() opens a connection of its own"
            )
            raise ToolsetError(self.name, problem)
        stack = self._stack = AsyncExitStack()
        try:
            self._source = await stack.enter_async_context(self.connect())
        except BaseException:
            self._stack = None
            raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the shared connection (and stop the process); leave it in the task that
        entered it."""
        stack, self._stack, self._source = self._stack, None, None
        if stack is not None:
            await stack.__aexit__(kind, error, tb)


@checked_arguments
class MCPServerStdio(MCPServerBase):
    """An MCP server run as a subprocess, spoken to over its stdin and stdout.

    `env` is added to a small safe environment (PATH, HOME, ...), as the SDK does; `cwd` is the
    process's working directory. `prefix="x"` offers its tools as `x_<tool>`; `tool_filter`
    (tool names as the server spells them, or a predicate over the SDK's `mcp.types.Tool`)
    chooses the tools offered; `timeout` (seconds, None for the loop's `tool_timeout`) bounds
    each call and each listing; `connect_timeout` bounds the start and the handshake;
    `restart` says how often a crashed server is started again; `requires_approval` (True, or
    tool names) makes calls wait for a person's decision. `stderr="log"` (the default) makes
    each line the server writes to its stderr an INFO record of the `reactloop.mcp` logger
    (quiet unless shown); `stderr="inherit"` lets it write to this process's stderr.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        prefix: str | None = None,
        tool_filter: Callable[[Any], bool] | Collection[str] | None = None,
        timeout: float | None = 60.0,
        connect_timeout: float = 30.0,
        restart: ServerRestartPolicy = ServerRestartPolicy(),
        requires_approval: bool | Collection[str] = False,
        stderr: Literal["log", "inherit"] = "log",
    ) -> None:
        require_sdk()
        self.command = text("MCPServerStdio.command", command)
        if stderr not in STDERR_CHOICES:
            fail("MCPServerStdio.stderr", stderr, "'log' (the reactloop.mcp logger) or 'inherit'")
        self.stderr = stderr
        self.args = _strings("MCPServerStdio.args", args, "strings")
        self.env = _string_map("MCPServerStdio.env", env)
        if cwd is not None and (not isinstance(cwd, str | os.PathLike) or not os.fspath(cwd)):
            fail("MCPServerStdio.cwd", cwd, "None or a path")
        self.cwd = None if cwd is None else Path(cwd)
        optional_text("MCPServerStdio.name", name)
        super().__init__(
            kind="MCPServerStdio",
            name=name or os.path.basename(command),
            prefix=prefix,
            tool_filter=tool_filter,
            timeout=timeout,
            connect_timeout=connect_timeout,
            restart=restart,
            requires_approval=requires_approval,
        )

    def __repr__(self) -> str:
        return f"MCPServerStdio({self.command!r}, {list(self.args)!r}, name={self.name!r})"


@checked_arguments
class MCPServerHTTP(MCPServerBase):
    """An MCP server reached over streamable HTTP at `url`; `headers` go with every request.

    The other options are those of `MCPServerStdio`; `restart` here opens a new session.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        prefix: str | None = None,
        tool_filter: Callable[[Any], bool] | Collection[str] | None = None,
        timeout: float | None = 60.0,
        connect_timeout: float = 30.0,
        restart: ServerRestartPolicy = ServerRestartPolicy(),
        requires_approval: bool | Collection[str] = False,
    ) -> None:
        require_sdk()
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            fail("MCPServerHTTP.url", url, "an http:// or https:// URL")
        self.url = url
        self.headers = _string_map("MCPServerHTTP.headers", headers)
        optional_text("MCPServerHTTP.name", name)
        super().__init__(
            kind="MCPServerHTTP",
            name=name or url,
            prefix=prefix,
            tool_filter=tool_filter,
            timeout=timeout,
            connect_timeout=connect_timeout,
            restart=restart,
            requires_approval=requires_approval,
        )

    def __repr__(self) -> str:
        return f"MCPServerHTTP({self.url!r}, name={self.name!r})"

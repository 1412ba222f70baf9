"""An MCP server's tools as reactloop `Tool`s: names, filters, argument checks, results.

Each listed tool keeps the server's description and input schema as they are; its arguments are
checked against that schema (compiled once per tool) before the call goes out. Results become
text: structured content as JSON when there is some, else the text parts joined, with a short
placeholder for what a model cannot read (images, audio, binary resources). This module needs
the `mcp` extra; `reactloop._tools._mcp._servers` imports it only when a server is connected.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any, Protocol

import mcp_types
import orjson
from attrs import frozen

from reactloop._core import RunContext, ToolSpec
from reactloop._errors import MCPToolError, ToolArgumentsError
from reactloop._schema import Converter, Invalid, compile_raw

MAX_NAME = 64
_INVALID = re.compile(r"[^A-Za-z0-9_-]")
ToolFilter = Callable[[mcp_types.Tool], bool] | Collection[str]
Approval = bool | Collection[str]


class Caller(Protocol):
    """What a tool calls through: the connection to its server."""

    async def call(self, remote_name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Send `tools/call` and return the server's result."""
        ...


@frozen
class MCPTool:
    """One tool of an MCP server, offered to the model under `name` (prefixed, sanitized).

    `remote_name` is the server's own name for it; `spec.parameters` is its input schema as the
    server gave it. `requires_approval` comes from the server's option of that name.
    """

    spec: ToolSpec
    remote_name: str
    timeout: float | None
    requires_approval: bool
    _caller: Caller
    _convert: Converter
    exclusive: bool = False
    idempotent: bool = False

    @property
    def name(self) -> str:
        """The name the model uses."""
        return self.spec.name

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """Parse the model's JSON and validate it against the server's input schema."""
        try:
            value = orjson.loads(arguments) if arguments.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise ToolArgumentsError(self.name, [f"arguments are not valid JSON ({exc})"]) from None
        if type(value) is not dict:
            problem = f"arguments must be a JSON object, got {type(value).__name__}"
            raise ToolArgumentsError(self.name, [problem])
        try:
            checked: dict[str, Any] = self._convert(value, "")
        except Invalid as exc:
            raise ToolArgumentsError(self.name, [str(exc)]) from None
        return checked

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """Call the tool on its server; an `isError` answer raises `MCPToolError`."""
        result = await self._caller.call(self.remote_name, arguments)
        text = result_text(result)
        if result.is_error:
            raise MCPToolError(self.name, text or "(the server gave no details)")
        return text


def _any_object(value: Any, path: str) -> Any:
    return value


def compile_input(schema: dict[str, Any]) -> Converter:
    """The validator of a tool's input schema; a schema the validator cannot compile (a remote
    `$ref`) leaves the checking to the server (any JSON object is let through)."""
    try:
        return compile_raw(schema)
    except (ValueError, TypeError, KeyError, re.error):
        return _any_object


def offered_name(remote: str, prefix: str | None) -> str:
    """The name offered to the model: characters other than letters, digits, `_` and `-`
    become `_`, the prefix goes first (`prefix_name`), and a name longer than 64 characters is
    cut, ending in 8 hex digits of a hash of the server's name so that it stays unique."""
    name = _INVALID.sub("_", remote) or "_"
    if prefix is not None:
        name = f"{prefix}_{name}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(remote.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def chosen(tool: mcp_types.Tool, tool_filter: ToolFilter | None) -> bool:
    """Whether the filter offers the tool: names are the server's own; a predicate sees the
    server's tool description (`mcp_types.Tool`)."""
    if tool_filter is None:
        return True
    if callable(tool_filter):
        return bool(tool_filter(tool))
    return tool.name in tool_filter


def needs_approval(remote: str, approval: Approval) -> bool:
    """Whether calls of this tool wait for a person (True: all; a collection: these names)."""
    if isinstance(approval, bool):
        return approval
    return remote in approval


def _size(data: str) -> str:
    try:
        count = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        count = len(data)
    return f"{count} bytes" if count < 1000 else f"{count / 1000:.0f} kB"


def _resource(resource: mcp_types.TextResourceContents | mcp_types.BlobResourceContents) -> str:
    if isinstance(resource, mcp_types.TextResourceContents):
        return resource.text
    mime = resource.mime_type or "binary"
    return f"[resource {resource.uri}, {mime}, {_size(resource.blob)}, not shown]"


def block_text(block: mcp_types.ContentBlock) -> str:
    """One content block as the model reads it: text as it is, a placeholder for the rest."""
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        return f"[{block.mime_type}, {_size(block.data)}, not shown]"
    if isinstance(block, mcp_types.EmbeddedResource):
        return _resource(block.resource)
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link {block.uri} ({block.name}), not fetched]"
    return f"[{getattr(block, 'type', type(block).__name__)} content, not shown]"


def result_text(result: mcp_types.CallToolResult) -> str:
    """The result as the model reads it: the structured content as JSON when present, else the
    content blocks' text joined by newlines."""
    if result.structured_content is not None:
        return orjson.dumps(result.structured_content, option=orjson.OPT_NON_STR_KEYS).decode()
    return "\n".join(block_text(block) for block in result.content)


def same_tools(old: Sequence[MCPTool], new: Sequence[MCPTool]) -> bool:
    """True when two listings offer the same tools (same objects, in the same order)."""
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))

"""An MCP server's tools as reactloop `Tool`s: names, filters, argument checks, results.

Each listed tool keeps the server's description and input schema as they are; its arguments are
checked against that schema (compiled once per tool) before the call goes out. A result of text
alone becomes text: structured content as JSON when there is some, else the text blocks joined.
Images, audio and embedded PDFs, images or audio become content parts the model is given (see
`block_part`); what no part takes (an unknown audio type, a zip) is named in a short note, and a
resource link by its URI (it is not fetched). This module needs
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

from reactloop._core import (
    AudioPart,
    ContentPart,
    DocumentPart,
    ImagePart,
    RunContext,
    TextPart,
    ToolSpec,
    describe,
)
from reactloop._errors import MCPToolError
from reactloop._schema import Converter, schema_arguments

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
        return schema_arguments(self.name, arguments, self._convert)

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """Call the tool on its server; an `isError` answer raises `MCPToolError`."""
        result = await self._caller.call(self.remote_name, arguments)
        if result.is_error:
            text = result_text(result)
            raise MCPToolError(self.name, text or "(the server gave no details)")
        return result_value(result)


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


_AUDIO_FORMATS = {
    "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/vnd.wave": "wav",
    "audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/flac": "flac", "audio/x-flac": "flac",
    "audio/ogg": "ogg", "audio/mp4": "m4a", "audio/m4a": "m4a", "audio/x-m4a": "m4a",
    "audio/webm": "webm", "audio/aac": "aac", "audio/pcm": "pcm16", "audio/l16": "pcm16",
}  # fmt: skip
"""Audio media types an `AudioPart` takes, by the format it names; other audio stays a note."""
_IMAGE_TYPES = frozenset(("image/png", "image/jpeg", "image/gif", "image/webp"))
"""The image types every vendor reads (an SVG or a TIFF stays a note)."""


def _decoded(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _size(count: int) -> str:
    return f"{count} bytes" if count < 1000 else f"{count / 1000:.0f} kB"


def _note(what: str, mime: str | None, data: str, why: str) -> TextPart:
    """A part the model cannot be given, named in its place."""
    raw = _decoded(data)
    size = _size(len(raw) if raw is not None else len(data))
    return TextPart(f"[{what}{mime or 'binary'}, {size}, not shown: {why}]")


def _binary(mime: str | None, data: str, title: str | None, what: str = "") -> ContentPart:
    """Base64 content of a media type as an image, a PDF or audio part, else a note."""
    raw = _decoded(data)
    kind = (mime or "").lower().split(";")[0].strip()
    if raw is None:
        return _note(what, mime, data, "its data is not valid base64")
    if kind in _IMAGE_TYPES:
        return ImagePart(raw, media_type=kind)
    if kind == "application/pdf":
        return DocumentPart(raw, media_type=kind, title=title)
    audio = _AUDIO_FORMATS.get(kind)
    if audio is not None:
        return AudioPart(raw, audio)
    return _note(what, mime, data, "no content part takes this media type")


def _resource(
    resource: mcp_types.TextResourceContents | mcp_types.BlobResourceContents,
) -> ContentPart:
    if isinstance(resource, mcp_types.TextResourceContents):
        return TextPart(resource.text)
    title = resource.uri.rstrip("/").rsplit("/", 1)[-1] or None
    return _binary(resource.mime_type, resource.blob, title, f"resource {resource.uri}, ")


def block_part(block: mcp_types.ContentBlock) -> ContentPart:
    """One content block as a part: text, an image, audio, an embedded resource (a PDF, an
    image, audio, or its text), a link named by its URI; a note for what no part takes."""
    if isinstance(block, mcp_types.TextContent):
        return TextPart(block.text)
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        return _binary(block.mime_type, block.data, None)
    if isinstance(block, mcp_types.EmbeddedResource):
        return _resource(block.resource)
    if isinstance(block, mcp_types.ResourceLink):
        return TextPart(f"[resource link {block.uri} ({block.name}), not fetched]")
    return TextPart(f"[{getattr(block, 'type', type(block).__name__)} content, not shown]")


def block_text(block: mcp_types.ContentBlock) -> str:
    """One content block as text: its text, or a one-line description of what it holds."""
    part = block_part(block)
    return part.text if isinstance(part, TextPart) else f"[{describe(part)}]"


def _structured(result: mcp_types.CallToolResult) -> str:
    return orjson.dumps(result.structured_content, option=orjson.OPT_NON_STR_KEYS).decode()


def result_text(result: mcp_types.CallToolResult) -> str:
    """The result as text (an error's message): the structured content as JSON when present,
    else the content blocks' text (binary ones described) joined by newlines."""
    if result.structured_content is not None:
        return _structured(result)
    return "\n".join(block_text(block) for block in result.content)


def result_value(result: mcp_types.CallToolResult) -> str | list[ContentPart]:
    """The result as the model reads it: text (`result_text`) when it holds only text, else
    its parts in order, text parts separated by newlines (the structured content as JSON, when
    present, in place of the text blocks)."""
    parts = [block_part(block) for block in result.content]
    binary = [part for part in parts if not isinstance(part, TextPart)]
    if not binary:
        return result_text(result)
    if result.structured_content is not None:
        return [TextPart(_structured(result)), *binary]
    shown: list[ContentPart] = []
    for part in parts:
        if isinstance(part, TextPart) and shown and isinstance(shown[-1], TextPart):
            shown[-1] = TextPart(f"{shown[-1].text}\n{part.text}")
        else:
            shown.append(part)
    return shown


def same_tools(old: Sequence[MCPTool], new: Sequence[MCPTool]) -> bool:
    """True when two listings offer the same tools (same objects, in the same order)."""
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))

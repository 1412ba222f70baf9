"""A real MCP server for the MCP toolset tests, written with the SDK's own server API.

`python -m tests.helpers.mcp_server http` serves it over streamable HTTP on 127.0.0.1 (a free port,
printed on its first line of output); `python -m tests.helpers.mcp_server stdio` serves it over
stdio. Its tools echo, fail (isError), return structured content, an image and other media
(audio, an embedded PDF, a resource link), hang, exit the process mid-call, add a tool and announce
it, and report what reached the server (environment, headers, pid, the calls the client
cancelled)."""

from __future__ import annotations

import base64
import os
import socket
import sys
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ResourceLink,
    TextResourceContents,
    ToolListChangedNotification,
)

from tests.helpers.images import png

PNG = png(64, 48)
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n"
server: MCPServer[Any] = MCPServer("reactloop-test", log_level="WARNING")
cancelled: list[str] = []


@server.tool(structured_output=False)
def echo(text: str, times: int = 1) -> str:
    """Return the text, repeated."""
    return text * times


@server.tool(structured_output=False)
def fail(message: str) -> str:
    """Always fails, with the message as the error the model reads."""
    raise ToolError(message)


@server.tool(structured_output=True)
def measure(text: str) -> dict[str, int]:
    """Structured content: the text's length and word count."""
    return {"length": len(text), "words": len(text.split())}


@server.tool(structured_output=False)
def picture() -> list[Any]:
    """An image and a caption."""
    return ["a blank picture", Image(data=PNG, format="png")]


@server.tool(structured_output=False)
def media() -> list[Any]:
    """Audio (WAV, and of a type no part takes), an embedded PDF, an embedded text resource and
    a resource link."""

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    pdf = BlobResourceContents(
        uri="file:///docs/report.pdf", blob=b64(PDF), mime_type="application/pdf"
    )
    notes = TextResourceContents(uri="file:///docs/notes.txt", text="the notes")
    return [
        AudioContent(data=b64(WAV), mime_type="audio/wav"),
        AudioContent(data=b64(bytes(300)), mime_type="audio/x-tracker"),
        EmbeddedResource(resource=pdf),
        EmbeddedResource(resource=notes),
        ResourceLink(uri="file:///docs/big.csv", name="big"),
    ]


@server.tool(structured_output=False)
async def hang(label: str = "hang") -> str:
    """Never answers; records its cancellation (the client's notifications/cancelled)."""
    try:
        await anyio.sleep_forever()
    finally:
        cancelled.append(label)
    return "unreachable"


@server.tool(structured_output=False)
def cancelled_calls() -> list[str]:
    """The labels of the hang calls cancelled so far."""
    return list(cancelled)


@server.tool(structured_output=False)
def crash() -> str:
    """Exits the server process in the middle of the call."""
    os._exit(3)


@server.tool(structured_output=False)
def environment(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@server.tool(structured_output=False)
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP header of the call's request."""
    headers = ctx.headers or {}
    return headers.get(name.lower(), "<unset>")


@server.tool(structured_output=False)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(structured_output=False)
async def grow(name: str, ctx: Context) -> str:
    """Adds a tool called `name` and sends notifications/tools/list_changed."""

    def added() -> str:
        return f"{name} here"

    description = f"added by grow({name!r})"
    server.add_tool(added, name=name, description=description, structured_output=False)
    await ctx.session.send_notification(ToolListChangedNotification())
    return f"added {name}"


async def serve_http() -> None:
    """Serve over streamable HTTP on a free loopback port, printed once it is listening."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(64)
    print(listening.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[listening])


def main(argv: list[str]) -> None:
    """`stdio` or `http`; `--stderr=NOTE` (or $REACTLOOP_MCP_STDERR) first writes NOTE to
    stderr, as a server's log line."""
    notes = [arg.removeprefix("--stderr=") for arg in argv[2:] if arg.startswith("--stderr=")]
    if note := os.environ.get("REACTLOOP_MCP_STDERR") or "".join(notes):
        print(note, file=sys.stderr, flush=True)
    if argv[1:2] == ["http"]:
        anyio.run(serve_http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv)

"""The MCP server of benchmark (l): one trivial `echo` tool, served over stdio."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer("reactloop-benchmark", log_level="WARNING")


@server.tool(structured_output=False)
def echo(n: int) -> str:
    """Return the number as text."""
    return f"ok {n}"


if __name__ == "__main__":
    server.run("stdio")

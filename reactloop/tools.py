"""Tools and where they come from: `@tool` functions, toolsets (MCP servers), other agents
(`loop.as_tool(...)`), and the selection of the tools offered each step.

`MCPServerStdio` / `MCPServerHTTP` need the `mcp` extra (`pip install 'reactloop[mcp]'`) only
when a server is started. A `Toolset` or a `ToolSelector` of your own is as first-class as these.
"""

from reactloop._core import Tool, ToolSelector, Toolset, ToolSource, publish
from reactloop._loop import AgentTool
from reactloop._tools import (
    FunctionTool,
    MCPServerHTTP,
    MCPServerStdio,
    RelevanceSelector,
    ServerRestartPolicy,
    ToolSelection,
    tool,
)

__all__ = [
    "AgentTool",
    "FunctionTool",
    "MCPServerHTTP",
    "MCPServerStdio",
    "RelevanceSelector",
    "ServerRestartPolicy",
    "Tool",
    "ToolSelection",
    "ToolSelector",
    "ToolSource",
    "Toolset",
    "tool",
]

publish(__name__, globals())

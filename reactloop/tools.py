"""Tools and where they come from: `@tool` functions, toolsets (MCP servers), other agents
(`loop.as_tool(...)`), and the selection of the tools offered each step.

`MCPServerStdio` / `MCPServerHTTP` need the `mcp` extra (`pip install 'reactloop[mcp]'`) only
when a server is started. A `Toolset` or a `ToolSelector` of your own is as first-class as these.
"""

from reactloop._agent_tool import AgentTool
from reactloop._contracts import Tool, ToolSelector, Toolset, ToolSource
from reactloop._mcp import MCPServerHTTP, MCPServerStdio, ServerRestartPolicy
from reactloop._selection import RelevanceSelector
from reactloop._tool import FunctionTool, tool

__all__ = [
    "AgentTool",
    "FunctionTool",
    "MCPServerHTTP",
    "MCPServerStdio",
    "RelevanceSelector",
    "ServerRestartPolicy",
    "Tool",
    "ToolSelector",
    "ToolSource",
    "Toolset",
    "tool",
]

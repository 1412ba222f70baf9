"""Tools: `@tool` and function tools, results as the model reads them, toolsets and tool
selection, sub-run nesting, MCP servers. Published by `reactloop.tools`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._tools._mcp._servers import MCPServerHTTP, MCPServerStdio, ServerRestartPolicy
from reactloop._tools._nesting import (
    CALLING,
    READS_CALLING,
    SubRunOutcome,
    interrupt_run,
    nested,
    path_of,
    sub_runs_of,
)
from reactloop._tools._options import ToolSelection
from reactloop._tools._results import error_result, jsonable, parts_of, render, result_of
from reactloop._tools._selection import RelevanceSelector
from reactloop._tools._tool import FunctionTool, tool
from reactloop._tools._toolsets import LoopToolsets, RunCatalog, StepSelection, run_toolsets

__all__ = [
    "CALLING",
    "READS_CALLING",
    "FunctionTool",
    "LoopToolsets",
    "MCPServerHTTP",
    "MCPServerStdio",
    "RelevanceSelector",
    "RunCatalog",
    "ServerRestartPolicy",
    "StepSelection",
    "SubRunOutcome",
    "ToolSelection",
    "error_result",
    "interrupt_run",
    "jsonable",
    "nested",
    "parts_of",
    "path_of",
    "render",
    "result_of",
    "run_toolsets",
    "sub_runs_of",
    "tool",
]

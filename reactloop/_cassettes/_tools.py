"""Tools served from a recording: the same names and specs, the recorded results, no side effects.

`invoke` gets parsed arguments, not the call's id, so calls are matched by tool name and
arguments, in the order they were recorded. The value handed back reproduces the recorded result
exactly as the loop renders it: text as it was (a cut result is cut again the same way), and a
failure raised again with the recorded type name and message.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from reactloop._core import ModelResponse, RunContext, Tool, ToolCall, ToolResult, ToolSpec
from reactloop._errors import ConfigurationError, ToolArgumentsError
from reactloop._stored_errors import RecordedToolError, UnrecordedCallError

_CUT = re.compile(r"\n\[truncated: (\d+) of (\d+) characters cut\]\Z")
_RAISED = re.compile(r"tool (.+?) raised ([A-Za-z_]\w*): (.*)\Z", re.DOTALL)

Key = tuple[str, bytes]


def _key(tool: Tool, arguments: dict[str, Any]) -> Key:
    return tool.name, orjson.dumps(arguments, default=repr, option=orjson.OPT_SORT_KEYS)


class _Recorded:
    """The recorded results of one replay, queued per (tool name, arguments)."""

    def __init__(self, tools: dict[str, Tool], pairs: Iterable[tuple[ToolCall, ToolResult]]):
        self.queues: defaultdict[Key, deque[ToolResult]] = defaultdict(deque)
        for call, result in pairs:
            tool = tools.get(call.name)
            if tool is not None:
                try:
                    arguments = tool.parse_arguments(call.arguments)
                except ToolArgumentsError:
                    continue  # the loop refuses such a call before any tool runs
                self.queues[_key(tool, arguments)].append(result)

    def take(self, tool: Tool, arguments: dict[str, Any]) -> ToolResult:
        queue = self.queues.get(_key(tool, arguments))
        if not queue:
            shown = orjson.dumps(arguments, default=repr, option=orjson.OPT_SORT_KEYS).decode()
            raise UnrecordedCallError(tool.name, shown)
        return queue.popleft()


def served_value(result: ToolResult) -> object:
    """What a served tool returns (or raises) so that the loop renders `result` again."""
    if result.is_error:
        raised = _RAISED.match(result.content)
        if raised is None or raised.group(1) != repr(result.name):
            raise RecordedToolError(result.content)
        failure = type(raised.group(2), (RecordedToolError,), {})
        raise failure(raised.group(3))
    if result.parts:  # images, documents, audio: the parts as the tool returned them
        return list(result.parts)
    cut = _CUT.search(result.content)
    if cut is None:
        return result.content
    kept, total = result.content[: cut.start()], int(cut.group(2))
    if len(kept) + int(cut.group(1)) != total:
        return result.content
    return kept + " " * (total - len(kept))  # the loop cuts it at the same place


def _ran(result: ToolResult) -> bool:
    """False for the result of a call its tool never ran (refused, or settled by the run's end):
    the loop gives such calls their result again, so it is not served."""
    if not result.is_error:
        return True
    refused = f"tool call {result.name!r} was not run: "
    return not result.content.startswith((refused, "not run: ", "cut short: "))


class ServedTool:
    """A tool answering from a recording: same name, spec, timeout and exclusivity as the real
    one, whose function never runs."""

    def __init__(self, tool: Tool, recorded: _Recorded) -> None:
        self.tool = tool
        self.recorded = recorded
        self.idempotent = getattr(tool, "idempotent", False) is True

    @property
    def name(self) -> str:
        """The real tool's name."""
        return self.tool.name

    @property
    def spec(self) -> ToolSpec:
        """The real tool's spec."""
        return self.tool.spec

    @property
    def timeout(self) -> float | None:
        """The real tool's timeout."""
        return self.tool.timeout

    @property
    def exclusive(self) -> bool:
        """The real tool's exclusivity."""
        return self.tool.exclusive

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """The real tool's validation."""
        return self.tool.parse_arguments(arguments)

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """The next recorded result for these arguments; `UnrecordedCallError` when none is
        left (the model reads it as the call's error result)."""
        return served_value(self.recorded.take(self.tool, arguments))


def serve(
    responses: Sequence[ModelResponse], results: Mapping[str, ToolResult], tools: Sequence[Tool]
) -> list[Tool]:
    """`tools` wrapped to answer from a recording: its model `responses` in order and its tool
    `results` by call id (one queue for them all)."""
    for tool in tools:
        if not isinstance(tool, Tool):
            rule = "a sequence of tools (each with name, spec, parse_arguments and invoke)"
            raise ConfigurationError.invalid("Cassette.recorded_tools(tools)", tools, rule)
    by_name = {tool.name: tool for tool in tools}
    pairs = [
        (call, results[call.id])
        for response in responses
        for call in response.message.tool_calls
        if call.id in results and _ran(results[call.id])
    ]
    recorded = _Recorded(by_name, pairs)
    return [ServedTool(tool, recorded) for tool in tools]

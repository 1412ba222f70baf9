"""MCP servers in the loop, end to end: a scripted model calls real servers' tools through
`ReActLoop(tools=[MCPServerStdio(...), MCPServerHTTP(...)])`, on asyncio and on trio."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import orjson
import pytest

from reactloop import ConfigurationError, MemoryStore, ReActLoop, StopReason
from reactloop._core._contracts import Hook
from reactloop._core._decisions import HookDecision
from reactloop._core._messages import ToolCall
from reactloop._core._state import ToolResult
from reactloop._errors import (
    ErrorCode,
    ReactLoopError,
    ToolExecutionError,
    ToolsetConnectionError,
)
from reactloop._loop._run import Run
from reactloop.testing import ScriptedModel, call
from tests.helpers.mcp_helpers import alive, children, eventually, http, http_server, stdio_server
from tests.helpers.mcp_helpers import time_server as time
from tests.tools.test_mcp import over_http

pytestmark = pytest.mark.anyio


@pytest.fixture
def url() -> Iterator[str]:
    """The test server over streamable HTTP, for this test alone."""
    with http_server() as served:
        yield served


async def test_the_model_calls_the_time_servers_tool() -> None:
    model = ScriptedModel([call("get_current_time", timezone="Asia/Tokyo"), "done"])
    result = await ReActLoop(model, tools=[time()]).run("what time is it in Tokyo?")
    answer = result.steps[0].tool_results[0]
    assert not answer.is_error
    assert orjson.loads(answer.content)["timezone"] == "Asia/Tokyo"
    assert [spec.name for spec in model.requests[0].tools] == ["get_current_time", "convert_time"]
    assert not children("mcp-server-time")  # the run opened the server and stopped it


async def test_an_is_error_answer_is_an_error_result_the_model_reads() -> None:
    model = ScriptedModel([call("get_current_time", timezone="Mars/Olympus"), "done"])
    result = await ReActLoop(model, tools=[time()]).run("go")
    failed = result.steps[0].tool_results[0]
    assert failed.is_error and failed.error_code is ErrorCode.TOOL_ERROR
    assert "Mars/Olympus" in failed.content
    assert result.stop_reason is StopReason.COMPLETED


async def test_invalid_arguments_never_reach_the_server() -> None:
    model = ScriptedModel([call("get_current_time", zone="UTC"), "done"])
    result = await ReActLoop(model, tools=[time()]).run("go")
    refused = result.steps[0].tool_results[0]
    assert refused.is_error
    assert "invalid arguments" in refused.content and "timezone" in refused.content


@over_http
async def test_a_hanging_call_times_out_and_the_server_is_told(url: str) -> None:
    label = f"loop-{anyio.get_current_task().id}"
    model = ScriptedModel([call("hang", label=label), call("cancelled_calls"), "done"])
    loop = ReActLoop(model, tools=[http(url, timeout=0.5)])
    result = await loop.run("go")
    timed_out = result.steps[0].tool_results[0]
    assert timed_out.is_error and timed_out.error_code is ErrorCode.TIMEOUT
    assert label in result.steps[1].tool_results[0].content


class _CancelAfterPid(Hook):
    """Remembers the server's pid, and cancels the run soon after."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.scope = scope
        self.pid = 0

    async def after_tool_call(
        self, run: Run, call: ToolCall, result: ToolResult
    ) -> HookDecision[ToolResult] | None:
        if call.name == "pid":
            self.pid = int(result.content)
            self.scope.deadline = anyio.current_time() + 0.3
        return None


async def test_a_run_cancelled_mid_call_leaves_no_process_behind() -> None:
    model = ScriptedModel([call("pid"), call("hang"), "done"])
    with anyio.CancelScope() as scope:
        watcher = _CancelAfterPid(scope)
        loop = ReActLoop(model, tools=[stdio_server()], hooks=[watcher])
        await loop.run("go")
    assert scope.cancelled_caught
    assert watcher.pid and not alive(watcher.pid)


async def test_a_server_killed_mid_run_gives_an_error_result_and_is_restarted() -> None:
    model = ScriptedModel([call("crash"), call("echo", text="still here"), "done"])
    result = await ReActLoop(model, tools=[stdio_server()]).run("go")
    crashed, echoed = (step.tool_results[0] for step in result.steps[:2])
    assert crashed.is_error and "closed the connection" in crashed.content
    assert echoed.content == "still here"


class _Errors(Hook):
    """Collects the typed errors the loop reports."""

    def __init__(self) -> None:
        self.seen: list[ReactLoopError] = []

    async def on_error(self, run: Run, error: ReactLoopError) -> None:
        self.seen.append(error)


async def test_a_crash_is_reported_as_a_typed_toolset_error() -> None:
    errors = _Errors()
    model = ScriptedModel([call("crash"), "done"])
    await ReActLoop(model, tools=[stdio_server()], hooks=[errors]).run("go")
    [error] = errors.seen
    assert isinstance(error, ToolExecutionError)
    assert isinstance(error.__cause__, ToolsetConnectionError)


async def test_colliding_names_without_a_prefix_fail_the_run_naming_both() -> None:
    model = ScriptedModel(["done"])
    loop = ReActLoop(model, tools=[stdio_server(name="one"), stdio_server(name="two")])
    result = await loop.run("go")
    assert isinstance(result.error, ConfigurationError)
    assert "toolset 'one'" in str(result.error) and "toolset 'two'" in str(result.error)


async def test_prefixes_let_two_servers_with_the_same_tools_share_a_loop() -> None:
    model = ScriptedModel([call("a_echo", text="1"), call("b_echo", text="2"), "done"])
    servers = [stdio_server(prefix="a"), stdio_server(prefix="b")]
    result = await ReActLoop(model, tools=servers).run("go")
    assert [step.tool_results[0].content for step in result.steps[:2]] == ["1", "2"]


async def test_approval_applies_to_an_mcp_tool() -> None:
    model = ScriptedModel([call("echo", text="x"), "done"])
    server = stdio_server(requires_approval=["echo"])
    result = await ReActLoop(model, tools=[server], store=MemoryStore()).run("go")
    assert [pending.tool for pending in result.pending] == ["echo"]


async def test_async_with_loop_keeps_one_server_process_for_every_run() -> None:
    model = ScriptedModel([call("pid"), "a", call("pid"), "b"])
    loop = ReActLoop(model, tools=[stdio_server()])
    async with loop:
        first = await loop.run("one")
        second = await loop.run("two")
    pid = int(first.steps[0].tool_results[0].content)
    assert second.steps[0].tool_results[0].content == str(pid)
    await eventually(lambda: not alive(pid))

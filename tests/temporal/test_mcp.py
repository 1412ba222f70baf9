"""MCP servers on Temporal: the toolsets' listing and each MCP call are activities run on the
worker, against a real server process (the worker holds one connection per server for its
life); the run ends as it ends locally, approvals of MCP tools hold as locally, and the history
replays."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import anyio
import orjson
import pytest
from temporalio.client import Client

from reactloop import Approve, MemoryStore, ReActLoop, RunResult
from reactloop._temporal._toolsets import SpecTool, listed
from reactloop._temporal._worker import worker_for
from reactloop._tools._mcp._servers import MCPServerStdio
from reactloop.errors import ToolArgumentsError, ToolsetConnectionError
from reactloop.models import ModelResponse
from reactloop.temporal import ActivityOptions, TemporalLoop, ToolActivity, temporal_worker
from reactloop.testing import ScriptedModel, call, reply
from reactloop.tools import Tool
from tests.helpers.mcp_helpers import children, http, http_server, stdio_server
from tests.temporal.flow import WORKFLOWS, shown
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


@pytest.fixture
def url() -> Iterator[str]:
    """The test server over streamable HTTP, for this test alone."""
    with http_server() as served:
        yield served


SERVER = "tests.helpers.mcp_server"


@pytest.fixture
def ours() -> Callable[[], set[int]]:
    """The test's own server processes: those alive now that were not before it began (another
    module's server may still be on its way out)."""
    before = children(SERVER)
    return lambda: children(SERVER) - before


def _script() -> list[ModelResponse]:
    return [
        reply("Echoing.", call("echo", text="hi", times=2)),
        reply("Failing.", call("fail", message="no luck")),
        reply("Wrong.", call("echo", words="hi")),  # refused in the workflow: never sent
        reply("Done."),
    ]


async def _activity_types(client: Client, workflow_id: str) -> list[str]:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
    ]


def _same_run(result: RunResult[Any], local: RunResult[Any]) -> None:
    assert (result.output, result.stop_reason, result.messages, result.tools_used) == (
        local.output,
        local.stop_reason,
        local.messages,
        local.tools_used,
    )


async def test_mcp_calls_run_on_the_worker_and_the_run_ends_as_locally(
    temporal_dev: Client, task_queue: str, ours: Callable[[], set[int]]
) -> None:
    script = _script()
    local = await ReActLoop(ScriptedModel(script), tools=[stdio_server()]).run("go")
    mcp = TemporalLoop(ReActLoop(ScriptedModel(script), tools=[stdio_server()]), name="mcp")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(60):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[mcp]):
            assert len(ours()) == 1  # the worker holds the server's connection
            result = await mcp.run(temporal_dev, "go", run_id=run_id, task_queue=task_queue)
        assert not ours()  # and stops it with the worker
    _same_run(result, local)
    results = [step.tool_results[0] for step in result.steps[:3]]
    assert (results[0].content, results[0].is_error) == ("hihi", False)
    assert results[1].is_error and "MCPToolError" in results[1].content
    assert results[2].is_error and "invalid arguments" in results[2].content
    kinds = await _activity_types(temporal_dev, mcp.workflow_id(run_id))
    assert kinds.count("mcp.tool") == 2  # the refused call never reached the worker
    assert kinds.count("mcp.toolsets") == 4  # one listing per step (the run's opening shares it)
    await assert_replays(temporal_dev, mcp.workflow_id(run_id), WORKFLOWS)


def _pids(result: RunResult[Any]) -> Sequence[int]:
    return [int(orjson.loads(step.tool_results[0].content)) for step in result.steps[:2]]


async def test_a_workers_calls_share_its_connection_to_the_server(
    temporal_dev: Client, task_queue: str, ours: Callable[[], set[int]]
) -> None:
    script: list[Any] = [call("pid"), call("pid"), "Done."]
    mcp = TemporalLoop(ReActLoop(ScriptedModel(script), tools=[stdio_server()]), name="mcp")
    with anyio.fail_after(60):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[mcp]):
            (held,) = ours()
            result = await mcp.run(temporal_dev, "go", task_queue=task_queue)
    assert _pids(result) == [held, held]


async def test_an_mcp_tool_needing_approval_waits_in_the_workflow_then_runs_once(
    temporal_dev: Client, task_queue: str
) -> None:
    script: list[Any] = [call("echo", text="ok"), "Done."]

    def loop() -> ReActLoop[None]:
        server = stdio_server(requires_approval=["echo"])
        return ReActLoop(ScriptedModel(script), tools=[server], store=MemoryStore())

    mcp = TemporalLoop(loop(), name="mcp")
    local = loop()
    paused = await local.run("go")
    decisions = {held.call_id: Approve() for held in paused.pending}
    local_result = await local.resume(paused.run_id, decisions=decisions)
    with anyio.fail_after(60):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[mcp]):
            run = await mcp.start(temporal_dev, "go", task_queue=task_queue)
            assert "RunPaused" in shown([event async for event in run.events()])
            (held,) = await run.pending()
            assert await _activity_types(temporal_dev, run.workflow_id) == [
                "mcp.toolsets",
                "mcp.model",
            ]
            await run.decide({held.call_id: Approve()})
            result = await run.result()
    _same_run(result, local_result)
    assert result.steps[0].tool_results[0].content == "ok"
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


async def test_a_server_entered_by_its_owner_is_used_by_the_worker_and_left_open(
    temporal_dev: Client, task_queue: str, ours: Callable[[], set[int]]
) -> None:
    server = stdio_server()
    script: list[Any] = [call("pid"), call("pid"), "Done."]
    mcp = TemporalLoop(ReActLoop(ScriptedModel(script), tools=[server]), name="mcp")
    with anyio.fail_after(60):
        async with server:
            (held,) = ours()
            async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[mcp]):
                result = await mcp.run(temporal_dev, "go", task_queue=task_queue)
            assert ours() == {held}  # the worker left it to its owner
    assert _pids(result) == [held, held]
    assert not ours()


async def test_an_http_servers_tools_run_on_temporal_as_locally(
    temporal_dev: Client, task_queue: str, url: str
) -> None:
    script = [reply("Measuring.", call("measure", text="abc")), reply("Done.")]
    local = await ReActLoop(ScriptedModel(script), tools=[http(url)]).run("go")
    mcp = TemporalLoop(ReActLoop(ScriptedModel(script), tools=[http(url)]), name="mcp")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(60):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[mcp]):
            result = await mcp.run(temporal_dev, "go", run_id=run_id, task_queue=task_queue)
    _same_run(result, local)
    assert not result.steps[0].tool_results[0].is_error
    kinds = await _activity_types(temporal_dev, mcp.workflow_id(run_id))
    assert kinds == ["mcp.toolsets", "mcp.model", "mcp.tool", "mcp.toolsets", "mcp.model"]
    await assert_replays(temporal_dev, mcp.workflow_id(run_id), WORKFLOWS)


async def test_a_worker_holding_no_connection_connects_for_each_activity(
    temporal_dev: Client, task_queue: str, ours: Callable[[], set[int]]
) -> None:
    script: list[Any] = [call("pid"), call("pid"), "Done."]
    mcp = TemporalLoop(ReActLoop(ScriptedModel(script), tools=[stdio_server()]), name="mcp")
    with anyio.fail_after(60):
        async with worker_for(temporal_dev, task_queue=task_queue, loops=[mcp]):  # none opened
            assert not ours()
            result = await mcp.run(temporal_dev, "go", task_queue=task_queue)
    first, second = _pids(result)
    assert first != second  # a server process per call, stopped after it
    assert not ours()


async def test_a_server_that_cannot_start_ends_the_run_as_it_ends_locally(
    temporal_dev: Client, task_queue: str
) -> None:
    def loop() -> ReActLoop[str]:
        missing = MCPServerStdio("/nonexistent/mcp-server", connect_timeout=5)
        return ReActLoop(ScriptedModel(["Done."]), tools=[missing])

    local = await loop().run("go")
    mcp = TemporalLoop(loop(), name="mcp")
    run_id = uuid.uuid4().hex
    with anyio.fail_after(60):
        async with worker_for(temporal_dev, task_queue=task_queue, loops=[mcp]):
            result = await mcp.run(temporal_dev, "go", run_id=run_id, task_queue=task_queue)
    assert (result.stop_reason, result.stop_detail) == (local.stop_reason, local.stop_detail)
    assert isinstance(local.error, ToolsetConnectionError)
    assert result.error is not None  # as a stored run's: its message and code, not its class
    assert (str(result.error), result.error.code) == (str(local.error), local.error.code)
    assert "/nonexistent/mcp-server" in result.stop_detail
    await assert_replays(temporal_dev, mcp.workflow_id(run_id), WORKFLOWS)


@pytest.mark.parametrize(
    "arguments",
    ['{"text": "hi"}', '{"text": "hi", "times": 2}', '{"times": 2}', '{"text": 3}', "[1]", "{", ""],
)
async def test_a_listed_tool_checks_arguments_in_the_workflow_as_the_mcp_tool_does(
    arguments: str,
) -> None:
    async with stdio_server() as server:
        assert server.open_source is not None
        tools = await server.open_source.list_tools()
    (echo,) = [tool for tool in tools if tool.name == "echo"]
    stand_in = SpecTool(listed(echo))
    assert (stand_in.spec, stand_in.timeout) == (echo.spec, echo.timeout)
    assert _checked(stand_in, arguments) == _checked(echo, arguments)


def _checked(tool: Tool, arguments: str) -> object:
    try:
        return tool.parse_arguments(arguments)
    except ToolArgumentsError as error:
        return str(error)


async def test_a_worker_whose_server_cannot_start_does_not_start(
    temporal_dev: Client, task_queue: str
) -> None:
    missing = MCPServerStdio("/nonexistent/mcp-server", connect_timeout=5)
    mcp = TemporalLoop(ReActLoop(ScriptedModel(["Done."]), tools=[missing]), name="mcp")
    with pytest.raises(ToolsetConnectionError, match="/nonexistent/mcp-server"):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[mcp]):
            pytest.fail("the worker started without its MCP server")


async def test_a_trio_backend_for_every_tool_leaves_mcp_calls_on_the_workers_loop(
    temporal_dev: Client, task_queue: str
) -> None:
    trio_everywhere = ActivityOptions(default_tool=ToolActivity(backend="trio"))
    script: list[Any] = [call("echo", text="hi"), "Done."]
    loop = ReActLoop(ScriptedModel(script), tools=[stdio_server()])
    mcp = TemporalLoop(loop, name="mcp", activities=trio_everywhere)
    with anyio.fail_after(60):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[mcp]):
            result = await mcp.run(temporal_dev, "go", task_queue=task_queue)
    echoed = result.steps[0].tool_results[0]
    assert (echoed.content, echoed.is_error) == ("hi", False)  # on its connection's loop

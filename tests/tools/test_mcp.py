"""MCP servers as toolsets, against real servers: `mcp-server-time` over stdio, and the test server
(tests/helpers/mcp_server.py) over stdio and over streamable HTTP on loopback. Every async test runs
on asyncio and on trio."""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import anyio
import orjson
import pytest

from reactloop._core._state import RunContext
from reactloop._errors import (
    ConfigurationError,
    MCPToolError,
    ToolArgumentsError,
    ToolsetConnectionError,
    ToolsetError,
)
from reactloop._tools._mcp._connection import Connection, server_errlog
from reactloop._tools._mcp._servers import ServerRestartPolicy
from reactloop._tools._mcp._tools import MCPTool
from reactloop.messages import AudioPart, DocumentPart, ImagePart, TextPart
from reactloop.testing import make_run
from tests.helpers.mcp_helpers import (
    alive,
    by_remote,
    children,
    eventually,
    http,
    http_server,
    stdio_server,
    time_server,
)
from tests.helpers.mcp_server import PDF, PNG, WAV

pytestmark = pytest.mark.anyio

# On trio, the SDK's streamable HTTP client leaves its httpx2 response iterators for the garbage
# collector to close, and trio reports a ResourceWarning for each (on asyncio there are none);
# the calls themselves work. The HTTP tests ignore exactly these warnings.
SDK_HTTP_ON_TRIO = [
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2.:ResourceWarning"),
]


def over_http(test: Any) -> Any:
    """Mark a test that talks to an HTTP server (see SDK_HTTP_ON_TRIO)."""
    for mark in SDK_HTTP_ON_TRIO:
        test = mark(test)
    return test


@pytest.fixture(scope="session")
def mcp_url() -> Iterator[str]:
    """The test server over streamable HTTP, shared by the tests that do not change it."""
    with http_server() as url:
        yield url


@pytest.fixture
def fresh_url() -> Iterator[str]:
    """A test server of the test's own (it grows a tool or is killed)."""
    with http_server() as url:
        yield url


def context() -> RunContext[Any]:
    """The run context a tool is invoked with."""
    return make_run().context


async def invoke(tool: MCPTool, **arguments: Any) -> object:
    """Validate the arguments as the loop does, then call the tool."""
    return await tool.invoke(tool.parse_arguments(orjson.dumps(arguments).decode()), context())


async def test_the_time_servers_tools_are_listed_with_their_schemas_as_they_are() -> None:
    async with time_server().connect() as source:
        tools = by_remote(await source.list_tools())
    assert set(tools) == {"get_current_time", "convert_time"}
    spec = tools["get_current_time"].spec
    assert spec.name == "get_current_time"
    assert spec.parameters["required"] == ["timezone"]
    assert spec.parameters["title"] == "get_current_timeArguments"  # as the server wrote it


async def test_the_list_is_cached_while_unchanged() -> None:
    async with time_server().connect() as source:
        first = await source.list_tools()
        assert await source.list_tools() is first


async def test_a_time_server_call_returns_its_structured_content_as_json() -> None:
    async with time_server().connect() as source:
        tools = by_remote(await source.list_tools())
        answer = await invoke(tools["get_current_time"], timezone="Europe/Paris")
    assert isinstance(answer, str)
    assert orjson.loads(answer)["timezone"] == "Europe/Paris"


async def test_a_time_server_error_is_an_mcp_tool_error_with_its_text() -> None:
    async with time_server().connect() as source:
        tools = by_remote(await source.list_tools())
        with pytest.raises(MCPToolError, match="Nowhere/Land") as caught:
            await invoke(tools["get_current_time"], timezone="Nowhere/Land")
    assert caught.value.tool_name == "get_current_time"


@over_http
async def test_text_results_are_text_and_an_image_is_an_image_part(mcp_url: str) -> None:
    async with http(mcp_url).connect() as source:
        tools = by_remote(await source.list_tools())
        assert await invoke(tools["echo"], text="ab", times=2) == "abab"
        assert await invoke(tools["measure"], text="a b c") == '{"length":5,"words":3}'
        picture = await invoke(tools["picture"])
    assert picture == [TextPart("a blank picture"), ImagePart(PNG, media_type="image/png")]


async def test_audio_an_embedded_pdf_and_a_link_reach_the_tool_as_parts_and_notes() -> None:
    async with stdio_server().connect() as source:
        tools = by_remote(await source.list_tools())
        media = await invoke(tools["media"])
    assert media == [
        AudioPart(WAV, "wav"),
        TextPart("[audio/x-tracker, 300 bytes, not shown: no content part takes this media type]"),
        DocumentPart(PDF, media_type="application/pdf", title="report.pdf"),
        TextPart("the notes\n[resource link file:///docs/big.csv (big), not fetched]"),
    ]


@over_http
async def test_is_error_raises_the_servers_message(mcp_url: str) -> None:
    async with http(mcp_url).connect() as source:
        tools = by_remote(await source.list_tools())
        with pytest.raises(MCPToolError, match="boom"):
            await invoke(tools["fail"], message="boom")


@over_http
async def test_arguments_are_checked_against_the_servers_schema(mcp_url: str) -> None:
    async with http(mcp_url).connect() as source:
        echo = by_remote(await source.list_tools())["echo"]
    with pytest.raises(ToolArgumentsError, match="missing required properties"):
        echo.parse_arguments('{"times": 2}')
    with pytest.raises(ToolArgumentsError, match="expected integer"):
        echo.parse_arguments('{"text": "a", "times": "two"}')
    with pytest.raises(ToolArgumentsError, match="JSON object"):
        echo.parse_arguments("[1]")


@over_http
async def test_headers_reach_the_http_server(mcp_url: str) -> None:
    server = http(mcp_url, headers={"X-Tenant": "acme"})
    async with server.connect() as source:
        header = by_remote(await source.list_tools())["header"]
        assert await invoke(header, name="X-Tenant") == "acme"


async def test_a_stdio_servers_stderr_lines_go_to_the_reactloop_logger_not_the_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="reactloop.mcp")
    env = {"REACTLOOP_MCP_STDERR": "server says hi\nand more"}
    with (tmp_path / "stderr").open("w") as stderr:
        monkeypatch.setattr(sys, "stderr", stderr)
        async with stdio_server(env=env, name="notes").connect() as source:
            assert await source.list_tools()
    assert (tmp_path / "stderr").read_text() == ""
    logged = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert ("reactloop.mcp", logging.INFO, "MCP server notes: server says hi") in logged
    assert ("reactloop.mcp", logging.INFO, "MCP server notes: and more") in logged


async def test_a_stdio_servers_stderr_goes_to_the_stderr_of_the_moment_when_inherited(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env = {"REACTLOOP_MCP_STDERR": "server says hi"}
    with (tmp_path / "stderr").open("w") as stderr:
        monkeypatch.setattr(sys, "stderr", stderr)
        async with stdio_server(env=env, stderr="inherit").connect() as source:
            assert await source.list_tools()
    assert "server says hi" in (tmp_path / "stderr").read_text()


def test_stderr_is_log_or_inherit() -> None:
    with pytest.raises(ConfigurationError, match=r"MCPServerStdio.stderr must be 'log'.*'loud'"):
        stdio_server(stderr="loud")


async def test_a_stdio_server_starts_when_stderr_has_no_file_descriptor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # as in a notebook
    async with time_server(stderr="inherit").connect() as source:
        assert await source.list_tools()


def test_a_stdio_servers_stderr_goes_nowhere_when_no_stream_has_a_descriptor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(sys, "__stderr__", None)
    errlog: object = server_errlog()
    assert errlog == subprocess.DEVNULL


async def test_env_reaches_the_stdio_server() -> None:
    async with stdio_server(env={"REACTLOOP_MCP_TEST": "hello"}).connect() as source:
        environment = by_remote(await source.list_tools())["environment"]
        assert await invoke(environment, name="REACTLOOP_MCP_TEST") == "hello"


@over_http
async def test_list_changed_refreshes_the_cached_list(fresh_url: str) -> None:
    async with http(fresh_url, prefix="s").connect() as source:
        before = await source.list_tools()
        await invoke(by_remote(before)["grow"], name="extra")

        async def refreshed() -> bool:
            return await source.list_tools() is not before

        await eventually(refreshed)
        after = await source.list_tools()
        assert [tool.name for tool in after] == [*(t.name for t in before), "s_extra"]
        assert after[0] is before[0]  # an unchanged tool is kept (its schema compiled once)
        assert await invoke(by_remote(after)["extra"]) == "extra here"


@over_http
async def test_a_prefix_keeps_two_servers_tools_apart(mcp_url: str) -> None:
    first = http(mcp_url, prefix="a", headers={"X-Which": "first"})
    second = http(mcp_url, prefix="b", headers={"X-Which": "second"})
    async with first.connect() as one, second.connect() as two:
        listed = [*by_remote(await one.list_tools()).values()]
        listed += by_remote(await two.list_tools()).values()
        tools = {tool.name: tool for tool in listed}
        assert await invoke(tools["a_header"], name="X-Which") == "first"
        assert await invoke(tools["b_header"], name="X-Which") == "second"


@over_http
async def test_without_a_prefix_two_servers_offer_the_same_names(mcp_url: str) -> None:
    async with http(mcp_url).connect() as one, stdio_server().connect() as two:
        names = {tool.name for tool in await one.list_tools()}
        assert names & {tool.name for tool in await two.list_tools()} >= {"echo", "header"}


@over_http
async def test_a_name_filter_offers_only_those_tools(mcp_url: str) -> None:
    async with http(mcp_url, tool_filter=["echo", "fail"]).connect() as source:
        assert [tool.name for tool in await source.list_tools()] == ["echo", "fail"]


@over_http
async def test_a_predicate_filter_sees_the_servers_tool(mcp_url: str) -> None:
    def described_as_failing(tool: Any) -> bool:
        return "fails" in (tool.description or "")

    async with http(mcp_url, tool_filter=described_as_failing).connect() as source:
        assert [tool.name for tool in await source.list_tools()] == ["fail"]


@over_http
async def test_requires_approval_marks_the_named_tools(mcp_url: str) -> None:
    async with http(mcp_url, prefix="x", requires_approval=["fail"]).connect() as source:
        listed = by_remote(await source.list_tools()).values()
        flags = {tool.name: tool.requires_approval for tool in listed}
    assert flags["x_fail"] is True
    assert flags["x_echo"] is False


async def test_a_server_killed_mid_call_is_a_connection_error_then_restarted() -> None:
    async with stdio_server().connect() as source:
        tools = by_remote(await source.list_tools())
        first = await invoke(tools["pid"])
        with pytest.raises(ToolsetConnectionError, match="closed the connection during 'crash'"):
            await invoke(tools["crash"])
        await eventually(lambda: not alive(int(str(first))))
        second = await invoke(tools["pid"])
        assert second != first
        assert alive(int(str(second)))


async def test_a_server_that_died_between_calls_is_restarted_for_the_next_one() -> None:
    async with stdio_server().connect() as source:
        connection = cast(Connection, source)
        tools = by_remote(await source.list_tools())
        pid = int(str(await invoke(tools["pid"])))
        os.kill(pid, signal.SIGKILL)
        await eventually(lambda: not connection.running)  # its stdout closed: seen at once
        assert await invoke(tools["echo"], text="back") == "back"
        assert connection.restarts == 1


async def test_restarts_stop_at_the_policys_limit() -> None:
    server = stdio_server(restart=ServerRestartPolicy(max_restarts=0))
    async with server.connect() as source:
        tools = by_remote(await source.list_tools())
        with pytest.raises(ToolsetConnectionError):
            await invoke(tools["crash"])
        with pytest.raises(ToolsetConnectionError, match=r"max_restarts=0"):
            await invoke(tools["echo"], text="again")


async def test_a_call_that_succeeds_counts_the_restarts_from_zero_again() -> None:
    server = stdio_server(restart=ServerRestartPolicy(max_restarts=1))
    async with server.connect() as source:
        connection = cast(Connection, source)
        tools = by_remote(await source.list_tools())
        for _ in range(3):
            with pytest.raises(ToolsetConnectionError, match="closed the connection"):
                await invoke(tools["crash"])
            assert await invoke(tools["echo"], text="back") == "back"
        assert connection.restarts == 3


@over_http
async def test_an_http_server_killed_mid_call_gives_errors_not_a_hang(fresh_url: str) -> None:
    async with http(fresh_url, connect_timeout=5).connect() as source:
        tools = by_remote(await source.list_tools())
        with anyio.fail_after(20):
            with pytest.raises(ToolsetConnectionError):
                await invoke(tools["crash"])
            with pytest.raises(ToolsetConnectionError):
                await invoke(tools["echo"], text="anyone?")


@over_http
async def test_cancelling_a_call_tells_the_server(mcp_url: str) -> None:
    async with http(mcp_url).connect() as source, http(mcp_url).connect() as observer:
        hang = by_remote(await source.list_tools())["hang"]
        cancelled = by_remote(await observer.list_tools())["cancelled_calls"]
        label = f"cancel-{anyio.get_current_task().id}"
        with anyio.move_on_after(0.5):
            await invoke(hang, label=label)

        async def told() -> bool:
            return label in str(await invoke(cancelled))

        await eventually(told)


async def test_cancelling_mid_call_leaves_no_process_behind() -> None:
    pids: list[int] = []
    with anyio.CancelScope() as scope:
        async with stdio_server().connect() as source:
            tools = by_remote(await source.list_tools())
            pids.append(int(str(await invoke(tools["pid"]))))
            scope.deadline = anyio.current_time() + 0.3
            await invoke(tools["hang"])
    assert scope.cancelled_caught
    assert not alive(pids[0])


async def test_the_time_server_process_is_gone_after_an_error_in_the_block() -> None:
    async def fail_inside() -> None:
        async with time_server().connect() as source:
            await source.list_tools()
            assert children("mcp-server-time")
            raise LookupError("in the block")

    with pytest.raises(LookupError, match="in the block"):  # as it came, not in a group
        await fail_inside()
    assert not children("mcp-server-time")


async def test_entering_the_server_shares_one_connection_and_leaving_stops_it() -> None:
    server = stdio_server()
    assert server.open_source is None
    async with server:
        source = server.open_source
        assert source is not None
        pid = int(str(await invoke(by_remote(await source.list_tools())["pid"])))
        with pytest.raises(ToolsetError, match="already entered"):
            await server.__aenter__()
        assert server.open_source is source
    assert server.open_source is None
    assert not alive(pid)


async def test_an_error_in_an_entered_servers_block_leaves_as_it_came() -> None:
    server = stdio_server()
    pids: list[int] = []

    async def fail_inside() -> None:
        async with server:
            assert server.open_source is not None
            pid = by_remote(await server.open_source.list_tools())["pid"]
            pids.append(int(str(await invoke(pid))))
            raise LookupError("in the block")

    with pytest.raises(LookupError, match="in the block"):
        await fail_inside()
    assert server.open_source is None
    assert not alive(pids[0])


async def test_a_server_that_cannot_start_is_a_connection_error() -> None:
    server = stdio_server()
    server.command = "/nonexistent/mcp-server"
    with pytest.raises(ToolsetConnectionError, match="could not be started"):
        async with server.connect():
            pass


async def test_an_http_server_nobody_serves_is_a_connection_error() -> None:
    with pytest.raises(ToolsetConnectionError, match="could not be started or reached"):
        async with http("http://127.0.0.1:1/mcp").connect():
            pass


async def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    silent = stdio_server(connect_timeout=0.5)
    silent.args = ("-c", "import time; time.sleep(60)")
    with pytest.raises(ToolsetConnectionError, match=r"handshake within 0.5 s"):
        async with silent.connect():
            pass
    assert not children("time.sleep(60)")


@over_http
async def test_a_closed_connections_tools_refuse_calls(mcp_url: str) -> None:
    async with http(mcp_url).connect() as source:
        echo = by_remote(await source.list_tools())["echo"]
    with pytest.raises(ToolsetError, match="connection is closed"):
        await invoke(echo, text="late")

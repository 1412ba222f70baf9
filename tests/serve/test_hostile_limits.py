"""An operator's review of the served endpoints over loopback (Hypercorn, asyncio and trio): the
per-user limit under a burst of concurrent starts, a client that never reads its stream, a client
gone before its stream started, and the server stopping while runs stream."""

from __future__ import annotations

import socket
from functools import partial
from typing import Any

import anyio
import httpx
import orjson
import pytest

from reactloop import ReActLoop, StopReason
from reactloop.serve import ChatServer, DisconnectPolicy, ServeOptions
from reactloop.stores import MemoryStore
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel, call, reply
from tests.serve.server import served

pytestmark = pytest.mark.anyio

HANG = 20.0


def start(run: str, thread: str | None = None) -> dict[str, Any]:
    message = {"id": f"{run}-u", "role": "user", "content": "go"}
    return {"threadId": thread or f"t-{run}", "runId": run, "messages": [message]}


def gated() -> tuple[ReActLoop[Any], FakeTool, anyio.Event]:
    """A loop whose every run calls a tool that waits for the test's gate."""
    gate = anyio.Event()
    tool = FakeTool("slow", gate=gate)

    def answer(request: Any) -> Any:
        return "Done." if len(request.messages) > 1 else reply("", call("slow"))

    return ReActLoop(FunctionModel(answer), tools=[tool]), tool, gate


async def test_a_burst_of_starts_never_exceeds_the_per_user_limit() -> None:
    loop, tool, gate = gated()
    server = ChatServer(loop, ServeOptions(max_runs_per_user=2))
    statuses: list[int] = []
    refused = anyio.Event()

    async def post(client: httpx.AsyncClient, n: int) -> None:
        response = await client.post("/ag-ui", json=start(f"r{n}"))
        statuses.append(response.status_code)
        if statuses.count(429) == 6:
            refused.set()

    async with served(server.asgi()) as url, httpx.AsyncClient(base_url=url, timeout=HANG) as c:
        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(post, c, n)
                await refused.wait()  # six refused while two stream: now let those two end
                gate.set()
    assert sorted(statuses) == [200, 200] + [429] * 6
    assert len(tool.calls) == 2


def long_answer(request: Any) -> Any:
    return "word " * 200_000  # 1 MB of text: more than the sockets between hold


async def test_a_client_that_never_reads_its_stream_does_not_hold_its_run_back() -> None:
    loop = ReActLoop(FunctionModel(long_answer), store=MemoryStore())
    server = ChatServer(loop)
    body = orjson.dumps(start("r-slow"))
    attached, attach = anyio.Event(), server.host.attach

    def attaching(live: Any) -> None:
        attach(live)
        attached.set()

    server.host.attach = attaching  # type: ignore[method-assign]
    async with served(server.asgi()) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((host, int(port)))
            sock.sendall(
                b"POST /ag-ui HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )  # and never read a byte
            with anyio.fail_after(HANG):
                await attached.wait()  # its stream began
                live = await server.host.find("r-slow", "anonymous", {})
                assert live is not None
                async for _ in live.follow():
                    pass
                assert live.subscribers == 1  # its stream is still far behind, writing
    assert live.result is not None and live.result.stop_reason is StopReason.COMPLETED


async def test_a_client_gone_before_its_stream_started_interrupts_its_run() -> None:
    gate = anyio.Event()
    tool = FakeTool("slow", gate=gate)
    loop = ReActLoop(ScriptedModel([reply("", call("slow")), "never"]), tools=[tool])
    entered, release, detached = anyio.Event(), anyio.Event(), anyio.Event()

    async def identify(headers: Any) -> str:
        entered.set()
        await release.wait()  # the client leaves while its request is being answered
        return "alice"

    options = ServeOptions(identify=identify, on_disconnect=DisconnectPolicy.INTERRUPT)
    server = ChatServer(loop, options)
    detach = server.host.detach

    def recording(live: Any, *, disconnected: bool) -> None:
        detach(live, disconnected=disconnected)
        detached.set()

    server.host.detach = recording  # type: ignore[method-assign]
    async with served(server.asgi()) as url, httpx.AsyncClient(base_url=url, timeout=HANG) as c:
        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as group:
                group.start_soon(partial(c.post, "/ag-ui", json=start("r-gone")))
                await entered.wait()
                group.cancel_scope.cancel()  # the client closes its connection
            release.set()
            await detached.wait()
            gate.set()
            live = await server.host.find("r-gone", "alice", {})
            assert live is not None
            async for _ in live.follow():
                pass
    assert live.result is not None and live.result.stop_reason is StopReason.INTERRUPTED


@pytest.mark.parametrize("store", [False, True])
async def test_the_server_stopping_while_runs_stream_ends_them_without_hanging(
    store: bool,
) -> None:
    entered, stalled = anyio.Event(), []

    async def stall(request: Any) -> str:
        stalled.append(request)
        if len(stalled) == 3:  # every run is streaming
            entered.set()
        await anyio.sleep_forever()
        raise AssertionError("never answers")

    loop = ReActLoop(FunctionModel(stall), store=MemoryStore() if store else None)
    server = ChatServer(loop)
    lives = []
    with anyio.fail_after(HANG):
        async with (
            anyio.create_task_group() as clients,
            served(server.asgi(), graceful_timeout=0.5) as url,
        ):
            for n in range(3):
                clients.start_soon(_stream_until_cut, url, f"r{n}")
            await entered.wait()
            for n in range(3):
                lives.append(await server.host.find(f"r{n}", "anonymous", {}))
            # the server stopped while its clients were still reading their streams
    assert not server.started
    assert all(live is not None and live.done for live in lives)


async def _stream_until_cut(url: str, run: str) -> None:
    """Read a run's stream until the server ends or cuts it."""
    async with httpx.AsyncClient(base_url=url, timeout=HANG) as client:
        try:
            async with client.stream("POST", "/ag-ui", json=start(run)) as response:
                async for _ in response.aiter_bytes():
                    pass
        except httpx.RemoteProtocolError:
            pass  # cut mid-stream


async def test_a_body_shorter_than_its_content_length_is_a_408_not_a_held_connection() -> None:
    model = ScriptedModel(["never asked"])
    server = ChatServer(ReActLoop(model), ServeOptions(body_timeout=0.2))
    async with served(server.asgi()) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(
                b"POST /ag-ui HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                b'content-length: 100\r\n\r\n{"threadId":'
            )  # and never the rest
            with anyio.fail_after(HANG):
                answer = b""
                while not answer.endswith(b"}}"):  # the status line, headers, JSON error
                    chunk = await anyio.to_thread.run_sync(sock.recv, 4096)
                    assert chunk, answer  # the server closed before its whole answer
                    answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    error = orjson.loads(body)["error"]
    assert "ServeOptions.body_timeout" in error["rule"] and model.requests == []

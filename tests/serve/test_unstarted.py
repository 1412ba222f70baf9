"""A client whose run started but whose stream never began (it went away first, and the server
cancelled the response; or the response failed before streaming) still counts as a client that
left: with `DisconnectPolicy.INTERRUPT` its run stops at the next safe point instead of running
to its end for no one. Real loopback sockets (Hypercorn, asyncio and trio)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import pytest

from reactloop import StopReason
from reactloop._serve import StreamContext
from reactloop.serve import ChatServer, DisconnectPolicy, ServeOptions
from reactloop.testing import ScriptedModel, call, reply
from tests.serve.hosting import HANG, Gate, finished, loop_of
from tests.serve.plain import PlainAdapter, PlainEncoder
from tests.serve.server import served
from tests.serve.test_app import plain_app

pytestmark = pytest.mark.anyio

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Any, Receive, Send], Awaitable[None]]


def cancelling_on_disconnect(app: App) -> App:
    """`app` behind a server that cancels a request's app when its client goes away, and whose
    responses never start (`http.response.start` waits forever): the client leaves while the
    response is being started."""

    async def wrapped(scope: Any, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        body: list[Message] = []
        while not body or body[-1].get("more_body", False):
            body.append(await receive())

        async def replayed() -> Message:
            if body:
                return body.pop(0)
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def never_starting(message: Message) -> None:
            if message["type"] == "http.response.start":
                await anyio.sleep_forever()
            await send(message)

        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await app(scope, replayed, never_starting)
            group.cancel_scope.cancel()

    return wrapped


async def post_and_leave(url: str, gate: Gate) -> None:
    """POST a turn over a raw socket, and close the connection once the run's tool runs."""
    body = b'{"text": "wait", "run_id": "r1"}'
    head = (
        b"POST / HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n" % len(body)
    )
    port = int(url.rsplit(":", 1)[1])
    with anyio.fail_after(HANG):
        stream = await anyio.connect_tcp("127.0.0.1", port)
        await stream.send(head + body)
        await gate.entered.wait()
        await stream.aclose()


def waiting_server(gate: Gate, adapter: PlainAdapter | None = None) -> tuple[ChatServer, App]:
    model = ScriptedModel([reply("Waiting.", call("wait_here", label="a")), "Done waiting."])
    loop = loop_of(model, gate.tool())
    server = ChatServer(loop, ServeOptions(on_disconnect=DisconnectPolicy.INTERRUPT))
    return server, plain_app(server, adapter)


async def test_a_client_gone_before_its_stream_began_interrupts_its_run() -> None:
    gate = Gate()
    server, app = waiting_server(gate)
    left = anyio.Event()
    detach = server.host.detach

    def detaching(live: Any, *, disconnected: bool) -> None:
        detach(live, disconnected=disconnected)
        left.set()

    server.host.detach = detaching  # type: ignore[method-assign]
    async with served(cancelling_on_disconnect(app)) as url:
        await post_and_leave(url, gate)
        with anyio.fail_after(HANG):
            await left.wait()  # the cancelled response let go of the run
        live = await server.host.find("r1", "anonymous", {})
        assert live is not None
        gate.opened.set()
        end = await finished(live)
    assert end.result.stop_reason is StopReason.INTERRUPTED


class EncoderFailing(PlainAdapter):
    """A protocol whose encoder cannot be made: the response fails before it streams."""

    def encoder(self, context: StreamContext) -> PlainEncoder:
        raise RuntimeError("no encoder today")


async def test_a_run_whose_response_failed_before_streaming_is_interrupted() -> None:
    gate = Gate()
    server, app = waiting_server(gate, EncoderFailing())
    async with served(app) as url:
        port = int(url.rsplit(":", 1)[1])
        body = b'{"text": "wait", "run_id": "r1"}'
        head = b"POST / HTTP/1.1\r\nhost: t\r\ncontent-length: %d\r\n\r\n" % len(body)
        with anyio.fail_after(HANG):
            stream = await anyio.connect_tcp("127.0.0.1", port)
            await stream.send(head + body)
            answer = await stream.receive()
            await stream.aclose()
        assert answer.startswith(b"HTTP/1.1 500")
        live = await server.host.find("r1", "anonymous", {})
        assert live is not None
        gate.opened.set()
        end = await finished(live)
    assert end.result.stop_reason is StopReason.INTERRUPTED

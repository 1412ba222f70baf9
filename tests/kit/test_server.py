"""The kit's loopback server sees a client hang up before its reply is complete (how the
cancellation check knows a cancelled call let go), and only then."""

from __future__ import annotations

import anyio
import pytest
from anyio.abc import SocketStream

from reactloop.testing import WireReply, WireServer

pytestmark = pytest.mark.anyio

ASK = b"POST /answer HTTP/1.1\r\nhost: kit\r\ncontent-length: 2\r\n\r\nhi"


async def receive_until(client: SocketStream, end: bytes) -> None:
    """Read the reply until it ends with `end`."""
    received = b""
    with anyio.fail_after(10):
        while not received.endswith(end):
            received += await client.receive()


async def test_a_client_closing_during_a_held_reply_is_a_hangup() -> None:
    async with WireServer.running() as server:
        hold = anyio.Event()
        server.reply_with(WireReply(200, (b"first",), hold=hold, rest=(b"second",)))
        async with await anyio.connect_tcp("127.0.0.1", server.port) as client:
            await client.send(ASK)
            await receive_until(client, b"first\r\n")
        with anyio.fail_after(10):
            await server.hung_up.wait()
        assert server.hangups == 1
        hold.set()


async def test_a_client_reading_a_whole_reply_is_no_hangup() -> None:
    async with WireServer.running() as server:
        server.reply_with(WireReply(200, (b"whole",)))
        async with await anyio.connect_tcp("127.0.0.1", server.port) as client:
            await client.send(ASK)
            await receive_until(client, b"whole\r\n0\r\n\r\n")
        assert server.requests[0].body == b"hi"
        assert (server.hangups, server.hung_up.is_set()) == (0, False)

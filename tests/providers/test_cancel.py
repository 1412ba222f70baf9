"""Cancelling a call closes its HTTP response: a pool of ONE connection keeps serving afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from reactloop._core._messages import ModelDelta, ModelRequest, UserMessage
from reactloop._providers import AnthropicModel, OpenAIModel
from tests.providers.conftest import API_KEY
from tests.providers.render import openai_json, openai_stream
from tests.providers.wire_server import Ending, Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest((UserMessage("hi"),))
ROUNDS = 15


LIMITS = httpx.Limits(max_connections=1, max_keepalive_connections=1)
TRANSPORT: dict[str, httpx.AsyncHTTPTransport] = {}


@pytest.fixture
async def narrow(server: WireServer) -> AsyncIterator[OpenAIModel]:
    """A model over a pool of one connection that gives up waiting for it after 2 s."""
    transport = httpx.AsyncHTTPTransport(limits=LIMITS)
    TRANSPORT["current"] = transport
    timeout = httpx.Timeout(5.0, pool=2.0)
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:
        yield OpenAIModel("m", api_key=API_KEY, base_url=f"{server.url}/v1", http_client=client)


def assert_pool_quiet() -> None:
    """No pooled connection is still busy with a request, checked at once (before any GC hook
    or finalizer task could tidy up after a leak)."""
    pool = TRANSPORT["current"]._pool  # httpx exposes no public view of its pool
    assert all(c.is_idle() or c.is_closed() for c in pool.connections)


async def still_serves(server: WireServer, model: OpenAIModel) -> None:
    server.reply_with(json_reply(openai_json("still here")))
    assert (await model.request(REQUEST)).message.text == "still here"


async def test_cancelling_between_chunks_frees_the_connection(
    server: WireServer, narrow: OpenAIModel
) -> None:
    server.reply_with(sse_reply(openai_stream("Hello there, this is long")[:4], Ending.STALL))
    for _ in range(ROUNDS):
        with anyio.CancelScope() as scope:

            async def cancel_on_first(delta: ModelDelta, scope: anyio.CancelScope = scope) -> None:
                scope.cancel()

            await narrow.stream(REQUEST, cancel_on_first)
        assert scope.cancelled_caught
        assert_pool_quiet()
    await still_serves(server, narrow)


async def test_cancelling_inside_the_delta_sink_frees_the_connection(
    server: WireServer, narrow: OpenAIModel
) -> None:
    server.reply_with(sse_reply(openai_stream("Hello there, this is long")))
    for _ in range(ROUNDS):
        with anyio.CancelScope() as scope:

            async def cancel_here(delta: ModelDelta, scope: anyio.CancelScope = scope) -> None:
                scope.cancel()
                await anyio.lowlevel.checkpoint()

            await narrow.stream(REQUEST, cancel_here)
        assert scope.cancelled_caught
        assert_pool_quiet()
    await still_serves(server, narrow)


@pytest.mark.parametrize("streamed", [False, True])
async def test_cancelling_while_waiting_for_the_answer_frees_the_connection(
    server: WireServer, narrow: OpenAIModel, streamed: bool
) -> None:
    arrived = anyio.Event()

    def stall(request: Request) -> Reply:
        arrived.set()
        return Reply(200, (), (("content-type", "text/event-stream"),), Ending.STALL)

    server.handler = stall
    for _ in range(ROUNDS):
        arrived = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_call, narrow, streamed)
            await arrived.wait()
            tasks.cancel_scope.cancel()
        assert_pool_quiet()
    await still_serves(server, narrow)


async def _call(model: OpenAIModel, streamed: bool) -> None:
    async def ignore(delta: ModelDelta) -> None:
        return None

    if streamed:
        await model.stream(REQUEST, ignore)
    else:
        await model.request(REQUEST)


async def test_leaving_the_block_closes_the_own_client(server: WireServer) -> None:
    async with AnthropicModel("m", api_key=API_KEY, base_url=server.url) as model:
        client = model._channel.client
    assert client.is_closed


async def test_a_given_client_stays_open(server: WireServer) -> None:
    async with httpx.AsyncClient() as client:
        async with OpenAIModel("m", api_key=API_KEY, base_url=server.url, http_client=client):
            pass
        assert not client.is_closed

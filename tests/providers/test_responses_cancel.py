"""Cancelling a Responses call closes its HTTP response: a pool of ONE connection keeps serving
afterwards (as for the other providers, tests/providers/test_cancel.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from reactloop._core._messages import ModelDelta, ModelRequest, UserMessage
from reactloop._providers import OpenAIResponsesModel
from tests.providers import test_cancel
from tests.providers.conftest import API_KEY
from tests.providers.render_responses import responses_json, responses_stream
from tests.providers.wire_server import Ending, Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest((UserMessage("hi"),))
ROUNDS = 15


@pytest.fixture
async def narrow(server: WireServer) -> AsyncIterator[OpenAIResponsesModel]:
    """A Responses model over a pool of one connection that gives up waiting for it after 2 s."""
    transport = httpx.AsyncHTTPTransport(limits=test_cancel.LIMITS)
    test_cancel.TRANSPORT["current"] = transport
    timeout = httpx.Timeout(5.0, pool=2.0)
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:
        url = f"{server.url}/v1"
        yield OpenAIResponsesModel("gpt-5", api_key=API_KEY, base_url=url, http_client=client)


async def still_serves(server: WireServer, model: OpenAIResponsesModel) -> None:
    server.reply_with(json_reply(responses_json("still here")))
    assert (await model.request(REQUEST)).message.text == "still here"


async def test_cancelling_between_chunks_frees_the_connection(
    server: WireServer, narrow: OpenAIResponsesModel
) -> None:
    server.reply_with(sse_reply(responses_stream("Hello there, this is long")[:4], Ending.STALL))
    for _ in range(ROUNDS):
        with anyio.CancelScope() as scope:

            async def cancel_on_first(delta: ModelDelta, scope: anyio.CancelScope = scope) -> None:
                scope.cancel()

            await narrow.stream(REQUEST, cancel_on_first)
        assert scope.cancelled_caught
        test_cancel.assert_pool_quiet()
    await still_serves(server, narrow)


@pytest.mark.parametrize("streamed", [False, True])
async def test_cancelling_while_waiting_for_the_answer_frees_the_connection(
    server: WireServer, narrow: OpenAIResponsesModel, streamed: bool
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
        test_cancel.assert_pool_quiet()
    await still_serves(server, narrow)


async def _call(model: OpenAIResponsesModel, streamed: bool) -> None:
    async def ignore(delta: ModelDelta) -> None:
        return None

    if streamed:
        await model.stream(REQUEST, ignore)
    else:
        await model.request(REQUEST)


async def test_leaving_the_block_closes_the_own_client(server: WireServer) -> None:
    async with OpenAIResponsesModel("m", api_key=API_KEY, base_url=server.url) as model:
        client = model._channel.client
    assert client.is_closed

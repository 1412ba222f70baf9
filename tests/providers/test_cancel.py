"""Cancelling a call closes its HTTP response: a pool of ONE connection keeps serving afterwards,
on every provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
import pytest

from reactloop._core._messages import ModelDelta, ModelRequest, UserMessage
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel, OpenAIResponsesModel
from tests.providers.conftest import API_KEY
from tests.providers.render import anthropic_json, anthropic_stream, openai_json, openai_stream
from tests.providers.render_gemini import gemini_answer, gemini_answer_stream
from tests.providers.render_responses import responses_json, responses_stream
from tests.providers.wire_server import Ending, Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest((UserMessage("hi"),))
ROUNDS = 15


LIMITS = httpx.Limits(max_connections=1, max_keepalive_connections=1)
TRANSPORT: dict[str, httpx.AsyncHTTPTransport] = {}


Provider = OpenAIModel | AnthropicModel | OpenAIResponsesModel | GeminiModel
Build = Callable[[str, httpx.AsyncClient], Provider]
Render = Callable[[str], Any]
WIRES: dict[str, tuple[Build, Render, Callable[[str], list[bytes]]]] = {
    "openai": (
        lambda url, client: OpenAIModel(
            "m", api_key=API_KEY, base_url=f"{url}/v1", http_client=client
        ),
        openai_json,
        openai_stream,
    ),
    "anthropic": (
        lambda url, client: AnthropicModel("m", api_key=API_KEY, base_url=url, http_client=client),
        anthropic_json,
        anthropic_stream,
    ),
    "openai-responses": (
        lambda url, client: OpenAIResponsesModel(
            "gpt-5", api_key=API_KEY, base_url=f"{url}/v1", http_client=client
        ),
        responses_json,
        responses_stream,
    ),
    "google": (
        lambda url, client: GeminiModel(
            "gemini-2.5-flash", api_key=API_KEY, base_url=url, http_client=client
        ),
        gemini_answer,
        gemini_answer_stream,
    ),
}
"""Each provider: how to build it over a client, and its answers (whole, and as a stream)."""


@pytest.fixture(params=sorted(WIRES))
async def narrow(request: pytest.FixtureRequest, server: WireServer) -> AsyncIterator[Provider]:
    """Each provider's model over a pool of one connection that gives up waiting for it after
    2 s."""
    build = WIRES[request.param][0]
    transport = httpx.AsyncHTTPTransport(limits=LIMITS)
    TRANSPORT["current"] = transport
    timeout = httpx.Timeout(5.0, pool=2.0)
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:
        yield build(server.url, client)


def answers(model: Provider) -> tuple[Render, Callable[[str], list[bytes]]]:
    """The answers in `model`'s wire format: a whole one, and a stream."""
    _, whole, stream = WIRES[model.provider]
    return whole, stream


def assert_pool_quiet() -> None:
    """No pooled connection is still busy with a request, checked at once (before any GC hook
    or finalizer task could tidy up after a leak)."""
    pool = TRANSPORT["current"]._pool  # httpx exposes no public view of its pool
    assert all(c.is_idle() or c.is_closed() for c in pool.connections)


async def still_serves(server: WireServer, model: Provider) -> None:
    server.reply_with(json_reply(answers(model)[0]("still here")))
    assert (await model.request(REQUEST)).message.text == "still here"


async def test_cancelling_between_chunks_frees_the_connection(
    server: WireServer, narrow: Provider
) -> None:
    stream = answers(narrow)[1]("Hello there, this is long")
    server.reply_with(sse_reply(stream[:4], Ending.STALL))
    for _ in range(ROUNDS):
        with anyio.CancelScope() as scope:

            async def cancel_on_first(delta: ModelDelta, scope: anyio.CancelScope = scope) -> None:
                scope.cancel()

            await narrow.stream(REQUEST, cancel_on_first)
        assert scope.cancelled_caught
        assert_pool_quiet()
    await still_serves(server, narrow)


async def test_cancelling_inside_the_delta_sink_frees_the_connection(
    server: WireServer, narrow: Provider
) -> None:
    server.reply_with(sse_reply(answers(narrow)[1]("Hello there, this is long")))
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
    server: WireServer, narrow: Provider, streamed: bool
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


async def _call(model: Provider, streamed: bool) -> None:
    async def ignore(delta: ModelDelta) -> None:
        return None

    if streamed:
        await model.stream(REQUEST, ignore)
    else:
        await model.request(REQUEST)


@pytest.mark.parametrize("cls", [OpenAIModel, AnthropicModel, OpenAIResponsesModel, GeminiModel])
async def test_leaving_the_block_closes_the_own_client(
    server: WireServer, cls: type[Provider]
) -> None:
    async with cls("m", api_key=API_KEY, base_url=server.url) as model:
        client = model._channel.client
    assert client.is_closed


async def test_a_given_client_stays_open(server: WireServer) -> None:
    async with httpx.AsyncClient() as client:
        async with OpenAIModel("m", api_key=API_KEY, base_url=server.url, http_client=client):
            pass
        assert not client.is_closed

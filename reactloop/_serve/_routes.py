"""The endpoints each protocol is served at: per request, the lifespan check, the user, the
handler (read the turn, ask the host, answer JSON or a stream), the error answer and, when the
loop has telemetry, the request's SERVER span. Imports Starlette (see `_http`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from attrs import frozen
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from reactloop._core import Message, PendingCall, RunStatus
from reactloop._serve._contracts import ProtocolAdapter, StreamContext
from reactloop._serve._errors import RequestRejectedError, UnknownRunError
from reactloop._serve._http import (
    EventStream,
    continuation,
    error_response,
    identify,
    internal_error,
    json_response,
    read_body,
    rejected,
    request_headers,
)
from reactloop._serve._replay import answered_from

if TYPE_CHECKING:
    from reactloop._serve._app import ChatServer
    from reactloop._serve._live import LiveRun

LOGGER = logging.getLogger("reactloop.serve")

LIFESPAN_MISSING = (
    "the ChatServer's lifespan has not run, so it has nowhere to run a loop: pass "
    "lifespan=server.lifespan to your Starlette or FastAPI app (or serve server.asgi())"
)

UiMessages = Callable[[Sequence[Message], str, Sequence[PendingCall]], object]
"""The AI SDK's view of a session's stored messages and its paused run's held calls
(`_ui_messages.ui_messages`), as a JSON-able value."""


@frozen
class Exchange:
    """One request as a handler sees it: the server, the protocol, the user and headers."""

    server: ChatServer
    adapter: ProtocolAdapter
    request: Request
    user: str
    headers: Mapping[str, str]

    def stream(
        self,
        live: LiveRun,
        client_run_id: str | None = None,
        *,
        answered: frozenset[str] = frozenset(),
    ) -> EventStream:
        """The SSE response for `live`, continuing after the request's `Last-Event-ID`;
        `answered`: the held calls whose answers it goes on from (a message the client shows):
        it starts after the pause that held them (`answered_from`), which that client has,
        whichever answer resumed the run."""
        context = StreamContext(
            run_id=live.run_id,
            session_id=live.session_id,
            client_run_id=client_run_id,
            continued=bool(answered),
        )
        base = answered_from(live, answered) if answered else 0
        after = max(base, continuation(self.headers.get("last-event-id"), live))
        host = self.server.host
        try:
            encoder = self.adapter.encoder(context)
        except BaseException:
            host.abandoned(live)
            raise
        return EventStream(host, live, encoder, after=after, base=base)


Answer = Response | EventStream
Handler = Callable[[Exchange], Awaitable[Answer]]


class Endpoint:
    """One route's ASGI app: answers a request with its handler, or with a JSON error."""

    def __init__(
        self, server: ChatServer, adapter: ProtocolAdapter, handler: Handler, route: str
    ) -> None:
        self.server = server
        self.adapter = adapter
        self.handler = handler
        self.route = route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        tracer = self.server.tracer
        if tracer is None:
            answer = await self.answer(request)
            await _respond(answer, scope, receive, send)
            return
        from reactloop._serve._spans import answered, server_span  # OpenTelemetry: only if on

        with server_span(tracer, scope, self.route) as span:
            answer = await self.answer(request)
            live = answer.live if isinstance(answer, EventStream) else None
            run_id, session_id = (live.run_id, live.session_id) if live else (None, None)
            answered(span, answer.status_code, run_id, session_id)
            await _respond(answer, scope, receive, send)

    async def answer(self, request: Request) -> Answer:
        """The handler's answer; a refused request's JSON error; a 500 for anything else."""
        if not self.server.started:
            return error_response(
                "configuration", LIFESPAN_MISSING, "lifespan=server.lifespan", 500
            )
        try:
            headers = request_headers(request)
            user = await identify(self.server.options, headers)
            return await self.handler(Exchange(self.server, self.adapter, request, user, headers))
        except RequestRejectedError as error:
            return rejected(error)
        except Exception as error:
            LOGGER.error("%s %s failed", request.method, request.url.path, exc_info=error)
            return internal_error()


async def _respond(answer: Answer, scope: Scope, receive: Receive, send: Send) -> None:
    """Send the answer; a stream that never got to start lets go of its run as a client that
    went away (its own end lets go of it otherwise)."""
    try:
        await answer(scope, receive, send)
    finally:
        if isinstance(answer, EventStream):
            answer.release(disconnected=True)


async def post_turn(exchange: Exchange) -> Answer:
    """A turn (a new message, or answers to held calls): its run's stream. A request naming a
    run already known, with `Last-Event-ID`, is a reconnect: the rest of that run."""
    options = exchange.server.options
    body = await read_body(exchange.request, options.max_body_bytes, options.body_timeout)
    turn = exchange.adapter.read_turn(body, has_store=exchange.server.has_store)
    host = exchange.server.host
    live = None
    if turn.run_id is not None and exchange.headers.get("last-event-id"):
        live = await host.find(turn.run_id, exchange.user, exchange.headers)
    if live is None:
        live = await host.submit(turn, exchange.user, exchange.headers)
    return exchange.stream(live, turn.client_run_id, answered=frozenset(turn.decisions))


async def session_stream(exchange: Exchange) -> Answer:
    """The AI SDK's resume: the session's streaming run from its start, or 204 when none."""
    chat_id = exchange.request.path_params["chat_id"]
    live = await exchange.server.host.session_run(chat_id, exchange.user, exchange.headers)
    return Response(status_code=204) if live is None else exchange.stream(live)


def session_messages(ui_messages: UiMessages) -> Handler:
    """The session's stored messages in the protocol's message form, with the held calls of
    its paused run (a page that reloads); empty without a store."""

    async def handler(exchange: Exchange) -> Answer:
        chat_id = exchange.request.path_params["chat_id"]
        host = exchange.server.host
        messages = await host.session_messages(chat_id, exchange.user, exchange.headers)
        pending = await _held_calls(exchange, chat_id) if messages else ()
        return json_response(ui_messages(messages, chat_id, pending))

    return handler


async def _held_calls(exchange: Exchange, session_id: str) -> tuple[PendingCall, ...]:
    """The calls the session's newest run holds, when it is paused (read from the store)."""
    store = exchange.server.loop.config.store
    newest = [] if store is None else await store.list_runs(session_id=session_id, limit=1)
    if store is None or not newest or newest[0].status is not RunStatus.PAUSED:
        return ()
    return (await store.load(newest[0].run_id)).pending


async def session_cancel(exchange: Exchange) -> Answer:
    """Stop the session's streaming run (204 too when none is streaming: nothing to stop)."""
    chat_id = exchange.request.path_params["chat_id"]
    host = exchange.server.host
    live = await host.session_run(chat_id, exchange.user, exchange.headers)
    if live is not None:
        await host.cancel(live.run_id, exchange.user, exchange.headers)
    return Response(status_code=204)


async def run_events(exchange: Exchange) -> Answer:
    """A run's stream by id, continuing after `Last-Event-ID` (plain SSE reconnect); a run
    resumed by a client's answers is the resumed stream (AG-UI: a run of its own)."""
    run_id = exchange.request.path_params["run_id"]
    live = await exchange.server.host.find(run_id, exchange.user, exchange.headers)
    if live is None:
        raise UnknownRunError(f"no run {run_id!r} is known here", rule="the id of a known run")
    if live.decided:  # resumed by answers: the stream of that request, as it had it
        return exchange.stream(live, live.resumed_by, answered=live.decided)
    return exchange.stream(live)


async def run_cancel(exchange: Exchange) -> Answer:
    """Stop a run by id."""
    run_id = exchange.request.path_params["run_id"]
    await exchange.server.host.cancel(run_id, exchange.user, exchange.headers)
    return Response(status_code=204)


def _route(
    server: ChatServer, adapter: ProtocolAdapter, prefix: str, path: str, *, run: Handler, on: str
) -> Route:
    full = f"{prefix}{path}" or "/"
    endpoint = Endpoint(server, adapter, run, full)
    return Route(full, endpoint, methods=[on], name=f"{adapter.name}:{on} {path or '/'}")


def ai_sdk_routes(
    server: ChatServer, adapter: ProtocolAdapter, prefix: str, ui_messages: UiMessages
) -> list[BaseRoute]:
    """The AI SDK's endpoints under `prefix` (DefaultChatTransport's `/api/chat` layout)."""
    return [
        _route(server, adapter, prefix, "", run=post_turn, on="POST"),
        _route(server, adapter, prefix, "/{chat_id}/stream", run=session_stream, on="GET"),
        _route(
            server,
            adapter,
            prefix,
            "/{chat_id}/messages",
            run=session_messages(ui_messages),
            on="GET",
        ),
        _route(server, adapter, prefix, "/{chat_id}/cancel", run=session_cancel, on="POST"),
    ]


def ag_ui_routes(server: ChatServer, adapter: ProtocolAdapter, prefix: str) -> list[BaseRoute]:
    """AG-UI's endpoints under `prefix`: the run input, a run's events, its cancel."""
    return [
        _route(server, adapter, prefix, "", run=post_turn, on="POST"),
        _route(server, adapter, prefix, "/runs/{run_id}/events", run=run_events, on="GET"),
        _route(server, adapter, prefix, "/runs/{run_id}/cancel", run=run_cancel, on="POST"),
    ]


def app_of(server: ChatServer, routes: Sequence[BaseRoute]) -> Starlette:
    """A Starlette app of `routes` with the server's lifespan and CORS settings."""
    cors = server.options.cors
    middleware = []
    if cors is not None:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=cors.allow_origins,
                allow_methods=("GET", "POST"),
                allow_headers=cors.allow_headers,
                allow_credentials=cors.allow_credentials,
                max_age=cors.max_age,
            )
        )
    return Starlette(routes=list(routes), middleware=middleware, lifespan=server.lifespan)

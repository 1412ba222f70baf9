"""`reactloop serve module:loop`: a loop served over HTTP on this machine with the built-in chat
page at `/`, the AI SDK endpoint at `/api/chat`, AG-UI at `/ag-ui` and each run's trace page at
`/runs/{run_id}/trace` (read from the loop's store), run by Hypercorn until Ctrl-C.

Imports the serve extra (Starlette, Hypercorn): `_commands.serve_command` checks it is installed
before importing this module."""

from __future__ import annotations

import importlib
import inspect
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import attrs
from hypercorn.config import Config
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from reactloop._cli._inert import inert
from reactloop._cli._load import imported
from reactloop._cli._trace import stored_trace, write_trace
from reactloop._core import RunStore
from reactloop._durable import from_url
from reactloop._errors import ConfigurationError
from reactloop._loop import ReActLoop
from reactloop._serve import ChatServer
from reactloop._serve._page import chat_endpoint, page_response
from reactloop._stored_errors import RunNotFoundError

LOOP_RULE = "'module:attr' naming a ReActLoop, or a function of no arguments that returns one"
LOGGER = logging.getLogger("reactloop.serve")
Endpoint = Callable[[Request], Awaitable[Response]]


async def served_loop(spec: str, store_url: str | None) -> ReActLoop[Any]:
    """The loop `module:attr` names (called first when it is a function of no arguments), given
    the store `--store` names when there is one."""
    found = imported(spec, "module:loop", LOOP_RULE)
    if not isinstance(found, ReActLoop) and callable(found):
        if not _takes_no_arguments(found):
            raise ConfigurationError.invalid("module:loop", spec, LOOP_RULE)
        try:
            found = found()
        except TypeError as exc:  # it takes arguments after all (a signature of *args)
            rule = f"{LOOP_RULE} (calling it failed: {exc})"
            raise ConfigurationError.invalid("module:loop", spec, rule) from exc
        if inspect.isawaitable(found):
            found = await found
    if not isinstance(found, ReActLoop):
        rule = f"{LOOP_RULE} (it gave a {type(found).__name__})"
        raise ConfigurationError.invalid("module:loop", spec, rule)
    return found if store_url is None else with_store(found, store_url)


def _takes_no_arguments(function: Callable[..., Any]) -> bool:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return True  # a builtin we cannot look into: calling it says
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in signature.parameters.values()
    )


def with_store(loop: ReActLoop[Any], url: str) -> ReActLoop[Any]:
    """A copy of `loop` that journals its runs in the store `url` names (and closes it): runs
    can then be resumed, reconnected to and shown as trace pages. A loop with its own store
    keeps it: giving another is refused."""
    if loop.config.store is not None:
        rule = "given only for a loop without a store of its own (this one has one)"
        raise ConfigurationError.invalid("--store", url, rule)
    store = from_url("--store", url)
    served: ReActLoop[Any] = object.__new__(ReActLoop)
    served.__dict__.update(loop.__dict__)
    holds = loop.config.holds_calls or loop.config.toolsets is not None
    served.config = attrs.evolve(loop.config, store=store, owns_store=True, holds_calls=holds)
    return served


def trace_endpoint(store: RunStore | None) -> Endpoint:
    """The route of a run's trace page, read from `store`: 404 for a run it does not hold, or
    when the loop has no store (nothing to read)."""

    async def endpoint(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if store is None:
            return PlainTextResponse("no trace pages: the loop has no store", status_code=404)
        try:
            stored = await store.load(run_id)
        except (RunNotFoundError, ConfigurationError):
            return PlainTextResponse(f"no run {inert(run_id)} in the store", status_code=404)
        return page_response(
            write_trace(stored_trace(stored)), connect=False, style_attributes=True
        )

    return endpoint


def build_app(loop: ReActLoop[Any]) -> Starlette:
    """The server's ASGI app: `ChatServer(loop).asgi()` (the protocol endpoints and their
    lifespan) with the chat page at `/` and the trace pages beside them."""
    store = loop.config.store
    app = ChatServer(loop).asgi()
    app.add_route("/", chat_endpoint(trace_links=store is not None), methods=["GET"])
    app.add_route("/runs/{run_id}/trace", trace_endpoint(store), methods=["GET"])
    return app


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port` (port 0: a free one) and listening, for Hypercorn to
    serve on; binding here tells the real port before the server starts. An address that
    cannot be listened on (taken, unknown) is a `ConfigurationError` saying which."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise _cannot_listen(host, port, exc) from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise _cannot_listen(host, port, exc) from exc
    return sock


def _cannot_listen(host: str, port: int, error: OSError) -> ConfigurationError:
    rule = "an address this machine can listen on (--port 0 picks a free port)"
    return ConfigurationError(
        f"cannot listen on {host}:{port} ({error.strerror or error}): {rule}",
        option="--host/--port",
        value=f"{host}:{port}",
        rule=rule,
    )


def url_of(sock: socket.socket) -> str:
    """The page's URL on `sock` (an IPv6 host in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


async def until_interrupted() -> None:
    """Return at the first SIGINT (Ctrl-C) or SIGTERM: Hypercorn's cue to shut down."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            return


async def run_server(app: Starlette, sock: socket.socket, *, trio: bool) -> None:
    """Serve `app` on `sock` with Hypercorn (its trio worker with `trio`) until interrupted."""
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.errorlog = LOGGER
    config.accesslog = None
    sock.detach()  # Hypercorn owns the descriptor now (and closes it)
    worker: Any = importlib.import_module("hypercorn.trio" if trio else "hypercorn.asyncio")
    await worker.serve(app, config, shutdown_trigger=until_interrupted)


async def serve(spec: str, host: str, port: int, store: str | None, *, trio: bool) -> int:
    """`reactloop serve`: load the loop, bind, say where, serve until Ctrl-C."""
    loop = await served_loop(spec, store)
    app = build_app(loop)
    sock = listening_socket(host, port)
    print(
        f"reactloop serve: {url_of(sock)} (the chat page; AI SDK at api/chat, AG-UI at ag-ui)"
        " - Ctrl-C stops",
        flush=True,
    )
    async with loop:
        await run_server(app, sock, trio=trio)
    print("reactloop serve: stopped", file=sys.stderr, flush=True)
    return 0

"""`ChatServer`: a loop served over HTTP, as ASGI apps to mount (the AI SDK's endpoints, AG-UI's)
or one app with both. Its runs outlive the requests that start them, so they live in the
server's lifespan (`lifespan=server.lifespan`).

This module imports no Starlette: `reactloop.serve` is importable without the `serve` extra,
and making a `ChatServer` without it says how to install it."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from reactloop._errors import ConfigurationError
from reactloop._loop import ReActLoop
from reactloop._serve._agui_input import AG_UI
from reactloop._serve._contracts import RunBackend
from reactloop._serve._host import RunHost
from reactloop._serve._options import ServeOptions
from reactloop._serve._ui_input import UI_MESSAGE_STREAM
from reactloop._serve._ui_messages import ui_messages
from reactloop._validate import checked_arguments

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer
    from starlette.applications import Starlette
    from starlette.routing import BaseRoute


INSTALL = "pip install 'reactloop[serve]'"
AI_SDK_PATH = "/api/chat"
"""Where `asgi()` serves the AI SDK's endpoints (DefaultChatTransport's default `api`)."""
AG_UI_PATH = "/ag-ui"
"""Where `asgi()` serves AG-UI's endpoints."""


def is_backend(loop: object) -> bool:
    """Whether `loop` is one `ChatServer` can drive runs with (`RunBackend`): a `ReActLoop`, or
    an object with its `config` (store, tracing), `stream` and `resume_stream`."""
    if isinstance(loop, ReActLoop):
        return True
    config = getattr(loop, "config", None)
    has_config = hasattr(config, "store") and hasattr(config, "tracing")
    return has_config and all(
        callable(getattr(loop, name, None)) for name in ("stream", "resume_stream")
    )


def require_starlette() -> None:
    """A `ConfigurationError` saying how to install the extra, when Starlette is missing."""
    try:
        importlib.import_module("starlette")
    except ImportError as error:
        raise ConfigurationError(
            f"serving a loop needs Starlette, which is not installed ({error}): {INSTALL}",
            option="serve",
            value=None,
            rule=f"the `serve` extra installed ({INSTALL})",
        ) from error


@checked_arguments
class ChatServer:
    """A loop served to chat front ends over HTTP.

    `ai_sdk()` is the AI SDK's UI message stream endpoint (`useChat`), `ag_ui()` AG-UI's; mount
    them in your Starlette or FastAPI app with `lifespan=server.lifespan` (or add them at
    exact paths with `mount(app)`), or serve `asgi()`, one app with both (the AI SDK's at
    `/api/chat`, AG-UI's at `/ag-ui`) and its own lifespan. `options` sets who the user is
    and what they may do, the limits and CORS. `loop` is a `ReActLoop` or any `RunBackend`
    (a loop on Temporal: `TemporalLoop.served(client, task_queue=...)`).
    """

    def __init__(self, loop: RunBackend, options: ServeOptions | None = None) -> None:
        require_starlette()
        if not is_backend(loop):
            rule = "a ReActLoop, or a run backend such as TemporalLoop.served(client, ...)"
            raise ConfigurationError.invalid("ChatServer.loop", loop, rule)
        if options is None:
            options = ServeOptions()
        if not isinstance(options, ServeOptions):
            raise ConfigurationError.invalid("ChatServer.options", options, "a ServeOptions")
        self.loop = loop
        self._options = options
        self._host = RunHost(loop, options)
        tracing = loop.config.tracing
        self._tracer: Tracer | None = None if tracing is None else tracing.tracer
        self._started = False

    @property
    def options(self) -> ServeOptions:
        """The server's settings."""
        return self._options

    @property
    def host(self) -> RunHost:
        """The run host: the runs this server drives and streams."""
        return self._host

    @property
    def has_store(self) -> bool:
        """Whether the loop journals its runs (the journal is then the conversation's truth)."""
        return self.loop.config.store is not None

    @property
    def started(self) -> bool:
        """Whether the lifespan is running (requests are refused with a 500 until it is)."""
        return self._started

    @property
    def tracer(self) -> Tracer | None:
        """The loop's tracer when it has telemetry (a SERVER span per request), else None."""
        return self._tracer

    @asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """The runs' home for as long as the app serves: pass it as `lifespan=` to Starlette
        or FastAPI. Entered again while running (an app mounting both endpoints, each with its
        own lifespan), it does nothing more. Leaving it stops the runs still going."""
        if self._started:
            yield
            return
        async with self._host.running():
            self._started = True
            try:
                yield
            finally:
                self._started = False

    def ai_sdk(self) -> Starlette:
        """The AI SDK's endpoints as an ASGI app, to mount where `useChat`'s transport posts
        (`/api/chat` by default): `POST /` a turn, `GET /{chat_id}/stream` its resume,
        `GET /{chat_id}/messages` the stored conversation, `POST /{chat_id}/cancel`."""
        return self._app_of(self._ai_sdk_routes(""))

    def ag_ui(self) -> Starlette:
        """AG-UI's endpoints as an ASGI app: `POST /` a RunAgentInput, `GET
        /runs/{run_id}/events` a run's events (reconnect with `Last-Event-ID`), `POST
        /runs/{run_id}/cancel`."""
        return self._app_of(self._ag_ui_routes(""))

    def asgi(self) -> Starlette:
        """One app serving both protocols (the AI SDK's at `/api/chat`, AG-UI's at `/ag-ui`),
        with its own lifespan and CORS: what `reactloop serve` runs."""
        return self._app_of(self._routes(AI_SDK_PATH, AG_UI_PATH))

    def mount(
        self, app: Starlette, *, ai_sdk: str | None = AI_SDK_PATH, ag_ui: str | None = AG_UI_PATH
    ) -> None:
        """Add the endpoints to your Starlette or FastAPI app at exact paths (the AI SDK's at
        `ai_sdk`, `useChat`'s default `/api/chat`; AG-UI's at `ag_ui`; None leaves one out).
        Unlike `app.mount(path, server.ai_sdk())`, the AI SDK's `POST /api/chat` is served as
        posted, with no redirect to `/api/chat/`. The app needs `lifespan=server.lifespan`; its
        own CORS middleware applies: `ServeOptions.cors` is for the apps this server makes, so
        a server given one refuses to be mounted (a `ConfigurationError`), rather than serve
        without the CORS headers its options promise."""
        self._check_mount(app, ai_sdk, ag_ui)
        app.router.routes.extend(self._routes(ai_sdk, ag_ui))

    def _check_mount(self, app: object, ai_sdk: str | None, ag_ui: str | None) -> None:
        """A `ConfigurationError` for what `mount` cannot do: an app that is not Starlette's
        (FastAPI's is), a path not of the form '/x', a server with its own CORS options."""
        if not isinstance(getattr(getattr(app, "router", None), "routes", None), list):
            raise ConfigurationError.invalid("ChatServer.mount", app, "a Starlette or FastAPI app")
        if self._options.cors is not None:
            rule = (
                "None with mount(app): add Starlette's CORSMiddleware to your app (app.add_"
                "middleware(CORSMiddleware, allow_origins=[...], allow_methods=['GET', 'POST'])), "
                "or serve asgi()"
            )
            raise ConfigurationError.invalid("ServeOptions.cors", self._options.cors, rule)
        for prefix in (ai_sdk, ag_ui):
            if prefix is not None and (not prefix.startswith("/") or prefix.endswith("/")):
                rule = "a path starting with '/' and not ending with one, e.g. '/api/chat'"
                raise ConfigurationError.invalid("ChatServer.mount", prefix, rule)

    def _routes(self, ai_sdk: str | None, ag_ui: str | None) -> list[BaseRoute]:
        """Both protocols' routes, the AI SDK's under `ai_sdk`, AG-UI's under `ag_ui` (None
        leaves one out)."""
        routes = [] if ai_sdk is None else self._ai_sdk_routes(ai_sdk)
        return routes + ([] if ag_ui is None else self._ag_ui_routes(ag_ui))

    def _ai_sdk_routes(self, prefix: str) -> list[BaseRoute]:
        """The AI SDK's routes under `prefix` (for an app that lays out its own routes)."""
        from reactloop._serve._routes import ai_sdk_routes

        return ai_sdk_routes(self, UI_MESSAGE_STREAM, prefix, ui_messages)

    def _ag_ui_routes(self, prefix: str) -> list[BaseRoute]:
        """AG-UI's routes under `prefix` (for an app that lays out its own routes)."""
        from reactloop._serve._routes import ag_ui_routes

        return ag_ui_routes(self, AG_UI, prefix)

    def _app_of(self, routes: Sequence[BaseRoute]) -> Starlette:
        """A Starlette app of `routes` with this server's lifespan and CORS settings."""
        from reactloop._serve._routes import app_of

        return app_of(self, routes)

"""Serving a loop over HTTP: ASGI endpoints that speak the AI SDK's UI message stream and AG-UI.

Owns the protocol codecs (events to SSE frames, request bodies to a `ChatTurn`), the run host
that drives runs beyond the request that started them (reconnects, approvals, disconnects, per-
user limits), the access hooks and the built-in chat page. Needs the `serve` extra (Starlette);
nothing here is imported by the loop itself, so a program that does not serve pays nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from reactloop._serve._contracts import (
    AccessRequest,
    Action,
    BackendConfig,
    ChatTurn,
    ProtocolAdapter,
    RunBackend,
    ServedStream,
    StreamContext,
    StreamEncoder,
)
from reactloop._serve._errors import (
    ForbiddenError,
    MalformedRequestError,
    NotPendingError,
    RequestRejectedError,
    RequestTooLargeError,
    TooManyRunsError,
    UnauthorizedError,
    UnknownRunError,
)
from reactloop._serve._options import (
    ANONYMOUS,
    Authorize,
    CorsOptions,
    DisconnectPolicy,
    Identify,
    ServeOptions,
)

if TYPE_CHECKING:
    from reactloop._serve._agui import AgUiEncoder
    from reactloop._serve._agui_input import AG_UI, AgUiAdapter
    from reactloop._serve._app import ChatServer
    from reactloop._serve._host import RunHost
    from reactloop._serve._live import LiveRun
    from reactloop._serve._replay import StoredRunError
    from reactloop._serve._ui_input import UI_MESSAGE_STREAM, UIMessageStreamAdapter
    from reactloop._serve._ui_messages import ui_messages
    from reactloop._serve._ui_stream import UIStreamEncoder

LAZY = {
    "AG_UI": "_agui_input",
    "AgUiAdapter": "_agui_input",
    "AgUiEncoder": "_agui",
    "ChatServer": "_app",
    "LiveRun": "_live",
    "RunHost": "_host",
    "StoredRunError": "_replay",
    "UIMessageStreamAdapter": "_ui_input",
    "UIStreamEncoder": "_ui_stream",
    "UI_MESSAGE_STREAM": "_ui_input",
    "ui_messages": "_ui_messages",
}
"""The names whose modules load on first use: `reactloop.errors` imports this package for the
serving errors, and a program that does not serve must not pay for the host and the codecs."""


def __getattr__(name: str) -> object:
    """Load a lazily exported name's module (once; later lookups find it in the globals)."""
    module = LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = found
    return found


__all__ = [
    "AG_UI",
    "ANONYMOUS",
    "UI_MESSAGE_STREAM",
    "AccessRequest",
    "Action",
    "AgUiAdapter",
    "AgUiEncoder",
    "Authorize",
    "BackendConfig",
    "ChatServer",
    "ChatTurn",
    "CorsOptions",
    "DisconnectPolicy",
    "ForbiddenError",
    "Identify",
    "LiveRun",
    "MalformedRequestError",
    "NotPendingError",
    "ProtocolAdapter",
    "RequestRejectedError",
    "RequestTooLargeError",
    "RunBackend",
    "RunHost",
    "ServeOptions",
    "ServedStream",
    "StoredRunError",
    "StreamContext",
    "StreamEncoder",
    "TooManyRunsError",
    "UIMessageStreamAdapter",
    "UIStreamEncoder",
    "UnauthorizedError",
    "UnknownRunError",
    "ui_messages",
]

"""Serving a loop over HTTP to chat front ends: the AI SDK's UI message stream (`useChat`) and
AG-UI, as ASGI endpoints (needs the `serve` extra: `pip install 'reactloop[serve]'`).

`server = ChatServer(loop)`; mount `server.ai_sdk()` (at `/api/chat`, where `useChat` posts)
and/or `server.ag_ui()` in your Starlette or FastAPI app with `lifespan=server.lifespan` (the
runs live there, beyond the request that started them), or serve `server.asgi()`, one app with
both. `ServeOptions` says who the user is (`identify`) and what they may do (`authorize`), the
limits, CORS and what a dropped connection does to its run; `RunBackend` is what a server
serves (a `ReActLoop` is one, a loop on Temporal another: `TemporalLoop.served(...)`); refused
requests are the `RequestRejectedError`s (also in `reactloop.errors`), answered with their HTTP
status.
"""

from reactloop._core import publish
from reactloop._serve import (
    ANONYMOUS,
    AccessRequest,
    Action,
    Authorize,
    BackendConfig,
    ChatServer,
    CorsOptions,
    DisconnectPolicy,
    ForbiddenError,
    Identify,
    MalformedRequestError,
    NotPendingError,
    RequestRejectedError,
    RequestTooLargeError,
    RunBackend,
    ServedStream,
    ServeOptions,
    TooManyRunsError,
    UnauthorizedError,
    UnknownRunError,
)

__all__ = [
    "ANONYMOUS",
    "AccessRequest",
    "Action",
    "Authorize",
    "BackendConfig",
    "ChatServer",
    "CorsOptions",
    "DisconnectPolicy",
    "ForbiddenError",
    "Identify",
    "MalformedRequestError",
    "NotPendingError",
    "RequestRejectedError",
    "RequestTooLargeError",
    "RunBackend",
    "ServeOptions",
    "ServedStream",
    "TooManyRunsError",
    "UnauthorizedError",
    "UnknownRunError",
]

publish(__name__, globals())

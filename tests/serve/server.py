"""An ASGI app served by Hypercorn on a free loopback port, inside the test's own event loop
(asyncio or trio), so tests talk to it over real sockets: `async with served(app) as url:`.

The listening socket is bound before Hypercorn starts (so its port is known and connections
made before Hypercorn accepts wait in the backlog); Hypercorn gets a duplicate of it and runs
the app's lifespan before it accepts."""

from __future__ import annotations

import importlib
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import sniffio
from hypercorn.config import Config

BACKLOG = 1024


async def _serve(app: Any, config: Config, stop: anyio.Event) -> None:
    """Serve `app` with the running backend's Hypercorn until `stop` is set."""
    trio = sniffio.current_async_library() == "trio"
    worker: Any = importlib.import_module("hypercorn.trio" if trio else "hypercorn.asyncio")
    await worker.serve(app, config, shutdown_trigger=stop.wait)


@asynccontextmanager
async def served(app: Any, *, graceful_timeout: float = 2.0) -> AsyncIterator[str]:
    """Serve `app` on 127.0.0.1 for the block; yields its base URL (`http://127.0.0.1:PORT`).
    Leaving the block shuts the server down (open streams get `graceful_timeout` seconds)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=BACKLOG)
    port = listener.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{os.dup(listener.fileno())}"]  # Hypercorn owns (and closes) the copy
    config.backlog = BACKLOG
    config.graceful_timeout = graceful_timeout
    config.keep_alive_timeout = 30
    stop = anyio.Event()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(partial(_serve, app, config, stop))
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                stop.set()
    finally:
        listener.close()

"""docs/serving.md's app as a user builds it, importable (`uvicorn --factory
tests.serve.docs_app:docs_app`): a FastAPI app with `lifespan=server.lifespan`,
`server.mount(app)`, and an `identify` hook reading the user from `Authorization: Bearer`,
serving the weather loop (its tool needs approval)."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import FastAPI

from reactloop.serve import ChatServer, ServeOptions
from tests.serve.loops import weather_loop

ANN = {"Authorization": "Bearer ann"}
QUESTION = "What is the weather in Paris?"


def user_of(headers: Mapping[str, str]) -> str | None:
    """The docs' identify hook: the bearer token is the user (None refuses: 401)."""
    return headers.get("authorization", "").removeprefix("Bearer ") or None


def docs_app() -> FastAPI:
    """The docs' app: a FastAPI app with the server's lifespan and its endpoints mounted."""
    server = ChatServer(weather_loop(), ServeOptions(identify=user_of))
    app = FastAPI(lifespan=server.lifespan)
    server.mount(app)
    return app

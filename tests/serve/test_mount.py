"""`ChatServer.mount(app)`: the endpoints added to a user's own FastAPI app at exact paths, so
the AI SDK's `POST /api/chat` (DefaultChatTransport's default) is answered as posted, with no
redirect, over real loopback sockets; CORS is the app's own middleware (a server given
`ServeOptions.cors` refuses to be mounted, rather than serve without the headers promised)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from reactloop import ReActLoop
from reactloop.errors import ConfigurationError
from reactloop.serve import ChatServer, CorsOptions, ServeOptions
from reactloop.testing import ScriptedModel
from tests.serve.server import served

pytestmark = pytest.mark.anyio


def question(chat_id: str) -> dict[str, Any]:
    message = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}
    return {"id": chat_id, "messages": [message], "trigger": "submit-message"}


async def test_the_ai_sdk_endpoint_answers_at_the_exact_path_it_is_mounted_at() -> None:
    server = ChatServer(ReActLoop(ScriptedModel(["Hello."])))
    app = FastAPI(lifespan=server.lifespan)
    server.mount(app)
    async with served(app) as url, httpx.AsyncClient(base_url=url) as client:
        answer = await client.post("/api/chat", json=question("c1"))
        assert answer.status_code == 200, answer.text
        assert '"text-delta"' in answer.text and answer.text.endswith("data: [DONE]\n\n")


async def test_an_endpoint_left_out_is_not_served() -> None:
    server = ChatServer(ReActLoop(ScriptedModel(["Hello."])))
    app = FastAPI(lifespan=server.lifespan)
    server.mount(app, ai_sdk="/chat", ag_ui=None)
    async with served(app) as url, httpx.AsyncClient(base_url=url) as client:
        assert (await client.post("/chat", json=question("c1"))).status_code == 200
        assert (await client.post("/ag-ui", json={})).status_code == 404


@pytest.mark.parametrize("path", ["api/chat", "/api/chat/"])
def test_a_mount_path_must_start_with_a_slash_and_not_end_with_one(path: str) -> None:
    server = ChatServer(ReActLoop(ScriptedModel(["Hello."])))
    with pytest.raises(ConfigurationError, match=r"ChatServer\.mount"):
        server.mount(FastAPI(), ai_sdk=path)


def test_a_server_with_cors_options_refuses_to_be_mounted_saying_what_to_do() -> None:
    cors = CorsOptions(allow_origins=("https://app.example.com",))
    server = ChatServer(ReActLoop(ScriptedModel(["Hello."])), ServeOptions(cors=cors))
    with pytest.raises(ConfigurationError) as refused:
        server.mount(FastAPI())
    assert refused.value.option == "ServeOptions.cors"
    assert "CORSMiddleware" in str(refused.value)


async def test_the_apps_own_cors_middleware_answers_for_the_mounted_endpoints() -> None:
    server = ChatServer(ReActLoop(ScriptedModel(["Hello."])))
    app = FastAPI(lifespan=server.lifespan)
    server.mount(app)
    app.add_middleware(
        CORSMiddleware, allow_origins=["https://app.example.com"], allow_methods=["GET", "POST"]
    )
    preflight = {
        "origin": "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
    }
    async with served(app) as url, httpx.AsyncClient(base_url=url) as client:
        allowed = await client.options("/api/chat", headers=preflight)
        posted = await client.post(
            "/api/chat", json=question("c1"), headers={"origin": "https://app.example.com"}
        )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example.com"
    assert posted.headers["access-control-allow-origin"] == "https://app.example.com"


@pytest.mark.parametrize("app", [FastAPI, object(), None])
def test_mounting_into_something_not_an_app_names_what_it_must_be(app: Any) -> None:
    server = ChatServer(ReActLoop(ScriptedModel(["Hello."])))
    with pytest.raises(ConfigurationError, match="a Starlette or FastAPI app"):
        server.mount(app)

"""docs/serving.md's production hooks, async as a real check would be (a token or database
lookup): `identify` names the user from a header, `authorize` is awaited before every start,
read and cancel. Over real loopback sockets (asyncio and trio): the owner reads their chat, an
admin may read it but not post in it, anyone else is refused with 403, and a request the hook
names no one for with 401."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from reactloop.serve import AccessRequest, Action, ChatServer, ServeOptions
from tests.serve.loops import weather_loop
from tests.serve.server import served

pytestmark = pytest.mark.anyio

ADMINS = {"ops"}


async def identify(headers: Mapping[str, str]) -> str | None:
    await anyio.lowlevel.checkpoint()  # a token lookup
    return headers.get("x-user")


async def may(asked: AccessRequest) -> bool:
    """Owners do anything to their runs; admins may read and cancel anyone's."""
    await anyio.lowlevel.checkpoint()  # a database lookup
    if asked.owner is None or asked.owner == asked.user_id:
        return True
    return asked.user_id in ADMINS and asked.action in (Action.READ, Action.CANCEL)


def ask(text: str) -> dict[str, Any]:
    question = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": "c1", "messages": [question], "trigger": "submit-message"}


async def test_async_hooks_decide_who_may_read_and_post() -> None:
    server = ChatServer(weather_loop(), ServeOptions(identify=identify, authorize=may))
    async with served(server.asgi()) as url, httpx.AsyncClient(base_url=url) as client:
        started = await client.post("/api/chat", json=ask("Weather?"), headers={"x-user": "ann"})
        read = {user: await client.get("/api/chat/c1/messages", headers={"x-user": user})
                for user in ("ann", "ops", "bob")}  # fmt: skip
        admin_post = await client.post("/api/chat", json=ask("Mine now"), headers={"x-user": "ops"})
        nobody = await client.get("/api/chat/c1/messages")
    assert started.status_code == 200
    assert {user: r.status_code for user, r in read.items()} == {"ann": 200, "ops": 200, "bob": 403}
    assert admin_post.status_code == 403
    assert nobody.status_code == 401

"""ChatServer drives runs through the `RunBackend` contract only (config.store, config.tracing,
stream, resume_stream): a backend that is not a ReActLoop serves a turn and an approval over
loopback HTTP, and an object that is no backend is refused, naming the rule."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
from attrs import frozen

from reactloop import ReActLoop
from reactloop._serve._contracts import RunBackend, ServedStream
from reactloop.errors import ConfigurationError
from reactloop.messages import Message
from reactloop.serve import ChatServer
from reactloop.stores import RunStore
from tests.serve.test_hostile import ALICE, answered, chunks, client_of, paying, user

pytestmark = pytest.mark.anyio


@frozen
class Config:
    store: RunStore | None
    tracing: None = None


class Delegating:
    """A backend that is not a ReActLoop: it drives a loop it holds, counting what it is asked."""

    def __init__(self, loop: ReActLoop[Any]) -> None:
        self._loop = loop
        self.config = Config(loop.config.store)
        self.asked: list[str] = []

    @asynccontextmanager
    async def stream(
        self, text: Any, *, history: Sequence[Message] = (), **context: Any
    ) -> AsyncIterator[ServedStream]:
        self.asked.append("stream")
        async with self._loop.stream(text, history=history, **context) as events:
            yield events

    @asynccontextmanager
    async def resume_stream(
        self, run_id: str | None = None, **options: Any
    ) -> AsyncIterator[ServedStream]:
        self.asked.append("resume_stream")
        async with self._loop.resume_stream(run_id, **options) as events:
            yield events


async def test_a_backend_that_is_not_a_loop_serves_a_turn_and_its_approval() -> None:
    loop, _, tool = paying()
    backend = Delegating(loop)
    checked: RunBackend = backend  # mypy: it meets the contract
    assert checked is backend
    async with client_of(backend) as client:  # type: ignore[arg-type]
        body = {"id": "chat-a", "messages": [user("u1", "pay bob")]}
        found = chunks(await client.post("/api/chat", json=body, headers=ALICE))
        message_id = next(c["messageId"] for c in found if c["type"] == "start")
        approval = next(c["approvalId"] for c in found if c["type"] == "tool-approval-request")
        body["messages"] = [user("u1", "pay bob"), answered(message_id, approval)]
        approved = await client.post("/api/chat", json=body, headers=ALICE)
    assert approved.status_code == 200 and len(tool.calls) == 1
    assert backend.asked == ["stream", "resume_stream"]


@pytest.mark.parametrize("given", [object(), "a loop", Config(None)], ids=repr)
def test_an_object_that_is_no_backend_is_refused(given: object) -> None:
    with pytest.raises(ConfigurationError, match="a ReActLoop, or a run backend"):
        ChatServer(given)  # type: ignore[arg-type]

"""Hostile bodies and headers against both protocols' endpoints over loopback (Hypercorn,
asyncio and trio), with a journal in a real SQLite file: each is a typed 4xx naming the rule
(never a 500, a traceback or a path), and nothing runs. A lone surrogate in a text is not one of
them: it is repaired to U+FFFD, the library's rule (adr/0022)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest

from reactloop import ReActLoop
from reactloop.serve import ChatServer, ServeOptions
from reactloop.stores import SqliteStore
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel, call, reply
from tests.serve.server import served

pytestmark = pytest.mark.anyio

HANG = 20.0
LONG_ID = "r" * 300


def ui(message: dict[str, Any] | None = None, **body: Any) -> bytes:
    """An AI SDK chat request with one user message (or `message`), fields replaced by `body`."""
    text = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    return orjson.dumps({"id": "chat", "messages": [message or text], **body})


def ui_part(part: dict[str, Any]) -> bytes:
    return ui({"id": "u1", "role": "user", "parts": [part]})


def ui_approval(message_id: str, approval: object) -> bytes:
    """An AI SDK request answering an approval on an assistant message."""
    part = {"type": "tool-transfer", "toolCallId": "c", "state": "approval-responded"}
    assistant = {"id": message_id, "role": "assistant", "parts": [{**part, "approval": approval}]}
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    return orjson.dumps({"id": "chat", "messages": [user, assistant]})


def agui(message: dict[str, Any] | None = None, **body: Any) -> bytes:
    """A RunAgentInput with one user message (or `message`), fields replaced by `body`."""
    text = {"id": "u1", "role": "user", "content": "hi"}
    return orjson.dumps({"threadId": "t", "runId": "r", "messages": [message or text], **body})


def agui_content(content: object) -> bytes:
    return agui({"id": "u1", "role": "user", "content": content})


def agui_resume(entry: object) -> bytes:
    return agui(resume=[entry])


DEEP = b'{"id": "chat", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
NOT_BASE64 = {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,%%%"}

AI_SDK_BODIES = [
    b"",
    b"{not json",
    b'{"id": "\xff\xfe", "messages": []}',  # invalid UTF-8
    DEEP,
    b"null",
    b"[1, 2]",
    ui(id=5),
    ui(id=""),
    ui(id=LONG_ID),
    ui(id="chat\n1"),
    ui(messages={}),
    ui(messages=[]),
    ui(messages=[5]),
    ui(trigger=5),
    ui(trigger="delete-everything"),
    ui(trigger="regenerate-message", messageId=5),
    ui({"id": 5, "role": "user", "parts": []}),
    ui({"id": "u1", "role": "root", "parts": []}),
    ui({"id": "u1", "role": "user", "parts": "hi"}),
    ui({"id": "u1", "role": "user", "parts": [5]}),
    ui({"id": "u1", "role": "user", "parts": [{"type": 5}]}),
    ui({"id": "u1", "role": "user", "parts": []}),
    ui_part({"type": "text", "text": 5}),
    ui_part({"type": "hologram"}),
    ui_part({"type": "tool-transfer", "state": "output-available", "output": "sent"}),
    ui_part({"type": "file", "mediaType": "image/png", "url": 5}),
    ui_part(NOT_BASE64),
    ui_part({"type": "file", "mediaType": "image/png", "url": "data:image/png;base64"}),
    ui_part({"type": "file", "mediaType": "application/x-sh", "url": "data:;base64,AAAA"}),
    ui_part({"type": "file", "mediaType": "image/png", "url": "file:///etc/passwd"}),
    ui_approval("m", {"id": 5, "approved": True}),
    ui_approval("m", {"id": "c", "approved": "yes"}),
    ui_approval("m", {"id": "c", "approved": False, "reason": 5}),
    ui_approval("m", "approved"),
]

AG_UI_BODIES = [
    b"",
    b"{not json",
    b'{"threadId": "\xff", "runId": "r", "messages": []}',
    DEEP,
    b"null",
    agui(threadId=5),
    agui(runId=""),
    agui(runId=LONG_ID),
    agui(runId="r\x00"),
    agui(threadId="t\n"),
    agui(messages="hi"),
    agui(messages=[5]),
    agui({"id": "u1", "role": "root", "content": "hi"}),
    agui({"id": LONG_ID, "role": "user", "content": "hi"}),
    agui({"id": "a1", "role": "assistant", "content": "only the assistant"}),
    agui_content(5),
    agui_content([]),
    agui_content([5]),
    agui_content([{"type": "video", "source": {"type": "url", "value": "https://x/v.mp4"}}]),
    agui_content([{"type": "image", "source": {"type": "data", "value": "%%%", "mimeType": "a"}}]),
    agui_content([{"type": "image", "source": {"type": "file", "value": "file-1"}}]),
    agui_content([{"type": "image", "source": {"type": "url", "value": "file:///etc/passwd"}}]),
    agui_content([{"type": "audio", "source": {"type": "data", "value": "AAAA"}}]),
    agui(resume="all"),
    agui_resume(5),
    agui_resume({"interruptId": 5, "status": "resolved", "payload": {"approved": True}}),
    agui_resume({"interruptId": "c", "status": "maybe"}),
    agui_resume({"interruptId": "c", "status": "resolved", "payload": "yes"}),
    agui_resume({"interruptId": "c", "status": "resolved", "payload": {"approved": "yes"}}),
    agui_resume(
        {"interruptId": "c", "status": "resolved", "payload": {"approved": True, "editedArgs": []}}
    ),
    agui_resume({"interruptId": "c", "status": "resolved", "payload": {"error": 5}}),
    agui(resume=[{"interruptId": "c", "status": "cancelled"}] * 2),
]


def loop_of(tmp_path: Path) -> tuple[ReActLoop[Any], ScriptedModel, FakeTool]:
    tool = FakeTool("transfer", result="sent", requires_approval=True)
    model = ScriptedModel([reply("", call("transfer", to="bob", amount=5)), "Done."])
    return ReActLoop(model, tools=[tool], store=SqliteStore(tmp_path / "runs.db")), model, tool


def assert_refused(response: httpx.Response, status: int = 400) -> None:
    """A typed refusal in the JSON error shape, naming its rule, showing nothing internal."""
    assert response.status_code == status, response.text[:500]
    error = response.json()["error"]
    assert error["rule"] and error["message"] and error["code"] != "internal_error"
    for leak in ("Traceback", 'File "', "/work/", ".py"):
        assert leak not in response.text


async def post_each(tmp_path: Path, path: str, bodies: list[bytes]) -> None:
    loop, model, tool = loop_of(tmp_path)
    async with (
        served(ChatServer(loop).asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=HANG) as client,
    ):
        for body in bodies:
            with anyio.fail_after(HANG):
                response = await client.post(path, content=body)
            assert response.status_code != 500, (body[:200], response.text[:300])
            assert_refused(response, 404 if response.status_code == 404 else 400)
    assert model.requests == [] and tool.calls == []


async def test_each_malformed_ai_sdk_body_is_a_400_naming_its_rule(tmp_path: Path) -> None:
    await post_each(tmp_path, "/api/chat", AI_SDK_BODIES)


async def test_each_malformed_agui_body_is_a_400_naming_its_rule(tmp_path: Path) -> None:
    await post_each(tmp_path, "/ag-ui", AG_UI_BODIES)


BAD_IDS = ["%00", "r" * 300, "a%0Ab", "%09", "a%7Fb"]


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_an_id_in_a_path_that_no_store_takes_is_a_400_naming_the_rule(
    tmp_path: Path, bad: str
) -> None:
    loop, model, _ = loop_of(tmp_path)
    async with (
        served(ChatServer(loop).asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=HANG) as client,
    ):
        with anyio.fail_after(HANG):
            answers = [
                await client.get(f"/ag-ui/runs/{bad}/events"),
                await client.post(f"/ag-ui/runs/{bad}/cancel"),
                await client.get(f"/api/chat/{bad}/messages"),
                await client.get(f"/api/chat/{bad}/stream"),
                await client.post(f"/api/chat/{bad}/cancel"),
            ]
    for response in answers:
        assert_refused(response)
    assert model.requests == []


@pytest.mark.parametrize("message_id", ["\x00-assistant", "m" * 300 + "-assistant"])
async def test_an_approval_on_a_message_whose_id_no_store_takes_is_a_400(
    tmp_path: Path, message_id: str
) -> None:
    loop, model, tool = loop_of(tmp_path)
    body = ui_approval(message_id, {"id": "c" * 10_000, "approved": True})
    async with (
        served(ChatServer(loop).asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=HANG) as client,
    ):
        with anyio.fail_after(HANG):
            response = await client.post("/api/chat", content=body)
    assert_refused(response)
    assert model.requests == [] and tool.calls == []


async def test_a_last_event_id_of_a_huge_seq_streams_from_the_start(tmp_path: Path) -> None:
    loop, _, _ = loop_of(tmp_path)
    start = agui()
    async with (
        served(ChatServer(loop).asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=HANG) as client,
    ):
        with anyio.fail_after(HANG):
            first = await client.post("/ag-ui", content=start)
            ids = [line[4:] for line in first.text.splitlines() if line.startswith("id: ")]
            epoch = ids[0].rpartition("-")[0]
            again = await client.get(
                "/ag-ui/runs/r/events", headers={"last-event-id": f"{epoch}-{'9' * 5000}"}
            )
    assert again.status_code == 200 and again.text == first.text


SECRET = "sk-live-0123456789abcdefSECRET"
WHERE = "/srv/app/secrets/config.py"


def crashing(request: Any) -> Any:
    raise RuntimeError(f"connect failed with key {SECRET} (read from {WHERE})")


def refusing(asked: Any) -> bool:
    raise RuntimeError(f"the policy service refused key {SECRET} at {WHERE}")


@pytest.mark.parametrize("failing", ["model", "authorize"])
async def test_a_crash_shows_neither_its_traceback_nor_its_secret_nor_a_path(failing: str) -> None:
    model = FunctionModel(crashing if failing == "model" else lambda request: "Fine.")
    options = ServeOptions(authorize=refusing) if failing == "authorize" else ServeOptions()
    server = ChatServer(ReActLoop(model), options)
    async with (
        served(server.asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=HANG) as client,
    ):
        with anyio.fail_after(HANG):
            answers = [
                await client.post("/api/chat", content=ui()),
                await client.post("/ag-ui", content=agui()),
            ]
    for response in answers:
        assert response.status_code in (200, 500)
        assert "internal_error" in response.text
        for leak in (SECRET, WHERE, "Traceback", "RuntimeError"):
            assert leak not in response.text

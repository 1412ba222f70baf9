"""ChatServer serving a loop on Temporal (`TemporalLoop.served`): the AI SDK's endpoints over a
loopback Hypercorn server start a run that a Temporal worker drives, stream it to its pause,
and an approval posted from the page resumes it on Temporal: the tool runs once, even when the
approval is posted twice, and the conversation reads back from the mirror."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from temporalio.client import Client

from reactloop import ReActLoop
from reactloop.errors import ConfigurationError
from reactloop.serve import ChatServer, ServeOptions
from reactloop.stores import MemoryStore, RunStatus, SqliteStore
from reactloop.temporal import TemporalLoop, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, ScriptItem, call, reply
from tests.serve.agui_frames import payloads
from tests.serve.server import served
from tests.serve.test_agui_hostile import run_input
from tests.serve.test_ai_sdk_client import QUESTION, THOUGHT, chat, parts, tool_part, weather_loop
from tests.serve.test_hostile import ALICE, answered, chunks, identify, user
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


def _paying(mirror: object) -> tuple[TemporalLoop, FakeTool]:
    """The hostile tests' transfer loop (one call held for approval), wrapped for Temporal."""
    tool = FakeTool("transfer", result="sent", requires_approval=True)
    model = ScriptedModel([reply("", call("transfer", to="bob", amount=5)), "Done."])
    loop = ReActLoop(model, tools=[tool], store=MemoryStore())
    return TemporalLoop(loop, name="served", mirror=mirror), tool


@asynccontextmanager
async def _page(
    client: Client, task_queue: str, support: TemporalLoop
) -> AsyncIterator[httpx.AsyncClient]:
    """A worker for `support`, and an HTTP client of a ChatServer serving it on loopback."""
    server = ChatServer(
        support.served(client, task_queue=task_queue), ServeOptions(identify=identify)
    )
    async with (
        temporal_worker(client, task_queue=task_queue, loops=[support]),
        served(server.asgi()) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


async def test_a_run_on_temporal_is_started_streamed_and_approved_through_the_ai_sdk_endpoint(
    temporal_dev: Client, task_queue: str, tmp_path: Path
) -> None:
    mirror = SqliteStore(tmp_path / "mirror.db")
    support, tool = _paying(mirror)
    with anyio.fail_after(60):
        async with _page(temporal_dev, task_queue, support) as http:
            body = {"id": "chat-a", "messages": [user("u1", "pay bob")]}
            first = await http.post("/api/chat", json=body, headers=ALICE)
            assert first.status_code == 200, first.text
            found = chunks(first)
            message_id = next(c["messageId"] for c in found if c["type"] == "start")
            approval = next(c["approvalId"] for c in found if c["type"] == "tool-approval-request")
            assert tool.calls == []
            body["messages"] = [user("u1", "pay bob"), answered(message_id, approval)]
            approved = await http.post("/api/chat", json=body, headers=ALICE)
            again = await http.post("/api/chat", json=body, headers=ALICE)
            stored = await http.get("/api/chat/chat-a/messages", headers=ALICE)
    (summary,) = await mirror.list_runs(session_id="chat-a")
    await mirror.aclose()
    assert approved.status_code == 200, approved.text
    assert again.status_code in (200, 409) and len(tool.calls) == 1
    outputs = [c["output"] for c in chunks(approved) if c["type"] == "tool-output-available"]
    texts = [c["delta"] for c in chunks(approved) if c["type"] == "text-delta"]
    assert (outputs, "".join(texts)) == (["sent"], "Done.")
    assert stored.status_code == 200 and len(stored.json()) == 2  # the question, the answer
    assert summary.status is RunStatus.FINISHED
    await assert_replays(temporal_dev, support.workflow_id(summary.run_id), WORKFLOWS)


def test_a_loop_without_a_mirror_cannot_be_served(temporal_dev: Client) -> None:
    support, _ = _paying(None)
    with pytest.raises(ConfigurationError, match="mirror"):
        support.served(temporal_dev, task_queue="q")


async def test_the_ai_sdks_own_chat_approves_a_run_on_temporal_and_the_call_runs_once(
    temporal_dev: Client, task_queue: str
) -> None:
    ran: list[str] = []
    support = TemporalLoop(weather_loop(ran, approval=True), name="weather", mirror=MemoryStore())
    served_loop = support.served(temporal_dev, task_queue=task_queue)
    async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
        seen = await chat(ChatServer(served_loop).asgi(), [{"say": QUESTION}, {"answer": True}])
    asked, done = seen["steps"]
    assert asked["error"] is None and asked["finishes"][0]["finishReason"] == "tool-calls"
    assert done["error"] is None and done["finishes"][0]["finishReason"] == "stop"
    _, answer = seen["messages"]
    shown = [(p["type"], p.get("text"), p.get("state")) for p in parts(answer)]
    assert shown == [
        ("reasoning", THOUGHT, "done"),
        ("text", "Let me check.", "done"),
        ("tool-get_weather", None, "output-available"),
        ("text", "The forecast for Paris: 21°C, sunny.", "done"),
    ]
    assert tool_part(answer)["output"] == "Paris: 21°C, sunny" and ran == ["Paris"]


async def _signalled(client: Client, workflow_id: str) -> None:
    """Return once the workflow's history holds a signal (the cancel reached it)."""
    handle = client.get_workflow_handle(workflow_id)
    for _ in range(1200):  # the test's fail_after bounds it
        async for event in handle.fetch_history_events():
            if event.HasField("workflow_execution_signaled_event_attributes"):
                return
        await anyio.sleep(0.05)


async def test_a_run_on_temporal_cancelled_from_ag_ui_ends_cancelled(
    temporal_dev: Client, task_queue: str
) -> None:
    gate = anyio.Event()
    slow = FakeTool("slow", gate=gate)
    script: list[ScriptItem] = [reply("Working.", call("slow")), "Finished."]
    loop = ReActLoop(ScriptedModel(script), tools=[slow])
    support = TemporalLoop(loop, name="cancelled", mirror=MemoryStore())
    server = ChatServer(support.served(temporal_dev, task_queue=task_queue))
    question = run_input("run-1", [{"id": "u", "role": "user", "content": "Go"}])
    headers = {"content-type": "application/json", "x-user": "ann"}
    received, cancelled = b"", None
    with anyio.fail_after(60):
        async with (
            temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]),
            served(server.asgi()) as url,
            httpx.AsyncClient(base_url=url, timeout=30) as client,
            client.stream("POST", "/ag-ui", content=question, headers=headers) as response,
        ):
            async for chunk in response.aiter_bytes():
                received += chunk
                if b'"TOOL_CALL_END"' in received and not gate.is_set():
                    cancelled = await client.post("/ag-ui/runs/run-1/cancel", headers=headers)
                    await _signalled(temporal_dev, support.workflow_id("run-1"))
                    gate.set()
    assert cancelled is not None and cancelled.status_code == 204
    finished = payloads(received)[-1]
    assert finished["type"] == "RUN_FINISHED" and finished["outcome"] == {"type": "cancelled"}
    assert len(slow.calls) == 1

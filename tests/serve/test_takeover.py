"""A run whose worker died mid-run (its lease let go, the run still running in the store, as
`claimable_runs()` lists it) is taken over by the worker a client reconnects to: resumed there,
so the client gets the rest of the run instead of following a journal that never grows. The
lease decides who drives it: two workers reconnected to at once drive it once. Two RunHosts
(or three) over one SQLite file; the dead worker is a host whose task group was cancelled."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest

from reactloop._core import RunFinished, RunStatus
from reactloop._serve import LiveRun, RunHost, ServeOptions
from reactloop.serve import ANONYMOUS, ChatServer
from reactloop.stores import MemoryStore, SqliteStore
from tests.serve.agui_frames import payloads
from tests.serve.hosting import (
    HANG,
    Gate,
    finished,
    loop_of,
    read_all,
    turn,
    waiting_function_model,
)
from tests.serve.node import run_node
from tests.serve.server import served

pytestmark = pytest.mark.anyio

OPTIONS = ServeOptions(follow_interval=0.01)


def worker(path: Path, name: str, gate: Gate) -> RunHost:
    """A worker: a host whose loop waits in a tool until the gate opens, on the SQLite file."""
    store = SqliteStore(path, worker_id=name)
    return RunHost(loop_of(waiting_function_model(), gate.tool(), store=store), OPTIONS)


async def died(path: Path, gate: Gate, user: str = "ann") -> None:
    """Run r1 (of `user`) on a worker that dies (its task group cancelled) while the tool
    runs."""
    store = SqliteStore(path, worker_id="one")
    first = RunHost(loop_of(waiting_function_model(), gate.tool(), store=store), OPTIONS)
    async with first.running():
        await first.submit(turn("wait", run_id="r1", session_id="s1"), user, {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
    assert [summary.run_id for summary in await store.claimable_runs()] == ["r1"]
    await store.aclose()


async def test_a_reconnect_to_a_run_whose_worker_died_takes_it_over_and_gets_the_rest(
    tmp_path: Path,
) -> None:
    gate = Gate()
    await died(tmp_path / "runs.db", gate)
    gate.opened.set()
    second = worker(tmp_path / "runs.db", "two", gate)
    async with second.running():
        live = await second.find("r1", "ann", {})
        assert live is not None
        assert live.stream is not None or live.done  # driven here, not followed
        end = await finished(live)
    assert second.store is not None
    stored = await second.store.load("r1")
    await second.store.aclose()
    assert end.result.output == "Done waiting." and stored.status is RunStatus.FINISHED
    assert gate.calls == ["a", "a"]  # cut off on the dead worker, run again once here
    whole = await read_all(live)
    assert sum(isinstance(event, RunFinished) for event in whole) == 1


async def test_two_workers_reconnected_to_at_once_drive_the_run_once(tmp_path: Path) -> None:
    gate = Gate()
    await died(tmp_path / "runs.db", gate)
    gate.opened.set()
    second, third = (worker(tmp_path / "runs.db", name, gate) for name in ("two", "three"))
    lives: list[LiveRun] = []

    async def reconnect(host: RunHost) -> None:
        found = await host.find("r1", "ann", {})
        assert found is not None
        lives.append(found)

    async with second.running(), third.running():
        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(reconnect, second)
                tasks.start_soon(reconnect, third)
        ends = [await finished(live) for live in lives]
    for host in (second, third):
        assert host.store is not None
        await host.store.aclose()
    assert [end.result.output for end in ends] == ["Done waiting.", "Done waiting."]
    assert gate.calls == ["a", "a"]  # one more run of the tool: one worker took it over


async def test_a_run_still_running_in_a_store_without_leases_is_followed_not_taken() -> None:
    """A MemoryStore's running run is driven in this process (it has no leases to tell a dead
    driver from a live one): a host that does not drive it follows it."""
    gate = Gate()
    store = MemoryStore()
    first = RunHost(loop_of(waiting_function_model(), gate.tool(), store=store), OPTIONS)
    second = RunHost(loop_of(waiting_function_model(), gate.tool(), store=store), OPTIONS)
    async with first.running(), second.running():
        live = await first.submit(turn("wait", run_id="r1"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        followed = await second.find("r1", "ann", {})
        assert followed is not None and followed.stream is None
        gate.opened.set()
        await finished(live)
        end = await finished(followed)
    assert end.result.output == "Done waiting." and gate.calls == ["a"]


async def test_the_ai_sdk_resume_on_another_worker_gets_the_whole_run_of_a_dead_worker(
    tmp_path: Path,
) -> None:
    """The page's worker dies while a tool runs; the page's `resumeStream()` reaches another
    worker (GET /api/chat/{id}/stream), which takes the run over: the AI SDK's own chat shows
    the whole answer, the tool's result and the final text."""
    gate = Gate()
    path = tmp_path / "runs.db"
    first = ChatServer(worker(path, "one", gate).loop)
    message = {"id": "u-1", "role": "user", "parts": [{"type": "text", "text": "wait"}]}
    async with served(first.asgi()) as url, httpx.AsyncClient(base_url=url) as client:
        with anyio.fail_after(HANG):
            body = {"id": "chat-1", "messages": [message], "trigger": "submit-message"}
            async with client.stream("POST", "/api/chat", json=body) as response:
                assert response.status_code == 200
                await gate.entered.wait()
    gate.opened.set()  # the first worker is gone (its lifespan ended): its run is cut off
    second = ChatServer(worker(path, "two", gate).loop)
    async with served(second.asgi()) as url:
        payload = {"url": f"{url}/api/chat", "chatId": "chat-1", "steps": [{"resume": True}]}
        seen = await run_node("ai_chat.mjs", payload)
    [step] = seen["steps"]
    assert step["error"] is None and step["finishes"][0]["finishReason"] == "stop"
    [answer] = seen["messages"]
    shown = [(p["type"], p.get("text"), p.get("state")) for p in answer["parts"]]
    assert [part for part in shown if part[0] != "step-start"] == [
        ("text", "Waiting.", "done"),
        ("tool-wait_here", None, "output-available"),
        ("text", "Done waiting.", "done"),
    ]
    assert gate.calls == ["a", "a"]


async def test_ag_ui_run_events_of_a_run_taken_over_are_the_whole_run(tmp_path: Path) -> None:
    """A plain reconnect (GET /ag-ui/runs/{id}/events, no Last-Event-ID this worker knows) to a
    run this worker takes over gets it from its start: the text the dead worker had streamed,
    the call, its result and the answer (it was not resumed by answers: nothing is left out)."""
    gate = Gate()
    await died(tmp_path / "runs.db", gate, ANONYMOUS)
    gate.opened.set()
    second = ChatServer(worker(tmp_path / "runs.db", "two", gate).loop)
    async with served(second.asgi()) as url, httpx.AsyncClient(base_url=url) as client:
        with anyio.fail_after(HANG):
            response = await client.get("/ag-ui/runs/r1/events")
    shown = payloads(response.content)
    texts = [p["delta"] for p in shown if p["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(texts) == "Waiting.Done waiting."
    assert [p["toolCallName"] for p in shown if p["type"] == "TOOL_CALL_START"] == ["wait_here"]
    assert [p["content"] for p in shown if p["type"] == "TOOL_CALL_RESULT"] == ["waited for a"]
    assert shown[0]["runId"] == shown[-1]["runId"] == "r1"
    assert shown[-1]["type"] == "RUN_FINISHED" and shown[-1]["outcome"] == {"type": "success"}

"""Reconnecting to a run that goes on after a pause: the resend after an approval resumes the
run into a stream of its own, and a client that reconnects to it (the AI SDK's
`resumeStream()`, AG-UI's run events) gets what it would have had from that stream: the AI SDK
the whole run (its resume replaces the message), AG-UI the continuation (its resume is a run of
its own). Real clients in Node against a ChatServer on loopback, asyncio and trio."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from reactloop import Approve
from reactloop._core import (
    PhaseFinished,
    RunFinished,
    RunPaused,
    RunStarted,
    StepFinished,
    StepStarted,
    TextStreamed,
)
from reactloop._serve import RunHost
from reactloop._serve._replay import replayed
from reactloop.approval import ApprovalOptions
from reactloop.serve import ChatServer
from reactloop.stores import MemoryStore
from tests.serve.agui_frames import payloads, split
from tests.serve.hosting import HANG, Payments, answer, loop_of, paying_model, read_all
from tests.serve.hosting import turn as hosting_turn
from tests.serve.node import run_node
from tests.serve.server import served
from tests.serve.test_ai_sdk_client import (
    QUESTION,
    THOUGHT,
    chat,
    parts,
    releasing_on_resume,
    tool_part,
    weather_loop,
)
from tests.serve.ui_runs import (
    APPROVE,
    RUN,
    encode,
    events_of,
    paying_loop,
    result_of,
    resumed_events,
)

pytestmark = pytest.mark.anyio


async def test_a_cut_resend_after_an_approval_is_resumed_with_the_whole_run() -> None:
    ran: list[str] = []
    gate = anyio.Event()
    server = ChatServer(weather_loop(ran, approval=True, gate=gate))
    app = releasing_on_resume(server.asgi(), gate)
    steps: list[dict[str, Any]] = [
        {"say": QUESTION},
        {"answer": True, "dropAfter": "start"},
        {"resume": True},
    ]
    seen = await chat(app, steps)
    _, resent, resumed = seen["steps"]
    assert resent["finishes"][0]["isDisconnect"] is True
    assert resumed["error"] is None and resumed["finishes"][0]["finishReason"] == "stop"
    _, _, get = seen["requests"]
    assert (get["path"], get["status"]) == ("/api/chat/chat-1/stream", 200)
    _, answer = seen["messages"]
    shown = [(p["type"], p.get("text"), p.get("state")) for p in parts(answer)]
    assert shown == [
        ("reasoning", THOUGHT, "done"),
        ("text", "Let me check.", "done"),
        ("tool-get_weather", None, "output-available"),
        ("text", "The forecast for Paris: 21°C, sunny.", "done"),
    ]
    assert tool_part(answer)["output"] == "Paris: 21°C, sunny"
    assert ran == ["Paris"]


def ag_ui_input(run_id: str, resume: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A RunAgentInput on thread-1: the question, or (with `resume`) the answers to held calls."""
    found: dict[str, Any] = {
        "threadId": "thread-1",
        "runId": run_id,
        "messages": [{"id": "u-1", "role": "user", "content": QUESTION}],
    }
    if resume is not None:
        found["resume"] = resume
    return found


async def approved_over_ag_ui(
    client: httpx.AsyncClient,
) -> tuple[httpx.Response, dict[str, Any], httpx.Response]:
    """run-1 pauses on its held call; run-2 resumes it approving: both responses and the
    resume entry."""
    paused = await client.post("/ag-ui", json=ag_ui_input("run-1"))
    [held] = [p for p in payloads(paused.content) if p["type"] == "RUN_FINISHED"]
    [interrupt] = held["outcome"]["interrupts"]
    answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
    resumed = await client.post("/ag-ui", json=ag_ui_input("run-2", [answer]))
    return paused, answer, resumed


async def test_ag_ui_run_events_of_a_resumed_run_are_its_resumed_stream() -> None:
    """GET /runs/{id}/events of a run the client resumed (a new AG-UI run, run-2) is what the
    resuming POST streamed: the same frames, run-2's id, the held call not announced again; and
    @ag-ui/client reads it as that run."""
    server = ChatServer(weather_loop([], approval=True))
    async with served(server.asgi()) as url, httpx.AsyncClient(base_url=url) as client:
        with anyio.fail_after(HANG):
            paused, answer, resumed = await approved_over_ag_ui(client)
            again = await client.get("/ag-ui/runs/run-1/events")
    assert again.status_code == 200
    assert again.content == resumed.content
    assert "TOOL_CALL_START" not in [p["type"] for p in payloads(again.content)]
    seen = await run_node(
        "agui_read.mjs",
        {
            "threadId": "thread-1",
            "messages": [{"id": "u-1", "role": "user", "content": QUESTION}],
            "runs": [
                {"runId": "run-1", "sse": paused.text},
                {"runId": "run-2", "sse": again.text, "resume": [answer]},
            ],
        },
    )
    first, second = seen["runs"]
    assert "failed" not in first and "failed" not in second, second.get("failed")
    assert second["outcome"] == "success"
    assert second["result"] == "The forecast for Paris: 21°C, sunny."
    assert [m["role"] for m in seen["messages"]] == [
        "user",
        "reasoning",
        "assistant",
        "tool",
        "assistant",
    ]


async def test_a_resumed_runs_stream_after_a_last_event_id_goes_on_from_that_event() -> None:
    """A reconnect to the resumed stream with the id of one of its events gets what followed
    that event, as the resuming POST sent it (the earlier events it starts with are not sent)."""
    server = ChatServer(weather_loop([], approval=True))
    async with served(server.asgi()) as url, httpx.AsyncClient(base_url=url) as client:
        with anyio.fail_after(HANG):
            _, _, resumed = await approved_over_ag_ui(client)
            frames = split(resumed.content)
            cut = next(n for n, (_, p) in enumerate(frames) if p["type"] == "TOOL_CALL_RESULT")
            last_id = frames[cut][0]
            assert last_id is not None
            rest = await client.get("/ag-ui/runs/run-1/events", headers={"last-event-id": last_id})
    shown = [p for _, p in split(rest.content)]
    reopened = [
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-2"},
        {"type": "STEP_STARTED", "stepName": "step 1"},  # the step it was in, still open
    ]
    assert shown == reopened + [p for _, p in frames[cut + 1 :]]


async def test_a_whole_replay_of_a_resumed_run_shows_the_held_call_before_its_result() -> None:
    """A stored run paused and resumed replays as one stream in which the held call first
    shows in the step the resumed run re-enters: the AI SDK's reader gets its input, then its
    output (not an output for a call it never saw)."""
    loop = paying_loop()
    first = await events_of(loop, "Pay Bob 5")
    await resumed_events(loop, result_of(first), APPROVE)
    assert loop.config.store is not None
    stored = await loop.config.store.load(RUN)
    seen = await run_node("ui_read.mjs", {"sse": encode(replayed(stored).events).decode()})
    assert seen["invalid"] == [] and seen["errors"] == []
    message = seen["messages"][-1]
    calls = {p["type"]: p for p in message["parts"] if p["type"].startswith("tool-")}
    transfer = calls["tool-transfer"]
    assert transfer["state"] == "output-available"
    assert transfer["input"] == {"to": "bob", "amount": 5}
    assert transfer["output"] == "sent 5 to bob"
    assert message["parts"][-1]["text"] == "Done: the transfer went through."


@pytest.mark.parametrize("store", [True, False], ids=["store", "no-store"])
async def test_a_resumed_run_starts_with_its_events_before_the_pause(store: bool) -> None:
    """With a store from its journal, without one from its stream here: the run's stretch up to
    the pause, without the pause's end (the resumed run re-enters that step and ends the run)."""
    payments = Payments()
    kept: dict[str, Any] = {"store": MemoryStore()}
    if not store:
        kept = {"approval": ApprovalOptions(state_key="a-state-key-of-at-least-32-bytes-for-it")}
    host = RunHost(loop_of(paying_model(), payments.tool(), **kept))
    async with host.running():
        first = await host.submit(hosting_turn("pay 5", run_id="r1", session_id="s1"), "ann", {})
        before = await read_all(first)
        [pause] = [event for event in before if isinstance(event, RunPaused)]
        decisions = {pause.pending[0].call_id: Approve()}
        resumed = await host.submit(answer("r1", decisions), "ann", {})
        whole = await read_all(resumed)
    earlier, own = whole[: resumed.resumed_at], whole[resumed.resumed_at :]
    shown = [event for event in earlier if not isinstance(event, PhaseFinished)]
    assert [type(event) for event in shown][:2] == [RunStarted, StepStarted]
    assert not any(isinstance(event, RunPaused | RunFinished | StepFinished) for event in earlier)
    assert "".join(e.text for e in earlier if isinstance(e, TextStreamed)) == "Paying."
    assert isinstance(own[0], RunStarted) and isinstance(own[-1], RunFinished)
    assert own[-1].result.output == "Paid 5." and payments.paid == [5]
    assert await read_all(resumed, resumed.resumed_at) == own

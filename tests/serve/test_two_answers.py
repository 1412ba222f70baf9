"""Two answers to one held call, posted to two workers sharing a SQLite file, in the order the
two-worker race under load once left the second answer's stream without the call's result: the
first answer resumed the run on worker one and ran the call; worker two read the run while it
was still running (past the call's step, before its end), took it over, and got the lease only
once the run had finished, so its stream started after every event it had read. The order is
forced by hooks (a gated tool in the run's next step, a lease that waits for the test), over
both protocols and every pair of answers: the second answer's 200 shows what the first one's
run did, from the pause to the end, as the first answer's stream does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from reactloop import ReActLoop
from reactloop.messages import ToolMessage
from reactloop.models import ModelRequest
from reactloop.stores import SqliteStore
from reactloop.testing import FakeTool, FunctionModel, call, reply
from tests.serve.hosting import Gate
from tests.serve.test_hostile import ALICE, answered, chunks, user
from tests.serve.test_hostile_review import (
    HANG,
    agui_held,
    agui_resume,
    approval_tool,
    client_of,
    server_of,
    ui_held,
)

pytestmark = pytest.mark.anyio

ANSWERS = [(True, False), (False, True), (True, True), (False, False)]


class Answering:
    """A model that asks to transfer; after the call's result (or its denial) it calls the gated
    tool, and answers after that one's result: the run stays running, its journal past the
    transfer's step, while the gate is shut."""

    async def __call__(self, request: ModelRequest) -> Any:
        last = request.messages[-1]
        if not isinstance(last, ToolMessage):
            return reply("", call("transfer", to="bob", amount=5))
        if last.name == "transfer":
            return reply("", call("wait_here", label="then"))
        return "Done."


class LateLease(SqliteStore):
    """Worker two's store: its lease (a resume, a takeover) is taken only once the test says."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.asked = anyio.Event()
        self.go = anyio.Event()
        self.granted = False

    async def acquire_lease(self, run_id: str) -> None:
        self.asked.set()
        await self.go.wait()
        await super().acquire_lease(run_id)
        self.granted = True


async def held(
    protocol: str, client: httpx.AsyncClient
) -> tuple[str, Callable[[bool], dict[str, Any]]]:
    """Start a run on worker one to its pause: the route, and the body of an answer to it."""
    if protocol == "ag-ui":
        call_id = await agui_held(client, "t-a", "r-a", ALICE)
        return "/ag-ui", lambda approved: agui_resume("t-a", f"r-{approved}", call_id, approved)
    message_id, approval = await ui_held(client, "chat-a", ALICE)

    def body(approved: bool) -> dict[str, Any]:
        messages = [user("u1", "pay bob"), answered(message_id, approval, approved)]
        return {"id": "chat-a", "messages": messages}

    return "/api/chat", body


def outcome(response: httpx.Response) -> tuple[list[Any], list[Any]]:
    """What a stream shows of the run after the pause: each call's result (AG-UI's
    TOOL_CALL_RESULT, the AI SDK's tool-output-*) and the answer's text."""
    found = chunks(response)
    results = [
        (c["toolCallId"], c.get("content", c.get("output", c.get("errorText"))))
        for c in found
        if c["type"] == "TOOL_CALL_RESULT" or c["type"].startswith("tool-output")
    ]
    texts = [c.get("delta") for c in found if c["type"] in ("TEXT_MESSAGE_CONTENT", "text-delta")]
    return results, texts


def loop_of(tool: FakeTool, gate: Gate, store: SqliteStore) -> ReActLoop[Any]:
    return ReActLoop(FunctionModel(Answering()), tools=[tool, gate.tool()], store=store)


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
@pytest.mark.parametrize(("first", "second"), ANSWERS)
async def test_an_answer_whose_worker_takes_the_run_over_after_the_first_finished_shows_it(
    tmp_path: Path, protocol: str, first: bool, second: bool
) -> None:
    tool, gate = approval_tool(), Gate()
    late = LateLease(tmp_path / "runs.db")
    one = server_of(loop_of(tool, gate, SqliteStore(tmp_path / "runs.db")))
    two = server_of(loop_of(tool, gate, late))
    answers: list[httpx.Response] = []
    done = anyio.Event()
    async with client_of(one, two) as clients:
        route, body = await held(protocol, clients[0])

        async def post(index: int, approved: bool) -> None:
            answers.append(await clients[index].post(route, json=body(approved), headers=ALICE))
            done.set()

        with anyio.fail_after(HANG):
            async with anyio.create_task_group() as group:
                group.start_soon(post, 0, first)
                await gate.entered.wait()  # the first answer's run is past the call's step
                group.start_soon(post, 1, second)
                await late.asked.wait()  # worker two read it running, and takes it over ...
                gate.opened.set()
                await done.wait()  # ... once the first answer's run has finished
                late.go.set()
    winner, loser = answers
    assert late.granted and winner.status_code == loser.status_code == 200, loser.text
    assert len(tool.calls) == (1 if first else 0)
    assert outcome(loser) == outcome(winner) and outcome(winner)[1] == ["Done."], loser.text

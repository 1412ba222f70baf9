"""Exactly once across processes: stalled workers, racing approvers, and store objects sharing a
SQLite file or a PostgreSQL database. Each worker is a real process
(`tests.helpers.exactly_once_child`) or its own store object; every approved or committed tool runs
exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from reactloop._core._approvals import Approve
from reactloop._core._decisions import StopReason
from reactloop._core._messages import ModelRequest, ModelResponse, ToolMessage
from reactloop._core._records import RunEnded, StoredRun
from reactloop._durable._stores import SqliteStore, store_from_url
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import LeaseHeldError
from reactloop._tools._tool import tool
from reactloop.testing import FunctionModel, call, reply

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 60.0  # a hang guard: every wait below ends long before it unless something hangs
BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])


@pytest.fixture
def url(shared_store_url: str) -> str:
    """The store the processes share (a SQLite file, or a fresh PostgreSQL schema)."""
    return shared_store_url


def child(
    folder: Path, stage: str, backend: str, url: str, tag: str = ""
) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "tests.helpers.exactly_once_child",
        str(folder),
        stage,
        backend,
        url,
    ]
    return subprocess.Popen([*command, tag], cwd=ROOT)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll a condition of real processes (no fake clock reaches them), with a hang guard."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def is_stopped(process: subprocess.Popen[bytes]) -> bool:
    """Whether the process stopped itself (state T in /proc)."""
    assert process.poll() is None, "the child ended instead of stalling"
    stat = Path(f"/proc/{process.pid}/stat").read_text()
    return stat.rpartition(")")[2].split()[0] == "T"


def in_store(url: str, read: Callable[[Any], Any]) -> Any:
    """Read the shared store from this (synchronous) test, with a store of its own."""

    async def main() -> Any:
        store = store_from_url(url)
        try:
            return await read(store)
        finally:
            await store.aclose()

    return anyio.run(main)


def loaded(url: str, run_id: str) -> StoredRun:
    stored: StoredRun = in_store(url, lambda store: store.load(run_id))
    return stored


def lines(folder: Path, name: str) -> list[str]:
    path = folder / name
    return path.read_text().split() if path.exists() else []


def ends(stored: StoredRun) -> int:
    return sum(isinstance(record, RunEnded) for record in stored.records)


@BACKENDS
@pytest.mark.parametrize("where", ["tool", "after"])
def test_a_stalled_worker_writes_and_calls_nothing_once_another_finished_its_run(
    tmp_path: Path, url: str, backend: str, where: str
) -> None:
    stalled = child(tmp_path, f"stall-{where}", backend, url)
    try:
        wait_until(lambda: is_stopped(stalled), "the worker stalled")
        run_id = (tmp_path / "run_id").read_text()
        wait_until(lambda: claimable(url, run_id), "the stalled worker's lease ran out")
        finisher = child(tmp_path, "finish", backend, url)
        assert finisher.wait(timeout=DEADLINE) == 0
    finally:
        os.kill(stalled.pid, signal.SIGCONT)
    assert stalled.wait(timeout=DEADLINE) == 0
    finished = orjson.loads((tmp_path / "finished.json").read_bytes())
    woke = orjson.loads((tmp_path / "stalled.json").read_bytes())
    assert finished == {"stop": "completed", "output": "done by finisher", "error": None}
    assert woke["stop"] == "error" and woke["error"] == "LeaseLostError"
    assert woke["discarded"] == (1 if where == "tool" else 0)  # a result it could not keep
    assert lines(tmp_path, "pay.calls") == ["5"]  # paid once: the finisher never paid again
    assert lines(tmp_path, "model.calls") == ["stalled", "finisher"]  # no call after waking
    stored = loaded(url, run_id)
    assert ends(stored) == 1 and stored.output == "done by finisher"


def claimable(url: str, run_id: str) -> bool:
    """Whether the run is free to claim (its holder's lease ran out)."""

    async def ids(store: Any) -> list[str]:
        return [summary.run_id for summary in await store.claimable_runs()]

    return run_id in in_store(url, ids)


@BACKENDS
def test_two_processes_approving_one_paused_run_pay_each_amount_once(
    tmp_path: Path, url: str, backend: str
) -> None:
    for trial in range(2):
        folder = tmp_path / f"trial{trial}"
        folder.mkdir()
        if url.startswith("postgresql:") and trial:
            in_store(url, _delete_all)
        assert child(folder, "pause", backend, url).wait(timeout=DEADLINE) == 0
        approvers = [child(folder, "approve", backend, url, tag) for tag in ("a", "b")]
        assert [approver.wait(timeout=DEADLINE) for approver in approvers] == [0, 0]
        assert sorted(lines(folder, "pay.calls")) == ["1", "2"]
        found = [orjson.loads((folder / f"approve-{t}.json").read_bytes()) for t in "ab"]
        done = [f for f in found if f.get("stop") == "completed"]
        refused = [f for f in found if f.get("error") in ("LeaseHeldError", "LeaseLostError")]
        assert done and len(done) + len(refused) == 2, found
        run_id: str = orjson.loads((folder / "paused.json").read_bytes())["run_id"]
        assert ends(loaded(url, run_id)) == 2  # the pause, then the one end


async def _delete_all(store: Any) -> None:
    for summary in await store.list_runs(limit=1000):
        await store.delete_run(summary.run_id)


def pays(calls: list[int]) -> Any:
    @tool(requires_approval=True)
    async def pay(amount: int) -> str:
        """Pay an amount."""
        calls.append(amount)
        await anyio.sleep(0.05)
        return f"paid {amount}"

    return pay


def paying(amount: int) -> FunctionModel:
    def answer(request: ModelRequest) -> ModelResponse | str:
        if isinstance(request.messages[-1], ToolMessage):
            return "done"
        return reply("", call("pay", amount=amount))

    return FunctionModel(answer)


@pytest.mark.anyio
async def test_two_store_objects_on_one_file_approving_one_run_pay_once(tmp_path: Path) -> None:
    """A web app that builds a loop (and a store) per request: two requests approve one run."""
    calls: list[int] = []
    path = tmp_path / "runs.db"
    first = ReActLoop(paying(5), tools=[pays(calls)], store=SqliteStore(path))
    second = ReActLoop(paying(5), tools=[pays(calls)], store=SqliteStore(path))
    paused = await first.run("go")
    decisions = {paused.pending[0].call_id: Approve()}
    outcomes: list[object] = []

    async def approve(loop: ReActLoop) -> None:
        try:
            outcomes.append((await loop.resume(paused.run_id, decisions=decisions)).stop_reason)
        except LeaseHeldError as held:
            outcomes.append(held)

    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(approve, first)
            tasks.start_soon(approve, second)
    assert calls == [5]
    assert StopReason.COMPLETED in outcomes
    assert all(o is StopReason.COMPLETED or isinstance(o, LeaseHeldError) for o in outcomes)
    again = await second.resume(paused.run_id, decisions=decisions)  # a retried request
    assert again.stop_reason is StopReason.COMPLETED and calls == [5]
    for loop in (first, second):
        await loop.aclose()

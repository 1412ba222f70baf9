"""The mirror: a run on Temporal copied into a reactloop store (a real SQLite file) at its pause
and its end, so the command line lists and shows it and the trace page draws it as it does a
local run; a retried copy adds nothing twice."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import Client

from reactloop import Approve, ReActLoop
from reactloop._cli._trace import stored_trace
from reactloop._temporal._mirror import MirrorGapError, copy_records
from reactloop._temporal._served import TemporalStream
from reactloop.stores import MemoryStore, RunStatus, RunStore, SqliteStore
from reactloop.temporal import TemporalLoop, temporal_worker
from reactloop.testing import FakeTool, ScriptedModel, call
from tests.cli.test_cli import cli
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


def _loop(store: RunStore) -> tuple[ReActLoop[Any], FakeTool]:
    """A loop that looks a thing up, then pays after a person approves."""
    pay = FakeTool("pay", result="paid", requires_approval=True)
    look = FakeTool("look", result="found")
    model = ScriptedModel([call("look"), call("pay"), "Paid."])
    return ReActLoop(model, tools=[look, pay], store=store), pay


@pytest.fixture
async def mirror(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    store = SqliteStore(tmp_path / "mirror.db")
    yield store
    await store.aclose()


def _shape(value: object) -> object:
    """The trace data with what differs between two runs of one loop (ids, times) blanked."""
    if isinstance(value, dict):
        return {key: "id" if key.endswith("id") else _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return "number" if isinstance(value, float) else value


async def _local_trace(tmp_path: Path) -> dict[str, Any]:
    """The trace data of the same loop run locally on a SQLite store, approved the same way."""
    store = SqliteStore(tmp_path / "local.db")
    try:
        loop, _ = _loop(store)
        paused = await loop.run("pay")
        (held,) = paused.pending
        await loop.resume(paused.run_id, decisions={held.call_id: Approve()})
        return stored_trace(await store.load(paused.run_id))
    finally:
        await store.aclose()


async def test_the_command_line_and_the_trace_page_read_a_temporal_run_from_its_mirror(
    temporal_dev: Client, task_queue: str, mirror: SqliteStore, tmp_path: Path
) -> None:
    loop, pay = _loop(MemoryStore())
    support = TemporalLoop(loop, name="mirrored", mirror=mirror)
    url, run_id = f"sqlite:///{tmp_path / 'mirror.db'}", uuid.uuid4().hex
    with anyio.fail_after(60):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[support]):
            run = await support.start(temporal_dev, "pay", run_id=run_id, task_queue=task_queue)
            async for _ in TemporalStream(run):  # as a server reads it: to the workflow's wait
                pass
            assert (await mirror.load(run_id)).status is RunStatus.PAUSED  # whole at the pause
            listed = await anyio.to_thread.run_sync(cli, "runs", "list", "--store", url)
            assert listed.stdout.startswith(f"{run_id}  paused"), listed.stderr
            (held,) = await run.pending()
            await run.decide({held.call_id: Approve()})
            result = await run.result()
    assert len(pay.calls) == 1 and result.output == "Paid."
    stored = await mirror.load(run_id)
    assert stored.status is RunStatus.FINISHED and stored.records == (await run.records())[0]
    shown = (await anyio.to_thread.run_sync(cli, "runs", "show", run_id, "--store", url)).stdout
    assert "call pay()" in shown and "answer (completed): Paid." in shown, shown
    assert _shape(stored_trace(stored)) == _shape(await _local_trace(tmp_path))
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)


async def test_a_retried_copy_adds_nothing_twice_and_a_gap_is_refused() -> None:
    loop, _ = _loop(MemoryStore())
    source = loop.config.store
    assert isinstance(source, MemoryStore)
    result = await loop.run("pay")
    records = (await source.load(result.run_id)).records
    mirror = MemoryStore()
    await copy_records(mirror, result.run_id, 0, records[:3])
    await copy_records(mirror, result.run_id, 0, records)  # a retry of a longer copy
    await copy_records(mirror, result.run_id, 2, records[2:])  # and of a later one
    assert (await mirror.load(result.run_id)).records == records
    with pytest.raises(MirrorGapError, match="first 9 records"):
        await copy_records(MemoryStore(), result.run_id, 9, records[9:])

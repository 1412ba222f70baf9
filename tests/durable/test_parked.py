"""Parked runs: a worker round that meets a run it cannot resume sets it aside (PARKED, with the
reason) and lets the other runs finish; a parked run is never claimed again until it is
unparked (or resumed by id) once fixed. Worker metrics through OpenTelemetry.

Each worker is a store object with its own connection and worker id, on PostgreSQL and on one
SQLite file, as separate processes would have (tests/durable/test_lease.py).
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint

from reactloop._core._messages import ModelRequest, ToolCall
from reactloop._core._records import RunCreated, RunParked, RunStatus, RunUnparked
from reactloop._durable._replay import replay
from reactloop._durable._stores import MemoryStore, PostgresStore, SqliteStore
from reactloop._errors import ConfigurationError, ContractError, ErrorCode
from reactloop._loop._loop import ReActLoop
from reactloop._loop._workers import cannot_resume, park, resume_claimable, unpark_run
from reactloop._stored_errors import (
    LeaseHeldError,
    MissingToolError,
    RunNotFoundError,
    StoreError,
    UnreadableRunError,
)
from reactloop.telemetry import Telemetry
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel
from tests.conftest import close

pytestmark = pytest.mark.anyio
Leasing = PostgresStore | SqliteStore
Workers = Callable[[str], Leasing]


@pytest.fixture(params=["postgres", "sqlite"])
def worker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workers]:
    """Make workers (stores with their own connection, one database) of a leasing store:
    PostgreSQL on a fresh schema, or one SQLite file; closed after."""
    made: list[Leasing] = []
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None

    def make(name: str) -> Leasing:
        store: Leasing
        if url is None:
            store = SqliteStore(tmp_path / "runs.db", worker_id=name)
        else:
            store = PostgresStore(url, worker_id=name)
        made.append(store)
        return store

    yield make
    for store in made:
        if isinstance(store, PostgresStore):
            close(store)
        else:
            anyio.run(store.aclose)


def corrupt(store: Leasing, run_id: str) -> None:
    """Overwrite the run's first record with bytes no reactloop can read."""
    if isinstance(store, PostgresStore):
        with psycopg.connect(store.url) as connection:
            connection.execute(
                "UPDATE reactloop_records SET body = %s WHERE run_id = %s AND seq = 1",
                (b"{not json", run_id.encode()),
            )
        return
    with contextlib.closing(sqlite3.connect(store.path)) as database, database:
        database.execute(
            "UPDATE records SET body = ? WHERE run_id = ? AND seq = 1", (b"{not json", run_id)
        )


async def abandoned(store: Leasing, *, in_tool: bool) -> str:
    """A run whose worker stopped driving it: during its first model call, or (`in_tool`)
    while its `lookup` tool ran; its id."""
    asked = anyio.Event()

    async def answer(request: ModelRequest) -> ToolCall | str:
        if in_tool:
            return ToolCall("lookup", id="c1")
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    lookup = FakeTool("lookup", gate=anyio.Event())
    loop = ReActLoop(FunctionModel(answer), tools=[lookup], store=store)
    async with anyio.create_task_group() as tasks, loop.start("go") as handle:
        if in_tool:
            while not lookup.running:  # noqa: ASYNC110 (FakeTool has no event for it)
                await anyio.sleep(0.01)
        else:
            await asked.wait()
        tasks.cancel_scope.cancel()
    return handle.run_id


async def died(worker: Workers, *, good: int) -> tuple[list[str], str]:
    """`good` runs and one that used the `lookup` tool, left by a worker cut off (its leases
    freed, as by a worker that died once they expire)."""
    dead = worker("w0")
    runs = [await abandoned(dead, in_tool=False) for _ in range(good)]
    bad = await abandoned(dead, in_tool=True)
    return runs, bad


def waits_for_parked(observer: Leasing, run_id: str) -> FunctionModel:
    """A model that answers only once `run_id` is parked: its runs are mid-step when the bad
    run fails, so a round that cancelled them on that failure would not finish them."""

    async def answer(request: ModelRequest) -> str:
        with anyio.fail_after(30):
            while (await observer.load(run_id)).status is not RunStatus.PARKED:  # noqa: ASYNC110
                await anyio.sleep(0.01)
        return "recovered"

    return FunctionModel(answer)


async def test_a_run_a_worker_cannot_resume_is_parked_and_the_others_finish(
    worker: Workers,
) -> None:
    good, bad = await died(worker, good=3)
    observer = worker("observer")
    loop = ReActLoop(waits_for_parked(observer, bad), store=worker("w1"))  # no lookup tool
    results = await resume_claimable(loop)
    assert sorted(result.run_id for result in results) == sorted(good)
    assert all(result.output == "recovered" for result in results)
    stored = await observer.load(bad)
    assert stored.status is RunStatus.PARKED
    parked = stored.parked
    assert parked is not None and "lookup" in parked.reason
    assert parked.error_code is ErrorCode.CONFIGURATION
    assert parked.error_type == "MissingToolError" and parked.worker_id == "w1"
    listed = await observer.list_runs(status=RunStatus.PARKED)
    assert [summary.run_id for summary in listed] == [bad]
    assert [summary.run_id for summary in await observer.claimable_runs()] == []


async def test_a_parked_run_is_not_claimed_again_until_unparked_then_it_finishes(
    worker: Workers,
) -> None:
    _, bad = await died(worker, good=0)
    store = worker("w1")
    assert await resume_claimable(ReActLoop(ScriptedModel([]), store=store)) == []
    journal = (await store.load(bad)).records
    assert await resume_claimable(ReActLoop(ScriptedModel([]), store=store)) == []
    assert (await store.load(bad)).records == journal  # the next round did not touch it
    assert await unpark_run(store, bad)
    assert not await unpark_run(store, bad)  # running again: nothing to unpark
    assert [summary.run_id for summary in await store.claimable_runs()] == [bad]
    fixed = ReActLoop(ScriptedModel(["found it"]), tools=[FakeTool("lookup")], store=store)
    (result,) = await resume_claimable(fixed)
    assert (result.run_id, result.output) == (bad, "found it")
    stored = await store.load(bad)
    assert stored.status is RunStatus.FINISHED and stored.parked is None
    kinds = [type(record) for record in stored.records]
    assert kinds.index(RunParked) < kinds.index(RunUnparked)


async def test_a_parked_run_resumed_by_id_with_the_tool_goes_on(
    worker: Workers,
) -> None:
    _, bad = await died(worker, good=0)
    store = worker("w1")
    await resume_claimable(ReActLoop(ScriptedModel([]), store=store))
    with pytest.raises(MissingToolError):
        await ReActLoop(ScriptedModel([]), store=store).resume(bad)
    assert (await store.load(bad)).status is RunStatus.PARKED  # still parked: nothing changed
    fixed = ReActLoop(ScriptedModel(["found it"]), tools=[FakeTool("lookup")], store=store)
    assert (await fixed.resume(bad)).output == "found it"
    assert (await store.load(bad)).status is RunStatus.FINISHED


async def test_a_run_with_a_journal_that_cannot_be_read_is_parked(
    worker: Workers,
) -> None:
    good, bad = await died(worker, good=1)
    store = worker("w1")
    corrupt(store, bad)
    results = await resume_claimable(ReActLoop(FunctionModel(lambda r: "ok"), store=store))
    assert [result.run_id for result in results] == good
    (summary,) = await store.list_runs(status=RunStatus.PARKED)
    assert summary.run_id == bad
    assert await resume_claimable(ReActLoop(ScriptedModel([]), store=store)) == []


async def test_a_transient_store_fault_leaves_the_run_claimable(
    worker: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    good, bad = await died(worker, good=1)
    store = worker("w1")
    load = store.load

    async def flaky(run_id: str) -> Any:
        if run_id == bad:
            raise StoreError("the server went away")
        return await load(run_id)

    monkeypatch.setattr(store, "load", flaky)
    results = await resume_claimable(ReActLoop(FunctionModel(lambda r: "ok"), store=store))
    assert [result.run_id for result in results] == good
    assert [summary.run_id for summary in await store.claimable_runs()] == [bad]


async def test_a_run_another_worker_parked_meanwhile_is_not_driven(worker: Workers) -> None:
    store = worker("w1")
    await store.create_run(RunCreated("r1", "hi", None, (), 0.0))
    await store.release_lease("r1")
    (listed,) = await store.claimable_runs()
    assert await park(worker("w2"), listed.run_id, MissingToolError("r1", ["x"], []))
    assert not await park(worker("w2"), "r1", ContractError("x", "y", 1))  # parked once
    model = ScriptedModel([])
    claimable = store.claimable_runs

    async def stale(*, limit: int = 100) -> Any:
        return [listed]  # the list a round read before the run was parked

    store.claimable_runs = stale  # type: ignore[method-assign]
    assert await resume_claimable(ReActLoop(model, store=store)) == []
    store.claimable_runs = claimable  # type: ignore[method-assign]
    assert len((await store.load("r1")).records) == 2


async def test_parking_waits_for_the_lease_of_a_worker_that_drives_the_run(
    worker: Workers,
) -> None:
    first = worker("w1")
    await first.create_run(RunCreated("r1", "hi", None, (), 0.0))
    assert not await park(worker("w2"), "r1", ConfigurationError("broken"))
    with pytest.raises(LeaseHeldError):
        await unpark_run(worker("w2"), "r1")
    assert (await first.load("r1")).status is RunStatus.RUNNING


async def test_unparking_an_unknown_run_is_a_typed_error() -> None:
    with pytest.raises(RunNotFoundError):
        await unpark_run(MemoryStore(), "nope")


@pytest.mark.parametrize(
    ("error", "parked"),
    [
        (MissingToolError("r", ["t"], []), True),
        (ConfigurationError("bad"), True),
        (ContractError("hook", "a rule", 1), True),
        (UnreadableRunError("corrupt"), True),
        (KeyError("a bug"), True),
        (StoreError("down"), False),
        (ConnectionResetError(), False),
        (LeaseHeldError("r", "w", 1.0), False),
    ],
)
def test_which_errors_park_a_run(error: Exception, parked: bool) -> None:
    assert cannot_resume(error) is parked


def test_a_journal_that_cannot_be_read_is_an_unreadable_run_error() -> None:
    with pytest.raises(UnreadableRunError):
        replay([])


def gauge(reader: InMemoryMetricReader, name: str) -> list[NumberDataPoint]:
    data = reader.get_metrics_data()
    assert data is not None
    return [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
        if isinstance(point, NumberDataPoint)
    ]


async def test_a_worker_round_measures_takeovers_parked_claimable_and_paused_runs(
    worker: Workers,
) -> None:
    good, _ = await died(worker, good=2)
    pay = FakeTool("pay", requires_approval=True)
    payer = ReActLoop(ScriptedModel([ToolCall("pay", id="p1")]), tools=[pay], store=worker("w0"))
    assert (await payer.run("pay")).paused
    reader = InMemoryMetricReader()
    telemetry = Telemetry(meter_provider=MeterProvider(metric_readers=[reader]))
    loop = ReActLoop(FunctionModel(lambda r: "ok"), store=worker("w1"), telemetry=telemetry)
    assert len(await resume_claimable(loop)) == len(good)
    (takeovers,) = gauge(reader, "reactloop.worker.lease.takeovers")
    assert takeovers.value == len(good)
    (parked,) = gauge(reader, "reactloop.worker.runs.parked")
    assert parked.value == 1 and dict(parked.attributes or {}) == {"error.type": "configuration"}
    (claimable,) = gauge(reader, "reactloop.worker.runs.claimable")
    assert claimable.value == len(good) + 1
    (age,) = gauge(reader, "reactloop.worker.paused_run.age")
    assert 0.0 < age.value < 600.0
    await resume_claimable(loop)
    (claimable,) = gauge(reader, "reactloop.worker.runs.claimable")
    assert claimable.value == 0  # the parked run is not waiting to be claimed


async def test_a_worker_round_without_telemetry_loads_no_metrics_module(
    worker: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "reactloop._telemetry._workers", raising=False)
    assert await resume_claimable(ReActLoop(ScriptedModel([]), store=worker("w1"))) == []
    assert "reactloop._telemetry._workers" not in sys.modules

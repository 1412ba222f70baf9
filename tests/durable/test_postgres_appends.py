"""PostgresStore's writes on a real server: a run's creation and each append are one round trip
(their statements pipelined in one implicit transaction; a load and each lease call too),
checked against the run's lease in that transaction, all or nothing, and concurrent appends on
the store's connections keep every record once and in order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import psycopg
import pytest

from benchmarks.postgres_load import Turns, relayed
from reactloop._core._decisions import StopReason
from reactloop._core._messages import Usage
from reactloop._core._records import PhaseDataSaved, Record, RunCreated, RunEnded
from reactloop._durable._postgres_pool import Disconnected
from reactloop._durable._stores import PostgresStore
from reactloop._errors import ConfigurationError
from reactloop._stored_errors import LeaseLostError, RunNotFoundError, StoreError
from tests.helpers.postgres_server import backend_pids, expire

pytestmark = pytest.mark.anyio
Workers = Callable[..., PostgresStore]


def row(url: str, run_id: str) -> tuple[Any, ...]:
    """The run's lease owner, fence and status, as the server has them."""
    with psycopg.connect(url) as connection:
        found = connection.execute(
            "SELECT lease_owner, fence, status FROM reactloop_runs WHERE run_id = %s",
            (run_id.encode(),),
        ).fetchone()
    assert found is not None
    return tuple(found)


async def trips_of(trips: Turns, write: Awaitable[object]) -> int:
    """The round trips `write` made (the server's ReadyForQuery messages the relay saw)."""
    before = trips.count
    await write
    return trips.count - before


def ended() -> RunEnded:
    return RunEnded(StopReason.COMPLETED, "", "done", Usage(), 1.0)


async def test_each_write_load_and_lease_call_is_one_round_trip(
    postgres_url: str,
) -> None:
    with relayed(postgres_url) as (url, trips):
        store = PostgresStore(url, worker_id="w1")
        try:
            await store.list_runs()  # connects and creates the schema first
            counts = [
                await trips_of(trips, store.create_run(RunCreated("r1", "go", None, (), 0.0))),
                await trips_of(trips, store.append("r1", [PhaseDataSaved({"n": 1}), ended()])),
                await trips_of(trips, store.create_run(RunCreated("r2", "go", None, (), 0.0,
                                                                  session_id="s"))),
                await trips_of(trips, store.append("r2", [PhaseDataSaved({"n": 1})])),
                await trips_of(trips, store.load("r1")),
                await trips_of(trips, store.acquire_lease("r2")),
                await trips_of(trips, store.renew_lease("r2")),
                await trips_of(trips, store.release_lease("r2")),
            ]  # fmt: skip
        finally:
            await store.aclose()
    assert counts == [1] * 8
    assert row(postgres_url, "r1") == (None, 1, "finished")
    assert row(postgres_url, "r2") == (None, 2, "running")


async def test_a_stale_holders_ending_append_writes_nothing_and_frees_no_lease(
    worker: Workers, postgres_url: str
) -> None:
    first, second = worker("w1"), worker("w2")
    await first.create_run(RunCreated("r1", "go", None, (), 0.0))
    expire(postgres_url, "r1")
    await second.acquire_lease("r1")
    with pytest.raises(LeaseLostError, match="'w1' lost its lease"):
        await first.append("r1", [PhaseDataSaved({"n": 1}), ended()])
    assert row(postgres_url, "r1") == ("w2", 2, "running")
    assert len((await second.load("r1")).records) == 1
    await second.append("r1", [ended()])
    assert [type(r).__name__ for r in (await second.load("r1")).records] == [
        "RunCreated",
        "RunEnded",
    ]


async def test_an_append_to_an_unknown_run_is_refused(worker: Workers) -> None:
    with pytest.raises(RunNotFoundError):
        await worker("w1").append("nope", [PhaseDataSaved({"n": 1})])


async def test_a_statement_failing_in_an_append_writes_none_of_it(
    worker: Workers, postgres_url: str
) -> None:
    store = worker("w1")
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(
            "ALTER TABLE reactloop_records ADD CONSTRAINT small CHECK (octet_length(body) < 500)"
        )
    big: list[Record] = [PhaseDataSaved({"n": 1}), PhaseDataSaved({"x": "x" * 1000}), ended()]
    with pytest.raises(StoreError, match=r"run store '.*' failed: .*\"small\"") as failed:
        await store.append("r1", big)
    assert type(failed.value) is StoreError
    assert row(postgres_url, "r1") == ("w1", 1, "running")  # the lease and status unchanged
    assert len((await store.load("r1")).records) == 1
    await store.append("r1", [ended()])  # the same connection goes on
    assert row(postgres_url, "r1") == (None, 1, "finished")


async def test_concurrent_appends_to_one_run_keep_every_record_once_and_in_order(
    worker: Workers, postgres_url: str
) -> None:
    store = worker("w1", connections=4)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))

    async def write(task: int) -> None:
        await store.append("r1", [PhaseDataSaved({"t": task, "part": p}) for p in range(3)])

    async with anyio.create_task_group() as tasks:
        for task in range(12):
            tasks.start_soon(write, task)
    records = (await store.load("r1")).records[1:]
    data = [r.data for r in records if isinstance(r, PhaseDataSaved)]
    assert len(data) == 36
    assert sorted((d["t"], d["part"]) for d in data) == [
        (t, p) for t in range(12) for p in range(3)
    ]
    for start in range(0, 36, 3):  # each append's records side by side, in their order
        assert [(d["t"], d["part"]) for d in data[start : start + 3]] == [
            (data[start]["t"], p) for p in range(3)
        ]
    with psycopg.connect(postgres_url) as connection:
        seqs = connection.execute("SELECT seq FROM reactloop_records ORDER BY seq").fetchall()
    assert [s for (s,) in seqs] == list(range(1, 38))
    assert 1 <= store._connections.open_count() <= 4
    assert len(backend_pids(postgres_url, "w1")) <= 4


async def test_runs_appended_at_once_share_at_most_the_stores_connections(
    worker: Workers, postgres_url: str
) -> None:
    store = worker("w1", connections=2)
    for n in range(10):
        await store.create_run(RunCreated(f"r{n}", "go", None, (), 0.0))

    async def end(n: int) -> None:
        await store.append(f"r{n}", [PhaseDataSaved({"n": n}), ended()])

    async with anyio.create_task_group() as tasks:
        for n in range(10):
            tasks.start_soon(end, n)
    assert [row(postgres_url, f"r{n}") for n in range(10)] == [(None, 1, "finished")] * 10
    assert len(backend_pids(postgres_url, "w1")) <= 2


@pytest.mark.parametrize("count", [0, -1, True, 2.0])
def test_the_number_of_connections_is_checked(postgres_url: str, count: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"PostgresStore\.connections"):
        PostgresStore(postgres_url, connections=count)


async def test_a_run_creation_retried_after_a_lost_answer_creates_it_once(
    worker: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = worker("w1")
    await store.list_runs()
    connections = store._connections
    real, lost = connections.locked, list[bool]()

    def answer_lost(work: Any, call: Any) -> Any:
        done = real(work, call)
        if not lost:  # committed, then the connection dies before the answer arrives
            lost.append(True)
            connections.close_all()
            raise Disconnected("server closed the connection unexpectedly")
        return done

    monkeypatch.setattr(connections, "locked", answer_lost)
    await store.create_run(RunCreated("r1", "go", None, (), 0.0))
    assert lost and len((await store.load("r1")).records) == 1
    await store.append("r1", [ended()])  # the lease is this worker's

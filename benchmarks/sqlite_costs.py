"""`python -m benchmarks.sqlite_costs`: what one durable write costs on SQLite, piece by piece.

A step of a one-call run commits three records, each before the loop goes on (ADR-0010): the
response, the call's start, the result. Each such write is a round trip to the store's writer
thread and one transaction. This prints the medians of: a no-op round trip through the writer
thread and through `anyio.to_thread.run_sync` (the previous path), the transaction of one append
alone (`BEGIN IMMEDIATE`, the lease check, the insert, `COMMIT`, in NORMAL and FULL mode), and a
whole `SqliteStore.append` of one small record (default, and `commit_on_loop=True`).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence

import anyio
import anyio.to_thread

from reactloop._core import CallStarted, RunCreated
from reactloop._durable._sqlite import Synchronous
from reactloop._durable._sqlite_writer import Connector, Writer
from reactloop._durable._stores import SqliteStore

CALLS = 2000


async def _median_us(go: Callable[[], Awaitable[object]], rounds: int) -> float:
    """Median over `rounds` of the mean microseconds of `CALLS` sequential calls."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(CALLS):
            await go()
        samples.append((time.perf_counter() - start) / CALLS * 1e6)
    return statistics.median(samples)


def _transaction(connection: sqlite3.Connection, seq: list[int]) -> None:
    """The statements of one append, as the writer thread runs them."""
    seq[0] += 1
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("SELECT lease_owner, fence FROM runs WHERE run_id = 'r'").fetchone()
    connection.executemany(
        "INSERT INTO records (run_id, seq, body) VALUES (?, ?, ?)", [("r", seq[0], b"x" * 200)]
    )
    connection.execute("COMMIT")


async def _sql_us(folder: str, synchronous: Synchronous, rounds: int) -> float:
    store = SqliteStore(os.path.join(folder, f"sql-{synchronous}.db"), synchronous=synchronous)
    await store.create_run(RunCreated("r", "go", None, ("echo",), time.time()))
    await store.aclose()
    connection = sqlite3.connect(store.path, isolation_level=None)
    connection.execute(f"PRAGMA synchronous={synchronous}")
    seq = [1]
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(CALLS // 4):
            _transaction(connection, seq)
        samples.append((time.perf_counter() - start) / (CALLS // 4) * 1e6)
    connection.close()
    return statistics.median(samples)


async def _append_us(folder: str, rounds: int, *, on_loop: bool) -> float:
    store = SqliteStore(os.path.join(folder, f"append-{on_loop}.db"), commit_on_loop=on_loop)
    await store.create_run(RunCreated("r", "go", None, ("echo",), time.time()))
    count = iter(range(10**9))
    median = await _median_us(
        lambda: store.append("r", [CallStarted(1, f"c{next(count)}", "echo")]), rounds
    )
    await store.aclose()
    return median


async def costs(rounds: int) -> list[tuple[str, float]]:
    """Each piece's median microseconds."""
    folder = tempfile.mkdtemp(prefix="reactloop-sqlite-costs-")
    writer = Writer(Connector(os.path.join(folder, "hop.db"), "NORMAL"), 10.0, 60.0)
    hop = await _median_us(lambda: writer.call(_nothing), rounds)
    pooled = await _median_us(lambda: anyio.to_thread.run_sync(_nothing, None), rounds)
    figures = [
        ("round trip to the writer thread (no-op)", hop),
        ("round trip via anyio.to_thread.run_sync (no-op)", pooled),
        ("one append's transaction alone, NORMAL", await _sql_us(folder, "NORMAL", rounds)),
        ("one append's transaction alone, FULL", await _sql_us(folder, "FULL", rounds)),
        ("SqliteStore.append, default", await _append_us(folder, rounds, on_loop=False)),
        ("SqliteStore.append, commit_on_loop=True", await _append_us(folder, rounds, on_loop=True)),
    ]
    thread = writer.stop()
    if thread is not None:
        thread.join()
    return figures


def _nothing(_: object) -> None:
    """A job that does nothing."""


def main(argv: Sequence[str] | None = None) -> int:
    """Print each piece's median on the chosen backend."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sqlite_costs", description=__doc__)
    parser.add_argument("--backend", default="asyncio", choices=("asyncio", "trio"))
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    figures = anyio.run(costs, args.rounds, backend=args.backend)
    print(f"{args.backend}: medians of {args.rounds} rounds, microseconds per call")
    for name, value in figures:
        print(f"  {name:<52} {value:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

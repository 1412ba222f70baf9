"""`python -m benchmarks.temporal`: what a step costs on Temporal against reactloop's own
PostgreSQL worker pool, and how many runs a second each finishes, at concurrency 1 and 20.

Every contender drives the same loop: a model that answers at once (`FunctionModel`: concurrent
runs share one model, so each answer is computed from the run's own transcript) and one cheap
tool call per step, `--steps` steps, then the answer. A run's time is from its start to its
result; "ms per step" is the median run time over `--steps`, "runs/s" the median over
`--repeats` batches of `--runs` runs driven `concurrency` at a time.

- `loop.run`: the run in this process, no store: the floor.
- `PostgresStore loop.run`: the same runs with `store=PostgresStore(...)` on a throwaway local
  cluster (fsync off, as the tests run it), one store (one connection) in this process, as a
  worker process has: each step journals its records, each a server round trip that checks the
  run's lease.
- `PostgresStore claimed`: the pool's claim path: the runs are first started and left (their
  driver cancelled), then `resume_claimable(loop, limit=concurrency)` rounds claim and drive
  them; a run's time is its round's.
- `Temporal, in memory` / `Temporal, file-backed`: `TemporalLoop(loop).run(client, ...)` on the
  pinned dev server (`.venv/bin/temporal`, in memory or `--db-filename`), one worker in this
  process: per step a workflow task round trip (the loop's code runs as workflow code) plus a
  model activity and a tool activity, each a round trip through the server's task queues.
- `Temporal alone, in memory`: a bare workflow making the same activities in sequence (a
  trivial activity for each model and tool call) with no loop: Temporal's own floor here, so the
  difference to the row above is what reactloop adds on Temporal.
- `..., local model`: `ModelActivity(local=True)`: each model call a local activity, run inside
  the workflow task (one server hand-off per step instead of two).
- `..., + eager start`: also `start(..., eager_start=True)`: the first workflow task comes back
  in the start's answer to the benchmark's worker.
- `..., tuned server`: the dev server started with `--dynamic-config-value
  history.transferProcessorMaxPollRPS=1000` (default 20 reads a second of a shard's transfer
  queue, which holds each workflow task dispatched after the last read up to 50 ms; the dev
  server has one shard).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from attrs import asdict, frozen

from benchmarks._measure import median
from benchmarks._rig import IncompleteRunError, expect_completed
from benchmarks._temporal_bare import NAME, bare_worker
from reactloop import ReActLoop, RunResult, ToolMessage, tool
from reactloop.stores import PostgresStore, resume_claimable
from reactloop.temporal import ActivityOptions, ModelActivity, TemporalLoop, temporal_worker
from reactloop.testing import FunctionModel, call
from tests.helpers.postgres_server import INSTALL, binaries, fresh_schema, throwaway_cluster
from tests.temporal.servers import DEV_SERVER, binary

ANSWER = "done"
READY = "serving"
"""What a worker process prints once it polls its queue."""
Run = Callable[[str], Awaitable[None]]
"""Drives one run (by its id) to its end, checking it ended as scripted."""


@tool
def ping(step: int) -> str:
    """The cheap tool every step calls."""
    return f"pong {step}"


def make_loop(steps: int, store: Any = None) -> ReActLoop[Any]:
    """`steps` steps of one `ping` call each, then the answer; the model answers at once."""

    def answer(request: Any) -> Any:
        done = sum(isinstance(message, ToolMessage) for message in request.messages)
        return call("ping", step=done) if done < steps else ANSWER

    return ReActLoop(FunctionModel(answer), tools=[ping], store=store, max_iterations=steps + 1)


@frozen
class Batch:
    """One batch: each run's seconds and the batch's wall time."""

    seconds: tuple[float, ...]
    wall: float


@frozen
class Row:
    """A contender's figures at one concurrency (medians over the repeats' runs)."""

    contender: str
    concurrency: int
    ms_per_step: float
    runs_per_second: float
    runs: int


async def batch(run: Run, runs: int, concurrency: int) -> Batch:
    """`runs` runs, `concurrency` at a time (each driver takes the next run when one ends)."""
    numbers = iter(range(runs))
    seconds: list[float] = []

    async def driver() -> None:
        for _ in numbers:
            started = time.perf_counter()
            await run(uuid.uuid4().hex)
            seconds.append(time.perf_counter() - started)

    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for _ in range(min(concurrency, runs)):
            tasks.start_soon(driver)
    return Batch(tuple(seconds), time.perf_counter() - started)


def row(contender: str, concurrency: int, steps: int, batches: Sequence[Batch]) -> Row:
    """The medians of a contender's batches."""
    seconds = [second for one in batches for second in one.seconds]
    per_second = median([len(one.seconds) / one.wall for one in batches])
    return Row(contender, concurrency, median(seconds) / steps * 1e3, per_second, len(seconds))


def checked(run: Callable[..., Awaitable[RunResult[Any]]]) -> Run:
    """`run("go", run_id=...)`, failing unless the run answered as scripted."""

    async def one(run_id: str) -> None:
        expect_completed(await run("go", run_id=run_id), ANSWER)

    return one


Setting = Callable[[int], AbstractAsyncContextManager[Run]]
"""A contender: given the steps, a context in which runs can be driven."""


@asynccontextmanager
async def local(steps: int) -> AsyncIterator[Run]:
    """The floor: `loop.run` in this process, no store."""
    yield checked(make_loop(steps).run)


def on_postgres(url: str) -> Setting:
    """`loop.run` on a PostgresStore in a fresh schema of the cluster at `url`."""

    @asynccontextmanager
    async def setting(steps: int) -> AsyncIterator[Run]:
        store = PostgresStore(fresh_schema(url))
        try:
            yield checked(make_loop(steps, store).run)
        finally:
            await store.aclose()

    return setting


TUNED = ("--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000")
"""The dev server's one setting the tuned contenders change (see the module's docstring)."""


@frozen
class Variant:
    """How a Temporal contender runs: model calls as local activities, runs started eagerly,
    the dev server tuned (`TUNED`)."""

    local_model: bool = False
    eager_start: bool = False
    tuned: bool = False

    def label(self) -> str:
        """The contender name's suffix."""
        parts = [", tuned server"] if self.tuned else []
        parts += [", local model"] if self.local_model else []
        return "".join(parts) + (" + eager start" if self.eager_start else "")


@asynccontextmanager
async def temporal_server(database: Path | None, tuned: bool = False) -> AsyncIterator[Any]:
    """The pinned dev server on a free port (in memory, or file-backed at `database`), tuned
    or as it comes."""
    from temporalio.testing import WorkflowEnvironment

    environment = await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary(DEV_SERVER),
        dev_server_database_filename=None if database is None else str(database),
        dev_server_extra_args=["--headless", *(TUNED if tuned else ())],
    )
    async with environment:
        yield environment


def bench_loop(steps: int, local_model: bool) -> TemporalLoop:
    """The benchmark's loop on Temporal, its model calls local activities or not."""
    options = ActivityOptions(model=ModelActivity(local=local_model))
    return TemporalLoop(make_loop(steps), name="bench", activities=options)


def on_temporal(database: Path | None, workers: int = 1, variant: Variant = Variant()) -> Setting:
    """`TemporalLoop(loop).run` on a dev server (in memory, or file-backed at `database`), one
    worker in this process and `workers - 1` more in worker processes, run as `variant` says."""

    @asynccontextmanager
    async def setting(steps: int) -> AsyncIterator[Run]:
        async with temporal_server(database, variant.tuned) as environment:
            client, queue = environment.client, f"bench-{uuid.uuid4().hex}"
            support = bench_loop(steps, variant.local_model)
            host = client.service_client.config.target_host
            serving = (host, queue, steps, variant.local_model)
            async with (
                temporal_worker(client, task_queue=queue, loops=[support]),
                worker_processes(serving, workers - 1),
            ):
                start = partial(support.run, client, task_queue=queue)
                yield checked(partial(start, eager_start=variant.eager_start))

    return setting


@asynccontextmanager
async def worker_processes(serving: tuple[str, str, int, bool], count: int) -> AsyncIterator[None]:
    """`count` worker processes (`--serve`) serving the queue (host, queue, steps, whether the
    model calls are local), each up before this yields; terminated after."""
    host, queue, steps, local_model = serving
    command = [sys.executable, "-m", "benchmarks.temporal", "--steps", str(steps)]
    command += ["--serve-local-model"] if local_model else []
    started: list[Process] = []
    try:
        for _ in range(count):
            process = await anyio.open_process([*command, "--serve", host, queue], stderr=None)
            started.append(process)
            await ready(process)
        yield
    finally:
        for process in started:
            process.terminate()
            await process.wait()


async def ready(process: Process) -> None:
    """Wait for a worker process to say it serves its queue."""
    said = ""
    assert process.stdout is not None
    async for text in TextReceiveStream(process.stdout):
        said += text
        if READY in said:
            return
    raise RuntimeError(f"a worker process ended before serving (exit {await process.wait()})")


async def serve(host: str, queue: str, steps: int, local_model: bool) -> None:
    """A worker process: serve the benchmark's loop on `queue` until terminated."""
    from temporalio.client import Client

    client = await Client.connect(host)
    support = bench_loop(steps, local_model)
    async with temporal_worker(client, task_queue=queue, loops=[support]):
        print(READY, flush=True)
        await anyio.sleep_forever()


@asynccontextmanager
async def bare(steps: int) -> AsyncIterator[Run]:
    """The same activities as a run of `steps` steps (a model call per step and the answer's,
    a tool call per step) from a bare workflow on the in-memory dev server: Temporal's floor."""
    calls, queue = 2 * steps + 1, f"bench-bare-{uuid.uuid4().hex}"
    async with temporal_server(None) as environment:
        client = environment.client
        async with bare_worker(client, queue):

            async def one(run_id: str) -> None:
                made = await client.execute_workflow(NAME, calls, id=run_id, task_queue=queue)
                if made != calls:
                    raise IncompleteRunError(f"the bare workflow made {made} of {calls} calls")

            yield one


@frozen
class Plan:
    """What to measure: runs per batch, batches, steps per run, the concurrencies."""

    runs: int = 40
    repeats: int = 3
    steps: int = 3
    concurrency: tuple[int, ...] = (1, 20)
    warmup: int = 3
    workers: int = 1


async def measured(name: str, setting: Setting, plan: Plan) -> list[Row]:
    """A contender's rows: each concurrency's batches, after a few unmeasured runs."""
    rows = []
    async with setting(plan.steps) as run:
        await batch(run, plan.warmup, plan.warmup)
        for concurrency in plan.concurrency:
            batches = [await batch(run, plan.runs, concurrency) for _ in range(plan.repeats)]
            rows.append(row(name, concurrency, plan.steps, batches))
    return rows


async def blocked(store: PostgresStore, steps: int, runs: int) -> None:
    """Leave `runs` runs claimable: each started on the store, its driver cancelled while its
    first model call waits (a cancelled run lets its lease go)."""
    started = anyio.Event()
    waiting = 0

    async def stuck(request: Any) -> Any:
        nonlocal waiting
        waiting += 1
        if waiting == runs:
            started.set()
        await anyio.sleep_forever()

    loop = ReActLoop(FunctionModel(stuck), tools=[ping], store=store, max_iterations=steps + 1)
    async with anyio.create_task_group() as tasks:
        for _ in range(runs):
            tasks.start_soon(lambda: loop.run("go", run_id=uuid.uuid4().hex))
        await started.wait()
        tasks.cancel_scope.cancel()


async def claimed(url: str, steps: int, runs: int, concurrency: int) -> Batch:
    """`runs` claimable runs driven to their ends by `resume_claimable` rounds of
    `concurrency` runs; each run's time is its round's."""
    store = PostgresStore(fresh_schema(url))
    try:
        await blocked(store, steps, runs)
        loop, seconds = make_loop(steps, store), list[float]()
        started = time.perf_counter()
        while len(seconds) < runs:
            round_started = time.perf_counter()
            results = await resume_claimable(loop, limit=concurrency)
            if not results:
                raise RuntimeError(f"a claim round found no run with {runs - len(seconds)} left")
            for result in results:
                expect_completed(result, ANSWER)
                seconds.append(time.perf_counter() - round_started)
        return Batch(tuple(seconds), time.perf_counter() - started)
    finally:
        await store.aclose()


async def claim_rows(url: str, plan: Plan) -> list[Row]:
    """The claim path's rows, one per concurrency."""
    rows = []
    for concurrency in plan.concurrency:
        batches = [await claimed(url, plan.steps, plan.runs, concurrency)
                   for _ in range(plan.repeats)]  # fmt: skip
        rows.append(row("PostgresStore claimed", concurrency, plan.steps, batches))
    return rows


async def postgres_rows(plan: Plan) -> tuple[list[Row], list[str]]:
    """Both PostgreSQL contenders on one throwaway cluster; a note instead when PostgreSQL's
    binaries are not installed."""
    bin_dir = binaries()
    if bin_dir is None:
        return [], [f"PostgresStore: skipped, PostgreSQL is not installed ({INSTALL})"]
    with throwaway_cluster(bin_dir) as url:
        rows = await measured("PostgresStore loop.run", on_postgres(url), plan)
        return rows + await claim_rows(url, plan), []


async def temporal_rows(plan: Plan) -> tuple[list[Row], list[str]]:
    """Both Temporal contenders; a note instead when the pinned dev server is missing."""
    if not DEV_SERVER.is_file():
        return [], [f"Temporal: skipped, {DEV_SERVER} is missing (make install)"]
    rows = await measured("Temporal alone, in memory", bare, plan)
    workers = f", {plan.workers} workers" if plan.workers > 1 else ""
    for variant in IN_MEMORY:
        name = f"Temporal, in memory{workers}{variant.label()}"
        rows += await measured(name, on_temporal(None, plan.workers, variant), plan)
    for variant in FILE_BACKED:
        with tempfile.TemporaryDirectory(prefix="reactloop-temporal-bench-") as folder:
            file_backed = on_temporal(Path(folder) / "temporal.db", plan.workers, variant)
            name = f"Temporal, file-backed{workers}{variant.label()}"
            rows += await measured(name, file_backed, plan)
    return rows, []


FAST = Variant(local_model=True, eager_start=True)
IN_MEMORY = (
    Variant(),
    Variant(local_model=True),
    FAST,
    Variant(tuned=True),
    Variant(local_model=True, eager_start=True, tuned=True),
)
FILE_BACKED = (Variant(), FAST)


async def measure(plan: Plan, postgres: bool = True) -> tuple[list[Row], list[str]]:
    """Every contender's rows, and notes on those skipped."""
    rows = await measured("loop.run (no store)", local, plan)
    notes: list[str] = []
    parts = [temporal_rows] + ([postgres_rows] if postgres else [])
    for part in parts:
        more, skipped = await part(plan)
        rows += more
        notes += skipped
    return rows, notes


def table(rows: Sequence[Row], plan: Plan) -> str:
    """The rows as a text table."""
    lines = [
        f"{plan.steps} steps per run (one tool call each, then the answer), {plan.runs} runs per"
        f" batch, medians of {plan.repeats} batches",
        f"{'contender':<58} {'concurrency':>11} {'ms/step':>9} {'runs/s':>9}",
    ]
    lines += [f"{r.contender:<58} {r.concurrency:>11} {r.ms_per_step:>9.2f} "
              f"{r.runs_per_second:>9.1f}" for r in rows]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the table, and write the rows as JSON if asked."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.temporal", description=__doc__, formatter_class=raw
    )
    parser.add_argument("--runs", type=int, default=40, help="runs per batch")
    parser.add_argument("--repeats", type=int, default=3, help="batches per concurrency")
    parser.add_argument("--steps", type=int, default=3, help="tool-calling steps per run")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 20])
    parser.add_argument("--no-postgres", action="store_true", help="leave PostgreSQL out")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    parser.add_argument("--workers", type=int, default=1, help="Temporal worker processes")
    parser.add_argument("--serve", nargs=2, metavar=("HOST", "QUEUE"), help=argparse.SUPPRESS)
    parser.add_argument("--serve-local-model", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:  # a worker process of --workers
        host, queue = args.serve
        anyio.run(serve, host, queue, args.steps, args.serve_local_model, backend="asyncio")
        return 0
    plan = Plan(args.runs, args.repeats, args.steps, tuple(args.concurrency), workers=args.workers)
    rows, notes = anyio.run(measure, plan, not args.no_postgres, backend="asyncio")
    print(table(rows, plan))
    for note in notes:
        print(note)
    if args.json is not None:
        body = {"plan": asdict(plan), "rows": [asdict(r) for r in rows], "notes": notes}
        args.json.write_bytes(orjson.dumps(body, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

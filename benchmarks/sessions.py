"""`python -m benchmarks.sessions`: what one turn of a session costs as the session ages.

A session of N earlier turns is written straight through the store's API (each turn: a question,
one tool call with its result, an answer; about 250 tokens), then a real turn is measured:
`loop.run(text, session_id=...)` on a loop with a context window (8,000 tokens, 1,000 kept for
the answer), whose model answers at once. Each figure is the median wall time of one turn, in
milliseconds, at N = 100, 1,000 and 5,000 (`--ages`), with the ratio to N = 100.

`after` is the loop as it is: the store reads the session newest first, a page at a time, until
the window is full (adr/0034), decoding only the runs it did not decode for an earlier turn;
`after, cold` is the same turn once the store forgot what it decoded (a process's first turn of
the session: every run the window keeps is decoded). `before` is the same loop and store seen
through a wrapper that hides `session_turns`, so the turn reads the whole session
(`session_history`) as every turn did before: the code path a store without `session_turns`
still takes. The turns alternate (each adds a run to its session). `--stores memory sqlite
postgres` (PostgreSQL: a throwaway local cluster, as the tests start it; skipped with a note
where it is not installed).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import orjson

from benchmarks._measure import interleave
from reactloop import ReActLoop
from reactloop._core import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    Record,
    ResponseSaved,
    ResultSaved,
    RunCreated,
    RunEnded,
    RunStore,
    StepClosed,
    StopReason,
    ToolCall,
    ToolResult,
    Usage,
)
from reactloop._core._contracts import DeltaSink
from reactloop._durable import MemoryStore, PostgresStore, SqliteStore
from reactloop._durable._turns import cache_of
from reactloop.context import ContextWindow
from tests.helpers.postgres_server import binaries, fresh_schema, throwaway_cluster
from tests.helpers.stored_sessions import WholeRead

AGES = (100, 1_000, 5_000)
WINDOW = ContextWindow(8_000, reserved_output=1_000)
FILLER = "the parcel left the depot on time and should arrive tomorrow morning "


class Answering:
    """A model that answers every request at once (one checkpoint, like a network await)."""

    answer = ModelResponse(AssistantMessage("It ships tomorrow. " + FILLER * 2))

    async def request(self, request: ModelRequest) -> ModelResponse:
        await anyio.lowlevel.checkpoint()
        return self.answer

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        return await self.request(request)


def turn_records(run_id: str, session_id: str, position: int) -> list[Record]:
    """One stored turn as a loop journals it: a question, one tool step, an answer."""
    call = ToolCall("track", f'{{"order": {position}}}', f"{run_id}-call")
    asked = ModelResponse(AssistantMessage("", (call,)))
    answer = ModelResponse(AssistantMessage(f"Order {position} is on its way. " + FILLER * 2))
    result = ToolResult(call.id, "track", f"order {position}: " + FILLER * 4)
    created = RunCreated(
        run_id, f"Where is order {position}? " + FILLER, None, ("track",), time.time(),
        session_id=session_id,
    )  # fmt: skip
    return [
        created,
        ResponseSaved(1, asked, Usage()),
        ResultSaved(1, result),
        StepClosed(1, 0.0, 0.0, Usage()),
        ResponseSaved(2, answer, Usage()),
        StepClosed(2, 0.0, 0.0, Usage()),
        RunEnded(StopReason.FINAL_ANSWER, "", answer.message.text, Usage(), time.time()),
    ]


async def write_session(store: RunStore, session_id: str, turns: int) -> None:
    """Store `turns` earlier turns of the session."""
    for position in range(turns):
        created, *rest = turn_records(f"{session_id}-{position}", session_id, position)
        assert isinstance(created, RunCreated)
        await store.create_run(created)
        await store.append(created.run_id, rest)


async def forget_decoded(store: RunStore, session_id: str) -> None:
    """Drop the session's turns the store decoded before (benchmark only: a process's first
    turn of the session; other sessions' stay, as a process's would)."""
    if isinstance(store, MemoryStore):
        for entry in store._runs.values():
            if entry.created.session_id == session_id:
                entry.turn = None
        return
    cache = cache_of(store)._turns
    for summary in await store.list_runs(session_id=session_id, limit=1_000_000):
        cache.pop(summary.run_id, None)


def timed_turn(loop: ReActLoop[Any], session_id: str, cold: RunStore | None = None) -> Any:
    """One turn of the session, timed; with `cold`, that store forgets what it decoded first."""

    async def turn() -> float:
        if cold is not None:
            await forget_decoded(cold, session_id)
        started = time.perf_counter()
        await loop.run("And order 7?", session_id=session_id)
        return time.perf_counter() - started

    return turn


async def measure(store: RunStore, ages: Sequence[int], repeats: int) -> dict[str, float]:
    """Median ms per turn, `after` and `before`, for a session of each age in `store`."""
    for age in ages:
        await write_session(store, f"age{age}", age)
    after = ReActLoop(Answering(), store=store, context_window=WINDOW)
    before = ReActLoop(Answering(), store=WholeRead(store), context_window=WINDOW)
    contenders = {}
    for age in ages:
        contenders[f"after {age}"] = timed_turn(after, f"age{age}")
        contenders[f"cold {age}"] = timed_turn(after, f"age{age}", cold=store)
        contenders[f"before {age}"] = timed_turn(before, f"age{age}")
    samples = await interleave(contenders, repeats)
    return {name: statistics.median(values) * 1e3 for name, values in samples.items()}


@contextlib.asynccontextmanager
async def opened(kind: str) -> AsyncIterator[RunStore | str]:
    """A fresh store of `kind`, or why there is none."""
    if kind == "memory":
        yield MemoryStore()
        return
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            store = SqliteStore(Path(folder) / "runs.db")
            yield store
            await store.aclose()
        return
    bin_dir = binaries()
    if bin_dir is None:
        yield "PostgreSQL is not installed (apt-get install postgresql)"
        return
    with throwaway_cluster(bin_dir) as server:
        postgres = PostgresStore(fresh_schema(server))
        yield postgres
        await postgres.aclose()


def report(kind: str, figures: dict[str, float], ages: Sequence[int]) -> list[str]:
    """Markdown rows: each age's median turn, after and before, and its ratio to the first."""
    first = ages[0]
    rows = []
    for age in ages:
        after, before = figures[f"after {age}"], figures[f"before {age}"]
        cold = figures[f"cold {age}"]
        ratios = [figures[f"{name} {age}"] / figures[f"{name} {first}"]
                  for name in ("after", "cold", "before")]  # fmt: skip
        cells = f"{after:.2f} | {ratios[0]:.2f}x | {cold:.2f} | {ratios[1]:.2f}x | "
        cells += f"{before:.2f} | {ratios[2]:.2f}x"
        rows.append(f"| {kind} | {age:,} | {cells} |")
    return rows


async def main(arguments: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--ages", type=int, nargs="+", default=list(AGES))
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--stores", nargs="+", default=["memory", "sqlite"],
                        choices=["memory", "sqlite", "postgres"])  # fmt: skip
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    options = parser.parse_args(arguments)
    print(
        f"one turn of a session, median of {options.repeats} (ms); ratio to {options.ages[0]} turns"
    )
    print("| store | earlier turns | after | ratio | after, cold | ratio | before | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    results: dict[str, dict[str, float]] = {}
    for kind in options.stores:
        async with opened(kind) as store:
            if isinstance(store, str):
                print(f"| {kind} | skipped: {store} | | | | | | |")
                continue
            results[kind] = await measure(store, options.ages, options.repeats)
        print("\n".join(report(kind, results[kind], options.ages)), flush=True)
    if options.json is not None:
        options.json.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    return results


if __name__ == "__main__":
    anyio.run(main)

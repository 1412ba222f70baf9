"""(k, concurrency) Many runs at once on one `PostgresStore`: the time per step with 1 and with 20
runs at a time, and the server round trips per step, each sample a process of its own
(`benchmarks/postgres_load.py`) on a fresh schema of the same cluster.

Per step is the batch's wall time over the steps of all its runs (the cost of a step when runs
share the store: what concurrency must not make worse), and beside it each run's own time per
step (its latency: 20 runs on 2 cores share the cores, so it grows with the load whatever the
store does). With `REACTLOOP_BENCH_BEFORE=<worktree>` an older reactloop is measured too,
alternating with this one, and shown in the second column.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import sniffio
from attrs import frozen

from benchmarks._figures import Figure, Target
from benchmarks._measure import median
from benchmarks._scenarios import Sizes
from tests.helpers.postgres_server import fresh_schema

BEFORE = "REACTLOOP_BENCH_BEFORE"
LEVELS = (1, 20)
ROOT = Path(__file__).resolve().parent.parent
LOAD = ROOT / "benchmarks" / "postgres_load.py"


@frozen
class Tree:
    """A reactloop checkout to measure: this one, or an older one (`REACTLOOP_BENCH_BEFORE`)."""

    label: str
    path: str


def trees() -> list[Tree]:
    """This checkout, then the older one if given."""
    before = os.environ.get(BEFORE)
    return [Tree("now", str(ROOT))] + ([Tree("before", before)] if before else [])


async def child(tree: Tree, url: str, *flags: str) -> dict[str, Any]:
    """Run `postgres_load.py` with `tree`'s reactloop and return its figures."""
    command = [
        sys.executable,
        str(LOAD),
        "--url",
        url,
        "--backend",
        sniffio.current_async_library(),
    ]
    done = await anyio.run_process(
        [*command, *flags], env={**os.environ, "PYTHONPATH": tree.path}, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{LOAD.name} ({tree.label}) failed: {done.stderr.decode()[-2000:]}")
    figures: dict[str, Any] = orjson.loads(done.stdout)
    return figures


def _shape(sizes: Sizes, level: int) -> list[str]:
    """Steps per run and runs per driver: a level's batch runs for about the same steps."""
    steps = max(2, sizes.history_steps // 5)
    each = 1 if sizes.repeats == 1 else (10 if level == 1 else 2)
    return ["--steps", str(steps), "--concurrency", str(level), "--each", str(each)]


async def _timed(sizes: Sizes, server: str) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Every tree at every level, `sizes.repeats` times, in rotating order."""
    samples: dict[tuple[str, int], list[dict[str, Any]]] = {}
    order = [(tree, level) for level in LEVELS for tree in trees()]
    for round_ in range(sizes.repeats):
        shift = round_ % len(order)
        for tree, level in order[shift:] + order[:shift]:
            batch = await child(tree, fresh_schema(server), *_shape(sizes, level))
            samples.setdefault((tree.label, level), []).append(batch)
    return samples


def _per_step_ms(batch: dict[str, Any]) -> float:
    steps = len(batch["run_seconds"]) * int(batch["steps_per_run"])
    return float(batch["wall"]) / steps * 1e3


def _latency_ms(batch: dict[str, Any]) -> float:
    steps = float(batch["steps_per_run"])
    return median([float(s) / steps * 1e3 for s in batch["run_seconds"]])


def _pair(values: dict[str, float]) -> tuple[float, float | None]:
    return values["now"], values.get("before")


def _time_figures(samples: dict[tuple[str, int], list[dict[str, Any]]]) -> list[Figure]:
    labels = [tree.label for tree in trees()]
    aggregate = {key: median([_per_step_ms(b) for b in runs]) for key, runs in samples.items()}
    latency = {key: median([_latency_ms(b) for b in runs]) for key, runs in samples.items()}
    figures = []
    for level in LEVELS:
        now, before = _pair({label: aggregate[label, level] for label in labels})
        figures.append(Figure("k", f"{level} at a time: per step (wall / all steps), now | before",
                              "ms", now, before))  # fmt: skip
        now, before = _pair({label: latency[label, level] for label in labels})
        figures.append(Figure("k", f"{level} at a time: a run's own time per step, now | before",
                              "ms", now, before))  # fmt: skip
    for label in labels:
        ratio = aggregate[label, LEVELS[-1]] / aggregate[label, LEVELS[0]]
        figures.append(Figure("k", f"per step at {LEVELS[-1]} / at {LEVELS[0]} at a time, {label}",
                              "x", ratio, target=Target(1.0)))  # fmt: skip
    return figures


async def _count_figures(sizes: Sizes, server: str) -> list[Figure]:
    counts: dict[tuple[str, int], dict[str, float]] = {}
    for tree in trees():
        for level in LEVELS:
            url = fresh_schema(server)
            counts[tree.label, level] = await child(tree, url, "--count", *_shape(sizes, level))
    figures = []
    for level in LEVELS:
        for what, key in (("per tool step", "per_step"), ("per run besides its steps", "per_run")):
            now, before = _pair({label: counts[label, level][key] for label, _ in counts})
            figures.append(Figure("k", f"{level} at a time: round trips {what}, now | before",
                                  "trips", now, before))  # fmt: skip
    return figures


async def concurrency_figures(sizes: Sizes, server: str) -> list[Figure]:
    """(k) Time per step and round trips at 1 and 20 runs at a time (and before, if given)."""
    return await _count_figures(sizes, server) + _time_figures(await _timed(sizes, server))

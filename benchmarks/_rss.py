"""The suite's `rss` scenario: `python -m benchmarks.memory` in a child process of its own.

The suite's own process has run other scenarios by then (a 200-step run, 1,000 concurrent runs,
stores...), so its peak RSS says little about what short runs need; the child does only short
runs of (b), ten times `short_runs` of them, sampled every `short_runs`.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import orjson
import sniffio

from benchmarks._figures import Figure, Target
from benchmarks._scenarios import Sizes
from benchmarks.memory import Tolerances

ROOT = Path(__file__).resolve().parent.parent
PER_THOUSAND = "/1k runs"


class MemoryBenchmarkError(RuntimeError):
    """The child process measuring memory failed; its figures would mean nothing."""


async def _child_report(runs: int, every: int) -> dict[str, Any]:
    """Run the memory benchmark in a fresh interpreter on this backend; its JSON report."""
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "memory.json"
        command = [sys.executable, "-m", "benchmarks.memory", "--runs", str(runs),
                   "--every", str(every), "--backend", sniffio.current_async_library(),
                   "--json", str(output)]  # fmt: skip
        done = await anyio.run_process(command, cwd=ROOT, check=False)
        if done.returncode not in (0, 1) or not output.exists():  # 1: a series grew (FAIL)
            raise MemoryBenchmarkError(
                f"{' '.join(command)} exited with {done.returncode}: {done.stderr.decode()}"
            )
        report: dict[str, Any] = orjson.loads(output.read_bytes())
    return report


def _growth(name: str, series: dict[str, Any], unit: str, limit: float) -> Figure:
    """A series' slope as a figure; noise can put a flat series' slope at or below zero."""
    return Figure("rss", f"{name}: growth", unit + PER_THOUSAND, series["slope"],
                  target=Target(limit), difference=True)  # fmt: skip


async def own_process(sizes: Sizes) -> list[Figure]:
    """RSS before the first run (imports done), peak RSS after `short_runs` and after ten times
    as many short runs, and the growth per 1,000 runs of RSS, gc-tracked objects and Python
    heap (the leak check)."""
    every = sizes.short_runs
    report = await _child_report(every * 10, every)
    limits = Tolerances()
    fresh = "own process"
    return [
        Figure("rss", f"RSS before the first run ({fresh})", "MiB", report["rss_before_runs"]),
        Figure("rss", f"peak RSS after {every} short runs ({fresh})", "MiB",
               report["peak_after_first"], target=Target(60.0)),
        Figure("rss", f"peak RSS after {every * 10} short runs ({fresh})", "MiB",
               report["peak_after_all"], target=Target(60.0)),
        _growth("RSS", report["rss"], "KiB", limits.rss_kib),
        _growth("objects tracked by gc", report["objects"], "objects", limits.objects),
        _growth("Python heap (tracemalloc)", report["heap"], "KiB", limits.heap_kib),
    ]  # fmt: skip

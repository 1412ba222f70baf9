"""Timing and memory helpers: interleaved repeats, medians, step intervals, peak memory."""

from __future__ import annotations

import argparse
import gc
import itertools
import resource
import statistics
import tracemalloc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import anyio

S = TypeVar("S")
Contender = Callable[[], Awaitable[S]]

MIB = 1024 * 1024
_STATUS = Path("/proc/self/status")


async def interleave(
    contenders: Mapping[str, Contender[S]], repeats: int, warmup: int = 1, collect: bool = True
) -> dict[str, list[S]]:
    """Run each contender `warmup` times unmeasured, then `repeats` times in rotating order.

    Rotating the order (and collecting garbage before each sample) keeps drift and GC debt from
    landing on one side only.
    """
    names = list(contenders)
    for _ in range(warmup):
        for name in names:
            await contenders[name]()
    samples: dict[str, list[S]] = {name: [] for name in names}
    for round_ in range(repeats):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            if collect:
                gc.collect()
            samples[name].append(await contenders[name]())
    return samples


def median(values: Sequence[float]) -> float:
    """The median of the samples."""
    return statistics.median(values)


def intervals(stamps: Sequence[float]) -> list[float]:
    """Seconds between consecutive model calls: one per step."""
    return [later - earlier for earlier, later in itertools.pairwise(stamps)]


def per_step_us(stamps: Sequence[float]) -> float:
    """Mean microseconds per step between the first and the last model call."""
    return (stamps[-1] - stamps[0]) / (len(stamps) - 1) * 1e6


def drift(stamps: Sequence[float], fraction: float = 0.1) -> float:
    """Cost of the last `fraction` of steps over the first (medians, so a GC pause is ignored)."""
    steps = intervals(stamps)
    count = max(1, int(len(steps) * fraction))
    return median(steps[-count:]) / median(steps[:count])


def peak_rss_mib() -> float:
    """The process's peak resident memory since the start (or the last reset), in MiB."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def traced_peak_mib(work: Callable[[], Awaitable[object]], collect: bool = True) -> float:
    """Peak Python heap (tracemalloc) above the start while `work` runs, in MiB."""
    if collect:
        gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        await work()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return (peak - start) / MIB


StepFigures = Callable[[int, int], Awaitable[dict[str, float]]]


def per_step_main(
    prog: str, doc: str | None, measure: StepFigures, argv: Sequence[str] | None
) -> int:
    """The command line of a per-step side benchmark: `measure(steps, repeats)` for each step
    count, each figure printed with its difference from the first (the baseline)."""
    parser = argparse.ArgumentParser(prog=prog, description=doc)
    parser.add_argument("--steps", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    args = parser.parse_args(argv)
    for steps in args.steps:
        figures = anyio.run(measure, steps, args.repeats, backend=args.backend)
        base = next(iter(figures.values()))
        width = max(map(len, figures))
        for name, value in figures.items():
            print(f"{steps:>4} steps  {name:<{width}} {value:8.1f} us/step  ({value - base:+.1f})")
    return 0

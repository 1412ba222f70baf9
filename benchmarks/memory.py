"""`python -m benchmarks.memory`: the memory of a process doing only short runs, and a leak check.

Run it as its own process (the suite's `rss` scenario spawns it), so that no other scenario's
memory counts: it reads the resident set (RSS) after the imports, then does `--runs` runs of
scenario (b) (one tool call, then the answer), sampling every `--every` runs the RSS and the
count of objects the garbage collector tracks; then the same number of runs again under
`tracemalloc`, sampling the Python heap. Each series must be flat: its slope over the samples
after the first (least squares, per 1,000 runs) is checked against a stated tolerance, and a
series that grows more prints FAIL (exit status 1).
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio
import orjson
from attrs import asdict, frozen

from benchmarks._fakes import Script, echo
from benchmarks._measure import peak_rss_mib
from benchmarks._rig import Rig

KIB = 1024
Run = Callable[[], Awaitable[None]]
_STATUS = Path("/proc/self/status")


@frozen
class Tolerances:
    """How much a series may grow per 1,000 runs and still count as flat.

    A run that kept one list slot alive would add 8 KiB of heap per 1,000 runs and one object
    each run; RSS moves in pages and allocator arenas, so its limit is looser.
    """

    rss_kib: float = 64.0
    heap_kib: float = 2.0
    objects: float = 1.0


@frozen
class Series:
    """One quantity sampled every `every` runs: the samples and their slope per 1,000 runs."""

    name: str
    unit: str
    every: int
    samples: tuple[float, ...]
    limit: float

    @property
    def slope(self) -> float:
        """Least-squares growth per 1,000 runs over the samples after the first (the warm-up)."""
        values = self.samples[1:]
        if len(values) < 2:
            return 0.0
        runs = [self.every * (index + 2) for index in range(len(values))]
        return statistics.linear_regression(runs, values).slope * 1000

    @property
    def flat(self) -> bool:
        """Whether the slope stays within the tolerance."""
        return self.slope <= self.limit


@frozen
class Report:
    """What one process measured: RSS in MiB at three points, and the three series."""

    runs: int
    every: int
    rss_before_runs: float
    rss_after_first: float
    peak_after_first: float
    rss_after_all: float
    peak_after_all: float
    rss: Series
    objects: Series
    heap: Series

    @property
    def flat(self) -> bool:
        """Whether no series grew beyond its tolerance."""
        return self.rss.flat and self.objects.flat and self.heap.flat


def rss_mib() -> float:
    """The process's resident memory now (Linux `VmRSS`), in MiB; the peak elsewhere."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / KIB
    except OSError:
        pass
    return peak_rss_mib()


def short_run(steps: int) -> Run:
    """One reactloop run of `steps` tool steps and the answer, on one loop for all runs; the
    script's stamps are dropped each run, so the harness keeps nothing."""
    rig = Rig.build(lambda: Script(steps), echo)

    async def run() -> None:
        await rig.run_ours()
        rig.ours.stamps.clear()

    return run


async def repeat(run: Run, count: int) -> None:
    """`count` runs one after another, then a full garbage collection."""
    for _ in range(count):
        await run()
    gc.collect()


@frozen
class Pass:
    """The RSS pass: RSS and peak (MiB) after the first samples' runs and after all of them,
    and the sampled RSS (KiB) and object counts."""

    first: tuple[float, float]
    last: tuple[float, float]
    rss: tuple[float, ...]
    objects: tuple[float, ...]


async def rss_pass(run: Run, runs: int, every: int) -> Pass:
    """`runs` runs, the RSS and the count of objects gc tracks read every `every` runs."""
    rss: list[float] = []
    objects: list[float] = []
    first = (0.0, 0.0)
    for chunk in range(runs // every):
        await repeat(run, every)
        rss.append(rss_mib() * KIB)
        objects.append(len(gc.get_objects()))
        if chunk == 0:
            first = (rss_mib(), peak_rss_mib())
    return Pass(first, (rss_mib(), peak_rss_mib()), tuple(rss), tuple(objects))


async def heap_pass(run: Run, runs: int, every: int) -> tuple[float, ...]:
    """`runs` runs under tracemalloc, the traced heap (KiB) read every `every` runs."""
    heap: list[float] = []
    tracemalloc.start()
    try:
        for _ in range(runs // every):
            await repeat(run, every)
            heap.append(tracemalloc.get_traced_memory()[0] / KIB)
    finally:
        tracemalloc.stop()
    return tuple(heap)


async def measure(
    make_run: Callable[[], Run], runs: int, every: int, tolerances: Tolerances
) -> Report:
    """The RSS and object counts over `runs` calls of the run `make_run()` makes, then the
    Python heap over as many more; the RSS before the runs is read before `make_run()`."""
    before_runs = rss_mib()
    run = make_run()
    rss = await rss_pass(run, runs, every)
    heap = await heap_pass(run, runs, every)
    return Report(
        runs, every, before_runs, *rss.first, *rss.last,
        Series("RSS", "KiB", every, rss.rss, tolerances.rss_kib),
        Series("objects tracked by gc", "objects", every, rss.objects, tolerances.objects),
        Series("Python heap (tracemalloc)", "KiB", every, heap, tolerances.heap_kib),
    )  # fmt: skip


def describe(report: Report) -> str:
    """The report as lines of text, each series with its slope, tolerance and verdict."""
    lines = [
        f"RSS before the first run:  {report.rss_before_runs:6.1f} MiB  (imports done)",
        f"RSS after {report.every:>6} runs:     {report.rss_after_first:6.1f} MiB"
        f"  (peak {report.peak_after_first:.1f})",
        f"RSS after {report.runs:>6} runs:     {report.rss_after_all:6.1f} MiB"
        f"  (peak {report.peak_after_all:.1f})",
        f"growth per 1,000 runs over the last {report.runs - report.every} runs "
        f"(sampled every {report.every}):",
    ]
    for series in (report.rss, report.objects, report.heap):
        verdict = "ok" if series.flat else "FAIL"
        lines.append(
            f"  {series.name:<26} {series.slope:+9.2f} {series.unit}"
            f"  (tolerance {series.limit:g})  {verdict}"
        )
    return "\n".join(lines)


def to_json(report: Report) -> dict[str, object]:
    """The report with each series' slope and verdict, for the suite and results.json."""
    document = asdict(report)
    for name in ("rss", "objects", "heap"):
        series: Series = getattr(report, name)
        document[name] |= {"slope": series.slope, "flat": series.flat}
    document["flat"] = report.flat
    return document


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__)
    parser.add_argument("--runs", type=int, default=20_000, help="runs per pass")
    parser.add_argument("--every", type=int, default=2_000, help="runs between samples")
    parser.add_argument("--steps", type=int, default=1, help="tool steps per run")
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the report, write the JSON if asked; 1 when a series is not flat."""
    args = parse(argv)
    print(
        f"{args.runs} runs of {args.steps} tool step(s) and an answer, {args.backend}, "
        f"Python {sys.version.split()[0]}, in this process only"
    )
    make_run = functools.partial(short_run, args.steps)
    report = anyio.run(measure, make_run, args.runs, args.every, Tolerances(), backend=args.backend)
    print(describe(report), flush=True)
    if args.json is not None:
        args.json.write_bytes(orjson.dumps(to_json(report), option=orjson.OPT_INDENT_2))
    return 0 if report.flat else 1


if __name__ == "__main__":
    sys.exit(main())

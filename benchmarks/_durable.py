"""(g) Durable runs: the per-step cost of journaling to `SqliteStore`, against the same run with no
store, at a short and a long history, and the journal bytes written per step; then `CONCURRENT`
runs at once on one store (what grouped commits are for), against as many with no store.

The first column is the run with a store, the second the same run without one.
`python -m benchmarks.before_after --only g` runs this against an earlier commit, alternately.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path

import anyio

from benchmarks._fakes import Script, echo, history
from benchmarks._figures import Figure, Target
from benchmarks._measure import Contender, interleave, median, per_step_us
from benchmarks._rig import PROMPT, Rig, expect_completed
from benchmarks._scenarios import Sizes, _each, _measure
from reactloop import ReActLoop
from reactloop._durable._sqlite import Synchronous
from reactloop._durable._stores import SqliteStore
from reactloop.stores import RunStore

MODES: tuple[str, ...] = ("none", "NORMAL", "NORMAL on loop", "FULL")
"""No store; SqliteStore in NORMAL and FULL mode; NORMAL with `commit_on_loop=True`."""
CONCURRENT = 20  # runs at once on one store


def _store(mode: str, path: Path) -> SqliteStore | None:
    if mode == "none":
        return None
    synchronous: Synchronous = "FULL" if mode == "FULL" else "NORMAL"
    return SqliteStore(path, synchronous=synchronous, commit_on_loop=mode.endswith("loop"))


def _rig(steps: int, size: int, store: RunStore | None) -> Rig:
    rig = Rig.build(lambda: Script(steps, base=size + 1), echo)
    loop = ReActLoop(rig.loop.config.model, tools=rig.loop.config.tool_list, store=store,
                     max_iterations=steps + 1)  # fmt: skip
    return Rig(loop, rig.ours, rig.theirs, rig.model, rig.tools, rig.specs)


def _bytes_per_step(path: Path, steps: int) -> float:
    """Journal bytes (record bodies) per step, the run's creation record left out."""
    with sqlite3.connect(path) as connection:
        total, runs = connection.execute(
            "SELECT SUM(LENGTH(body)), COUNT(DISTINCT run_id) FROM records WHERE seq > 1"
        ).fetchone()
    connection.close()
    return float(total) / float(runs * (steps + 1))


async def durable_steps(sizes: Sizes) -> list[Figure]:
    """(g) One run of `history_steps` steps per sample, with and without a SQLite store."""
    folder = Path(tempfile.mkdtemp(prefix="reactloop-bench-"))
    steps = sizes.history_steps
    contenders = {}
    paths: dict[str, Path] = {}
    for size in (sizes.small_history, sizes.big_history):
        for mode in MODES:
            key = f"{mode}/{size}"
            paths[key] = folder / f"{key.replace('/', '-').replace(' ', '-')}.db"
            rig = _rig(steps, size, _store(mode, paths[key]))
            contenders[key] = rig.stamped(history(size))["reactloop"]
    stamps = await _measure(sizes, contenders)
    cost = _each(stamps, per_step_us)
    figures: list[Figure] = []
    for size in (sizes.small_history, sizes.big_history):
        base = cost[f"none/{size}"]
        for mode in MODES[1:]:
            ours = cost[f"{mode}/{size}"]
            added = [a - b for a, b in zip(ours, base, strict=True)]
            figures.append(Figure("g", f"per step, {size}-message history, SQLite {mode}", "us",
                                  median(ours), median(base)))  # fmt: skip
            target = Target(150.0) if mode == "NORMAL" else None  # the default (issue 30)
            figures.append(Figure("g", f"added by SQLite {mode}, {size} messages", "us",
                                  median(added), target=target, difference=True))  # fmt: skip
    small, big = sizes.small_history, sizes.big_history
    growth = median(cost[f"NORMAL/{big}"]) / median(cost[f"NORMAL/{small}"])
    figures.append(Figure("g", f"SQLite: {big}-message / {small}-message step", "x", growth,
                          target=Target(1.2)))  # fmt: skip
    for size in (small, big):
        written = _bytes_per_step(paths[f"NORMAL/{size}"], steps)
        figures.append(Figure("g", f"journal bytes per step, {size} messages", "B", written))
    return figures + await concurrent_steps(sizes, folder)


async def concurrent_steps(sizes: Sizes, folder: Path) -> list[Figure]:
    """(g) `CONCURRENT` runs of a quarter of `history_steps` steps at once on one store: the
    wall time per step of a run while the others run too, with and without the store."""
    steps, size = max(2, sizes.history_steps // 4), sizes.small_history
    contenders = {}
    for mode in MODES:
        rig = _rig(steps, size, _store(mode, folder / f"concurrent-{mode.replace(' ', '-')}.db"))
        contenders[mode] = _together(rig, size, steps)
    repeats = max(1, sizes.repeats // 3)
    wall = await interleave(contenders, repeats, sizes.warmup, sizes.collect)
    base = wall["none"]
    figures: list[Figure] = []
    for mode in MODES[1:]:
        added = [a - b for a, b in zip(wall[mode], base, strict=True)]
        figures.append(Figure("g", f"{CONCURRENT} runs at once, per step, SQLite {mode}", "us",
                              median(wall[mode]), median(base)))  # fmt: skip
        figures.append(Figure("g", f"added by SQLite {mode}, {CONCURRENT} runs at once", "us",
                              median(added), difference=True))  # fmt: skip
    return figures


def _together(rig: Rig, size: int, steps: int) -> Contender[float]:
    """`CONCURRENT` runs at once on the rig's loop; a sample is microseconds per step."""

    async def one() -> None:
        expect_completed(await rig.loop.run(PROMPT, history=history(size)))

    async def sample() -> float:
        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(CONCURRENT):
                group.start_soon(one)
        return (time.perf_counter() - start) / steps * 1e6

    return sample

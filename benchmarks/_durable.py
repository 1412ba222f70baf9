"""(g) Durable runs: the per-step cost of journaling to `SqliteStore`, against the same run with no
store, at a short and a long history, and the journal bytes written per step.

The first column is the run with a store, the second the same run without one.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from benchmarks._fakes import Script, echo, history
from benchmarks._figures import Figure, Target
from benchmarks._measure import median, per_step_us
from benchmarks._rig import Rig
from benchmarks._scenarios import Sizes, _each, _measure
from reactloop import ReActLoop
from reactloop._durable._sqlite import Synchronous
from reactloop._durable._stores import SqliteStore
from reactloop.stores import RunStore

MODES: tuple[str, ...] = ("none", "NORMAL", "NORMAL on loop", "FULL")
"""No store; SqliteStore in NORMAL and FULL mode; NORMAL with `commit_on_loop=True`."""


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
            figures.append(Figure("g", f"added by SQLite {mode}, {size} messages", "us",
                                  median(added), target=Target(1000.0),
                                  difference=True))  # fmt: skip
    small, big = sizes.small_history, sizes.big_history
    growth = median(cost[f"NORMAL/{big}"]) / median(cost[f"NORMAL/{small}"])
    figures.append(Figure("g", f"SQLite: {big}-message / {small}-message step", "x", growth,
                          target=Target(1.2)))  # fmt: skip
    for size in (small, big):
        written = _bytes_per_step(paths[f"NORMAL/{size}"], steps)
        figures.append(Figure("g", f"journal bytes per step, {size} messages", "B", written))
    return figures

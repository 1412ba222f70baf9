"""(k) PostgreSQL: the per-step cost of journaling to `PostgresStore` (a throwaway local cluster
on a loopback port, as the tests start it), against the same run with no store, at a short and
a long history. Skipped, with a note, where PostgreSQL's binaries are not installed.

The first column is the run with the store, the second the same run without one. Each append
is a server round trip that checks the run's lease and commits durably (the server's own WAL
flush), so this is the cost of many workers sharing runs, not a target for the embedded case.
Then runs at 1 and 20 at a time on one store, and the round trips per step
(`_postgres_concurrency`).
"""

from __future__ import annotations

from benchmarks._durable import _rig
from benchmarks._fakes import history
from benchmarks._figures import Figure
from benchmarks._measure import median, per_step_us
from benchmarks._postgres_concurrency import concurrency_figures
from benchmarks._scenarios import Sizes, _each, _measure
from reactloop._durable._postgres import PostgresStore
from tests.helpers.postgres_server import binaries, fresh_schema, throwaway_cluster


async def postgres_steps(sizes: Sizes) -> list[Figure]:
    """(k) One run of `history_steps` steps per sample, with and without a PostgresStore."""
    bin_dir = binaries()
    if bin_dir is None:
        note = "PostgreSQL is not installed (apt-get install postgresql)"
        return [Figure("k", "per step, PostgresStore", "us", None, note=note)]
    with throwaway_cluster(bin_dir) as server:
        return await _measured(sizes, server) + await concurrency_figures(sizes, server)


async def _measured(sizes: Sizes, server: str) -> list[Figure]:
    steps, figures = sizes.history_steps, []
    for size in (sizes.small_history, sizes.big_history):
        store = PostgresStore(fresh_schema(server))
        contenders = {
            "store": _rig(steps, size, store).stamped(history(size))["reactloop"],
            "none": _rig(steps, size, None).stamped(history(size))["reactloop"],
        }
        cost = _each(await _measure(sizes, contenders), per_step_us)
        added = [a - b for a, b in zip(cost["store"], cost["none"], strict=True)]
        figures.append(Figure("k", f"per step, {size}-message history, PostgresStore", "us",
                              median(cost["store"]), median(cost["none"])))  # fmt: skip
        figures.append(Figure("k", f"added by PostgresStore, {size} messages", "us",
                              median(added), difference=True))  # fmt: skip
        await store.aclose()
    return figures

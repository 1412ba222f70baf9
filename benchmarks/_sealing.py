"""(i) State tokens: the cost of sealing a paused run's journal into a signed token and of reading
it back (`seal` + `unseal`), for a short and a long run, and the token's size.

The journal is a real run's (each step one call whose result is about 300 characters of text).
"""

from __future__ import annotations

import time

from benchmarks._fakes import InstantModel, Script, as_tool
from benchmarks._figures import Figure, Target
from benchmarks._measure import median
from benchmarks._scenarios import Sizes
from reactloop import ReActLoop
from reactloop._approval._sealing import SigningKeys, seal, unseal
from reactloop._core._records import Record
from reactloop._durable._stores import MemoryStore

KEYS = SigningKeys.of([b"benchmark-key-0123456789abcdefghijkl"])
ROUNDS = 20
RESULT = "A page about the question, with a title, a link and a snippet of its text. " * 4


async def echo(n: int) -> str:
    """Return a search-like page of text about the number.

    Args:
        n: Any number.
    """
    return f"{n}: {RESULT}"


async def journal(steps: int) -> tuple[Record, ...]:
    """The records a store holds after a run of `steps` tool steps."""
    store = MemoryStore()
    loop = ReActLoop(InstantModel(Script(steps)), tools=[as_tool(echo)], store=store,
                     max_iterations=steps + 1)  # fmt: skip
    result = await loop.run("go")
    return (await store.load(result.run_id)).records


def round_trip_us(records: tuple[Record, ...]) -> float:
    """Mean microseconds of one `seal` and `unseal` of `records`, over `ROUNDS` rounds."""
    started = time.perf_counter()
    for _ in range(ROUNDS):
        unseal(seal(records, KEYS, issued_at=0.0), KEYS)
    return (time.perf_counter() - started) / ROUNDS * 1e6


async def sealing(sizes: Sizes) -> list[Figure]:
    """(i) seal + unseal of a `history_steps / 10`- and a `history_steps`-step run's journal."""
    figures: list[Figure] = []
    for steps in (max(sizes.history_steps // 10, 1), sizes.history_steps):
        records = await journal(steps)
        for _ in range(sizes.warmup):
            round_trip_us(records)
        samples = [round_trip_us(records) for _ in range(sizes.repeats)]
        figures.append(Figure("i", f"seal + unseal, {steps}-step run", "us", median(samples),
                              target=Target(100.0 * steps)))  # fmt: skip
        size = len(seal(records, KEYS, issued_at=0.0))
        figures.append(Figure("i", f"token size, {steps}-step run", "B", float(size)))
    return figures

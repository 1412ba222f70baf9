"""The scenarios of issue 5, each reactloop against the hand-written loop (see README Performance).

Every scenario takes `Sizes` (the full sizes by default, `Sizes.tiny()` for the smoke test) and
returns its figures: medians over interleaved repeats after a warm-up.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping

import anyio
from attrs import frozen

from benchmarks import _handwritten as handwritten
from benchmarks._fakes import Script, echo, history, napping
from benchmarks._figures import Figure, Measure, Target
from benchmarks._measure import (
    Contender,
    S,
    drift,
    interleave,
    median,
    per_step_us,
    traced_peak_mib,
)
from benchmarks._rig import HANDWRITTEN, PROMPT, REACTLOOP, Rig
from reactloop import ContextWindow


@frozen
class Sizes:
    """How big each scenario is, and how often it is repeated."""

    steps: int = 200
    short_runs: int = 2000
    fanout: int = 10
    nap: float = 0.1
    deltas: int = 10_000
    history_steps: int = 100
    small_history: int = 10
    big_history: int = 1000
    trim_history: int = 10_000
    concurrent: int = 1000
    concurrent_nap: float = 0.01
    mcp_calls: int = 200
    repeats: int = 15
    warmup: int = 1
    collect: bool = True

    @classmethod
    def tiny(cls) -> Sizes:
        """Sizes small enough for a smoke test (a few milliseconds per scenario)."""
        return cls(
            steps=20, short_runs=20, fanout=3, nap=0.001, deltas=100, history_steps=10,
            small_history=4, big_history=40, trim_history=200, concurrent=20,
            concurrent_nap=0.001, mcp_calls=3, repeats=1, warmup=0, collect=False,
        )  # fmt: skip


async def _measure(sizes: Sizes, contenders: Mapping[str, Contender[S]]) -> dict[str, list[S]]:
    """Interleaved repeats after a warm-up, collecting garbage before each unless tiny."""
    return await interleave(contenders, sizes.repeats, sizes.warmup, sizes.collect)


def _figure(
    scenario: str,
    metric: str,
    unit: str,
    samples: dict[str, list[float]],
    *,
    target: Target | None = None,
    note: str = "",
) -> Figure:
    ours, theirs = median(samples[REACTLOOP]), median(samples[HANDWRITTEN])
    return Figure(scenario, metric, unit, ours, theirs, target, note)


def _each(
    samples: dict[str, list[list[float]]], of: Callable[[list[float]], float]
) -> dict[str, list[float]]:
    return {name: [of(sample) for sample in runs] for name, runs in samples.items()}


async def long_run(sizes: Sizes) -> list[Figure]:
    """(a) One run of `steps` steps, one tool call each: cost per step, and its drift."""
    rig = Rig.build(lambda: Script(sizes.steps), echo)
    stamps = await _measure(sizes, rig.stamped())
    tenth = "last 10% / first 10% of steps"
    return [
        _figure("a", f"{sizes.steps}-step run: per step", "us", _each(stamps, per_step_us),
                target=Target(2.0, Measure.RATIO)),
        _figure("a", tenth, "x", _each(stamps, drift), target=Target(1.2)),
    ]  # fmt: skip


def _timed(
    go: Callable[[], Awaitable[None]], count: int = 1, scale: float = 1e6
) -> Contender[float]:
    """A contender whose sample is the time `go` takes per unit of work (`count` units), scaled."""

    async def sample() -> float:
        started = time.perf_counter()
        await go()
        return (time.perf_counter() - started) / count * scale

    return sample


async def short_runs(sizes: Sizes) -> list[Figure]:
    """(b) Many short runs of 2 steps each (a tool call, then the answer), one after another."""
    rig = Rig.build(lambda: Script(1), echo)
    count = sizes.short_runs

    async def ours() -> None:
        for _ in range(count):
            await rig.run_ours()

    async def theirs() -> None:
        for _ in range(count):
            await rig.run_theirs()

    contenders = {REACTLOOP: _timed(ours, count), HANDWRITTEN: _timed(theirs, count)}
    samples = await _measure(sizes, contenders)
    per_run = _figure("b", f"{count} runs of 2 steps: per run", "us", samples,
                      target=Target(3.0, Measure.RATIO))  # fmt: skip
    rate = {name: [1e6 / value for value in values] for name, values in samples.items()}
    return [per_run, _figure("b", "runs per second", "1/s", rate)]


async def fan_out(sizes: Sizes) -> list[Figure]:
    """(c) One step with `fanout` tool calls that each sleep `nap`: the step's wall time."""
    nap = napping(sizes.nap)
    rig = Rig.build(lambda: Script(1, fanout=sizes.fanout, tool_name=nap.__name__), nap)
    stamps = await _measure(sizes, rig.stamped())
    metric = f"step with {sizes.fanout} calls sleeping {sizes.nap:g} s: wall"
    step_time = _each(stamps, lambda run: run[1] - run[0])
    return [_figure("c", metric, "s", step_time, target=Target(round(sizes.nap * 1.05, 6)))]


async def streaming(sizes: Sizes) -> list[Figure]:
    """(d) One answer streamed as `deltas` text deltas, consumed through `stream()`."""
    rig = Rig.build(lambda: Script(0, deltas=sizes.deltas), echo)

    async def ours() -> float:
        count = 0
        started = time.perf_counter()
        async with rig.loop.stream(PROMPT) as events:
            async for _ in events:
                count += 1
        return (time.perf_counter() - started) / count * 1e6

    async def theirs() -> float:
        started = time.perf_counter()
        count = await handwritten.stream(rig.model, rig.tools, rig.specs, PROMPT)
        return (time.perf_counter() - started) / count * 1e6

    samples = await _measure(sizes, {REACTLOOP: ours, HANDWRITTEN: theirs})
    metric = f"stream of {sizes.deltas} deltas: per event"
    return [_figure("d", metric, "us", samples, target=Target(10.0))]


def _history_script(steps: int, history_length: int) -> Callable[[], Script]:
    return lambda: Script(steps, base=history_length + 1)


async def long_history(sizes: Sizes) -> list[Figure]:
    """(e, second half) Cost per step with a long history that fits, against a short one.

    reactloop budgets every request against a context window the history fits in (so the figure
    includes token bookkeeping); the hand-written loop does no budgeting at all.
    """
    small, big = sizes.small_history, sizes.big_history
    window = ContextWindow(max_tokens=10_000_000)
    rigs = {size: Rig.build(_history_script(sizes.history_steps, size), echo, window)
            for size in (small, big)}  # fmt: skip
    contenders: dict[str, Contender[list[float]]] = {}
    for size, rig in rigs.items():
        for name, contender in rig.stamped(history(size)).items():
            contenders[f"{name}/{size}"] = contender
    stamps = await _measure(sizes, contenders)
    cost = _each(stamps, per_step_us)
    by_size = {size: {n: cost[f"{n}/{size}"] for n in (REACTLOOP, HANDWRITTEN)} for size in rigs}
    growth = {
        name: [median(by_size[big][name]) / median(by_size[small][name])]
        for name in (REACTLOOP, HANDWRITTEN)
    }
    per_step = f"{sizes.history_steps}-step run: per step"
    return [
        _figure("e", f"{per_step}, {small}-message history", "us", by_size[small]),
        _figure("e", f"{per_step}, {big}-message history", "us", by_size[big]),
        _figure("e", f"{big}-message / {small}-message step", "x", growth, target=Target(1.2)),
    ]


async def concurrent_runs(sizes: Sizes) -> list[Figure]:
    """(f) `concurrent` runs at once on one loop instance, tools sleeping `concurrent_nap`."""
    nap = napping(sizes.concurrent_nap)
    rig = Rig.build(lambda: Script(1, tool_name=nap.__name__), nap)
    count = sizes.concurrent

    async def ours() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(count):
                group.start_soon(rig.run_ours)

    async def theirs() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(count):
                group.start_soon(rig.run_theirs)

    contenders = {REACTLOOP: _timed(ours, scale=1.0), HANDWRITTEN: _timed(theirs, scale=1.0)}
    samples = await _measure(sizes, contenders)
    memory = {
        REACTLOOP: [await traced_peak_mib(ours, sizes.collect)],
        HANDWRITTEN: [await traced_peak_mib(theirs, sizes.collect)],
    }
    note = "tracemalloc peak above the start, one pass"
    return [
        _figure("f", f"{count} concurrent runs: wall", "s", samples, target=Target(2.0)),
        _figure("f", f"{count} concurrent runs: peak heap", "MiB", memory, note=note),
    ]

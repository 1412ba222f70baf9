"""All scenarios in order, run inside one event loop; memory (`rss`) in a fresh child process."""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable

from benchmarks._approval import approval_costs
from benchmarks._durable import durable_steps
from benchmarks._figures import Figure
from benchmarks._langgraph import available, langgraph_steps
from benchmarks._postgres import postgres_steps
from benchmarks._rss import own_process
from benchmarks._scenarios import (
    Sizes,
    concurrent_runs,
    fan_out,
    long_history,
    long_run,
    short_runs,
    streaming,
)
from benchmarks._sealing import sealing
from benchmarks._selection import selection_steps
from benchmarks._trim import trim_cost

Scenario = Callable[[Sizes], Awaitable[list[Figure]]]


async def trim(sizes: Sizes) -> list[Figure]:
    """(e, first half): skipped until `reactloop._policies._context` exists."""
    return [trim_cost(sizes.trim_history, sizes.repeats)]


SCENARIOS: dict[str, Scenario] = {
    "a": long_run,
    "b": short_runs,
    "rss": own_process,
    "c": fan_out,
    "d": streaming,
    "e-trim": trim,
    "e": long_history,
    "f": concurrent_runs,
    "g": durable_steps,
    "i": sealing,
    "j": approval_costs,
    "k": postgres_steps,
    "sel": selection_steps,
}
if available():  # the `bench` extra: LangGraph's agent and checkpointer alongside (g)
    SCENARIOS["h"] = langgraph_steps
if importlib.util.find_spec("mcp") is not None:  # the `mcp` extra (in `dev`): (l) MCP calls
    from benchmarks._mcp import mcp_calls

    SCENARIOS["l"] = mcp_calls


async def run_suite(sizes: Sizes, only: frozenset[str] | None = None) -> list[Figure]:
    """Run the scenarios (all, or those named in `only`) in order and collect their figures."""
    figures: list[Figure] = []
    for name, scenario in SCENARIOS.items():
        if only is None or name in only:
            figures.extend(await scenario(sizes))
    return figures

"""(sel) Tool selection: `RelevanceSelector` ranking 1,000 tools for each step of a conversation
that grows as a run's does (a user question, then a tool call and its result per step).

The index over the tools is built once (the first step, not measured); each measured step ranks
the tools against a transcript with a new tool result, as a run's step would.
"""

from __future__ import annotations

import random
import time

from benchmarks._figures import Figure, Target
from benchmarks._measure import median
from benchmarks._scenarios import Sizes
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._tools._selection import RelevanceSelector

TOOLS = 1_000
_VOCABULARY = (
    "weather file database user email calendar invoice payment search web page image video map "
    "route flight hotel stock price news translate code repository issue ticket order shipment "
    "customer report chart contract meeting note task project budget expense travel"
)
WORDS = _VOCABULARY.split()
RESULT = "A page about the question, with a title, a link and a snippet of its text. " * 4


class BenchTool:
    """A tool as a selector sees it: a name, a description and a one-parameter schema."""

    timeout = None
    exclusive = False

    def __init__(self, index: int, pick: random.Random) -> None:
        first, second, third = pick.sample(WORDS, 3)
        self.name = f"{first}_{second}_{index}"
        parameter = {"type": "string", "description": f"The {third} to work on."}
        schema = {"type": "object", "properties": {f"{third}_id": parameter}}
        self.spec = ToolSpec(self.name, f"Work with {first} and {second} records.", schema)


def tools() -> tuple[BenchTool, ...]:
    """`TOOLS` tools with names and descriptions drawn from `WORDS` (the same every time)."""
    pick = random.Random(7)
    return tuple(BenchTool(i, pick) for i in range(TOOLS))


def step_us(selector: RelevanceSelector, toolset: tuple[BenchTool, ...], steps: int) -> float:
    """Median microseconds of ranking `toolset` once per step of a `steps`-step conversation."""
    pick = random.Random(11)
    messages: list[Message] = [UserMessage(" ".join(pick.sample(WORDS, 8)) + "?")]
    selector.rank(toolset, messages)  # type: ignore[arg-type]  # builds the index
    samples: list[float] = []
    for step in range(steps):
        call = ToolCall(toolset[step % TOOLS].name, "{}", f"call_{step}")
        answer = f"{' '.join(pick.sample(WORDS, 3))}: {RESULT}"
        messages += [AssistantMessage("", (call,)), ToolMessage(call.id, call.name, answer)]
        started = time.perf_counter()
        selector.rank(toolset, messages)  # type: ignore[arg-type]
        samples.append((time.perf_counter() - started) * 1e6)
    return median(samples)


async def selection_steps(sizes: Sizes) -> list[Figure]:
    """(sel) Median time per step to rank 1,000 tools (target: under 1 ms)."""
    toolset = tools()
    samples = [step_us(RelevanceSelector(), toolset, sizes.steps) for _ in range(sizes.repeats)]
    metric = f"rank {TOOLS} tools per step (RelevanceSelector)"
    return [Figure("sel", metric, "us", median(samples), target=Target(1000.0))]

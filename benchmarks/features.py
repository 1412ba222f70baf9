"""`python -m benchmarks.features`: what each feature a loop does not configure costs per step.

Counts every Python call a plain run (no store, hooks, output type, toolsets, selection,
telemetry, prices, context window or agent tools) makes into each feature's code, with a
profiler hook: runs of `--short` and `--long` steps, the difference divided by the extra steps.
Zero for each means the feature adds no per-step work when it is not configured (adr/0007).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import anyio

import reactloop
from reactloop import ReActLoop, tool
from reactloop.testing import ScriptedModel, call, reply

ROOT = Path(reactloop.__file__).parent
FEATURES = {
    "approval": ("_approval/", "_phases/_gate.py"),
    "structured output": ("_output/",),
    "toolsets (MCP)": ("_tools/_toolsets.py", "_tools/_mcp/"),
    "tool selection": ("_tools/_selection.py",),
    "telemetry": ("_telemetry/_otel.py", "_telemetry/_content.py", "_telemetry/_semconv.py"),
    "prices": ("_costs/",),
    "context window": ("_policies/_context.py", "_policies/_tokens.py", "_policies/_prefix.py"),
    "agent tools": ("_loop/_agent_tool.py", "_tools/_nesting.py"),
    "durability": ("_durable/",),
}
"""Each feature's code, as paths under the `reactloop` package."""


async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def feature_of(filename: str) -> str | None:
    """The feature whose code `filename` is, or None."""
    if not filename.startswith(str(ROOT)):
        return None
    relative = Path(filename).relative_to(ROOT).as_posix()
    for feature, places in FEATURES.items():
        if any(relative.startswith(place) for place in places):
            return feature
    return None


async def calls_into_features(steps: int) -> tuple[Counter[str], int]:
    """Calls made into each feature's code by one plain run of `steps` tool steps, and the
    library's calls in all."""
    script = [reply("", call("add", a=step, b=1)) for step in range(steps)] + ["done"]
    loop = ReActLoop(ScriptedModel(script), tools=[tool(add)], max_iterations=steps + 1)
    counted: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(str(ROOT)):
            counted[feature_of(frame.f_code.co_filename) or "the loop"] += 1

    sys.setprofile(profile)
    try:
        result = await loop.run("go")
    finally:
        sys.setprofile(None)
    if result.output != "done" or len(result.steps) != steps + 1:
        raise RuntimeError(f"the counted run ended early: {result.stop_reason}")
    return counted, sum(counted.values())


async def per_step(short: int, long: int) -> dict[str, float]:
    """Calls per step into each feature (and into the loop's own code), from two runs."""
    few, _ = await calls_into_features(short)
    many, _ = await calls_into_features(long)
    names = [*FEATURES, "the loop"]
    return {name: (many[name] - few[name]) / (long - short) for name in names}


def main(argv: Sequence[str] | None = None) -> int:
    """Print calls per step by feature; exit 1 if an unconfigured feature makes any."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.features", description=__doc__)
    parser.add_argument("--short", type=int, default=3)
    parser.add_argument("--long", type=int, default=23)
    args = parser.parse_args(argv)
    counts = anyio.run(per_step, args.short, args.long)
    print("| feature (not configured) | Python calls per step into its code |")
    print("| --- | --- |")
    for name, value in counts.items():
        print(f"| {name} | {value:g} |")
    return 1 if any(counts[name] for name in FEATURES) else 0


if __name__ == "__main__":
    sys.exit(main())

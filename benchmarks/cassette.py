"""`python -m benchmarks.cassette`: what replaying a cassette costs per step, against the plain
`ScriptedModel` a test would otherwise use.

The same run (`--steps` tool steps, then an answer) is played by a `ScriptedModel`, by a
`ReplayModel` of its recording (each request compared with the recorded one, tools re-run), and
by a `ReplayModel` with the tools served from the recording. Runs alternate; the figure is the
median of the runs' mean time per step (microseconds).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence

from benchmarks._measure import interleave, median, per_step_main
from reactloop import ReActLoop
from reactloop._cassettes._cassette import Cassette
from reactloop._cassettes._models import RecordingModel, ReplayModel
from reactloop._core._contracts import Model, Tool
from reactloop.messages import ToolCall
from reactloop.models import ModelResponse
from reactloop.testing import FakeTool, ScriptedModel, reply

Play = Callable[[], Awaitable[float]]


def script(steps: int) -> list[ModelResponse]:
    """`steps` responses calling the tool with new arguments, then a text answer."""
    calls = [reply("", ToolCall("echo", f'{{"n": {n}}}', f"c{n}")) for n in range(steps)]
    return [*calls, reply("done")]


def agent(model: Model, tools: Sequence[Tool], steps: int) -> ReActLoop:
    """The loop under measure: one tool, enough iterations for the script."""
    return ReActLoop(model, tools=tools, max_iterations=steps + 1, instructions="Echo.")


def player(steps: int, model: Callable[[], Model], tools: Callable[[], Sequence[Tool]]) -> Play:
    """A contender: one run with a fresh model and tools; its mean seconds per step."""

    async def play() -> float:
        loop = agent(model(), tools(), steps)
        started = time.perf_counter()
        result = await loop.run("go")
        assert result.output == "done", result.error
        return (time.perf_counter() - started) / (steps + 1)

    return play


async def recorded(steps: int) -> Cassette:
    """The run, recorded once."""
    recorder = RecordingModel(ScriptedModel(script(steps)))
    result = await agent(recorder, [FakeTool("echo")], steps).run("go")
    return recorder.cassette(result)


async def measure(steps: int, repeats: int) -> dict[str, float]:
    """Median microseconds per step of each contender."""
    cassette = await recorded(steps)
    contenders = {
        "ScriptedModel": player(
            steps, lambda: ScriptedModel(script(steps)), lambda: [FakeTool("echo")]
        ),
        "ReplayModel": player(steps, lambda: ReplayModel(cassette), lambda: [FakeTool("echo")]),
        "ReplayModel, served tools": player(
            steps,
            lambda: ReplayModel(cassette),
            lambda: cassette.recorded_tools([FakeTool("echo")]),
        ),
    }
    samples = await interleave(contenders, repeats)
    return {name: median(values) * 1e6 for name, values in samples.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures for each step count."""
    return per_step_main("python -m benchmarks.cassette", __doc__, measure, argv)


if __name__ == "__main__":
    raise SystemExit(main())

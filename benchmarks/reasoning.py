"""`python -m benchmarks.reasoning`: what reasoning parts cost per step on the plain loop.

The same run (`--steps` tool steps, then an answer) is played on the plain loop (`run()`: nobody
listening, no store, no context window) by a model whose responses carry no reasoning, one whose
tool-call responses each carry one reasoning part (readable thinking and its signature, as
Anthropic sends it) and one whose carry two (that, then a redacted block). The model answers at
once from responses built beforehand (one scheduler checkpoint, like `_fakes.InstantModel`). Runs
alternate; each figure is the median of the runs' mean time per step, in microseconds, with the
first and third quartiles.

The no-reasoning contender uses only what reactloop had before reasoning parts existed, so this
file also runs on an older commit (`--only none`): that is how "no measurable cost when a model
returns no reasoning" is checked, against the same figure on the commit before.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import orjson
from attrs import frozen

from benchmarks._fakes import as_tool, echo
from benchmarks._measure import interleave
from reactloop import AssistantMessage, ReActLoop, ToolCall
from reactloop._core._contracts import DeltaSink
from reactloop.models import FinishReason, ModelRequest, ModelResponse

Play = Callable[[], Awaitable[float]]
CONTENDERS = ("none", "one", "two")
"""How many reasoning parts each tool-call response carries: none, one, two."""
THOUGHT = "The user wants the echo of a number; calling the tool is the only way to get it. " * 8
SIGNATURE = "EqQBCkgIARABGAIiQL" + "x" * 380  # the size of an Anthropic thinking signature
REDACTED = "EmwKAhgBEgy3va3pzix" + "y" * 780


def reasoning_parts(count: int) -> list[Any]:
    """`count` reasoning parts as an Anthropic thinking model returns them (imported here: the
    no-reasoning contender must run on a commit that has no reasoning parts)."""
    part = importlib.import_module("reactloop.messages").ReasoningPart
    made = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
    parts = [part(THOUGHT, signature=SIGNATURE, **made), part(redacted=REDACTED, **made)]
    return parts[:count]


def responses(steps: int, reasoning: int) -> list[ModelResponse]:
    """`steps` tool-call responses (each with `reasoning` parts before its call), then "done"."""
    made = []
    for step in range(steps):
        call = ToolCall("echo", f'{{"n": {step}}}', f"call_{step}")
        if reasoning:
            message = AssistantMessage(parts=[*reasoning_parts(reasoning), call], refusal=None)
        else:
            message = AssistantMessage("", (call,))
        made.append(ModelResponse(message, finish_reason=FinishReason.TOOL_CALLS))
    return [*made, ModelResponse(AssistantMessage("done"))]


@frozen
class InstantModel:
    """Answers each request at once with the response for its step (read from its length: the
    prompt, then a call and its result per step), so one model serves every run."""

    answers: list[ModelResponse]

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The step's response, after one checkpoint (like a network await)."""
        await anyio.lowlevel.checkpoint()
        step = (len(request.messages) - 1) // 2
        return self.answers[min(step, len(self.answers) - 1)]

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """The same response, unstreamed (the plain loop never streams)."""
        return await self.request(request)


def player(steps: int, reasoning: int) -> Play:
    """A contender: one run of the plain loop; its mean seconds per step."""
    loop = ReActLoop(
        InstantModel(responses(steps, reasoning)), tools=[as_tool(echo)],
        max_iterations=steps + 1,
    )  # fmt: skip

    async def play() -> float:
        started = time.perf_counter()
        result = await loop.run("go")
        took = time.perf_counter() - started
        assert result.output == "done", result.error
        return took / (steps + 1)

    return play


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """The first quartile, the median and the third quartile (one sample: itself, thrice)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    first, median, third = statistics.quantiles(values, n=4, method="inclusive")
    return first, median, third


async def measure(steps: int, repeats: int, only: Sequence[str] = CONTENDERS) -> dict[str, Any]:
    """Each contender's quartiles of microseconds per step (runs interleaved after a warm-up)."""
    contenders = {name: player(steps, CONTENDERS.index(name)) for name in only}
    samples = await interleave(contenders, repeats)
    return {name: [v * 1e6 for v in quartiles(values)] for name, values in samples.items()}


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reasoning", description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--only", action="append", choices=CONTENDERS)
    parser.add_argument("--json", action="store_true", help="one JSON object on one line")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Print each contender's median per step, its quartiles and its difference from the first."""
    args = parse(argv)
    only = args.only or list(CONTENDERS)
    figures = anyio.run(measure, args.steps, args.repeats, only, backend=args.backend)
    if args.json:
        print(orjson.dumps({"steps": args.steps, "figures": figures}).decode())
        return 0
    base = figures[only[0]][1]
    for name, (first, median, third) in figures.items():
        print(
            f"{args.steps} steps  {name:<5} reasoning parts {median:6.1f} us/step"
            f"  (quartiles {first:.1f}-{third:.1f})  ({median - base:+.1f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

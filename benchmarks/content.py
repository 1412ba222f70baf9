"""`python -m benchmarks.content`: what content parts cost per step, and what a store writes.

Per step, on the plain loop (`run()`: nobody listening, no store): a tool returning text (`text`,
what reactloop did before content parts existed, so this file also runs on an older commit with
`--only text`: that is how "no cost when no parts are used" is checked, against the same figure on
the commit before), and a tool returning text and a 64 KiB PNG (`image`). The model answers at once
from responses built beforehand (one scheduler checkpoint). Runs alternate; each figure is the
median of the runs' mean time per step, in microseconds, with the first and third quartiles.

`--store` then plays one run with a `SqliteStore` whose first step returns a 5 MB image and whose
later steps return text, and prints the bytes the store's file grew by (the image is kept once).
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import orjson
from attrs import frozen

from benchmarks._measure import interleave
from reactloop import AssistantMessage, ReActLoop, SqliteStore, ToolCall, tool
from reactloop._core._contracts import DeltaSink
from reactloop.models import FinishReason, ModelRequest, ModelResponse

Play = Callable[[], Awaitable[float]]
CONTENDERS = ("text", "image")
IMAGE = b"\x89PNG\r\n\x1a\n" + os.urandom(64 * 1024)


def responses(steps: int) -> list[ModelResponse]:
    """`steps` tool-call responses, then "done"."""
    made = [
        ModelResponse(
            AssistantMessage("", (ToolCall("look", f'{{"n": {step}}}', f"call_{step}"),)),
            finish_reason=FinishReason.TOOL_CALLS,
        )
        for step in range(steps)
    ]
    return [*made, ModelResponse(AssistantMessage("done"))]


@frozen
class InstantModel:
    """Answers each request at once with the response for its step (read from its length)."""

    answers: list[ModelResponse]

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The step's response, after one checkpoint (like a network await)."""
        await anyio.lowlevel.checkpoint()
        step = (len(request.messages) - 1) // 2
        return self.answers[min(step, len(self.answers) - 1)]

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """The same response, unstreamed (the plain loop never streams)."""
        return await self.request(request)


def looker(kind: str, image: bytes, first_only: bool = False) -> Any:
    """The tool: text, or text and an image (imported here: `text` must run on a commit that has
    no content parts)."""

    async def look(n: int) -> Any:
        """Look at item n.

        Args:
            n: Which item.
        """
        if kind == "text" or (first_only and n > 0):
            return f"item {n}"
        part = importlib.import_module("reactloop").ImagePart
        return [f"item {n}:", part(image)]

    return tool(look)


def player(steps: int, kind: str) -> Play:
    """A contender: one run of the plain loop; its mean seconds per step."""
    loop = ReActLoop(
        InstantModel(responses(steps)), tools=[looker(kind, IMAGE)], max_iterations=steps + 1
    )

    async def play() -> float:
        started = time.perf_counter()
        result = await loop.run("go")
        took = time.perf_counter() - started
        assert result.output == "done", result.error
        return took / (steps + 1)

    return play


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """The first quartile, the median and the third quartile."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    first, median, third = statistics.quantiles(values, n=4, method="inclusive")
    return first, median, third


async def measure(steps: int, repeats: int, only: Sequence[str]) -> dict[str, Any]:
    """Each contender's quartiles of microseconds per step (runs interleaved after a warm-up)."""
    samples = await interleave({name: player(steps, name) for name in only}, repeats)
    return {name: [v * 1e6 for v in quartiles(values)] for name, values in samples.items()}


async def stored_bytes(steps: int) -> dict[str, int]:
    """One durable run whose first step returns a 5 MB image: how much the store's file grew."""
    image = b"\x89PNG\r\n\x1a\n" + os.urandom(5 * 1024 * 1024)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "runs.db")
        store = SqliteStore(path)
        tools = [looker("image", image, first_only=True)]
        loop = ReActLoop(
            InstantModel(responses(steps)), tools=tools, store=store, max_iterations=steps + 1
        )
        empty = _size(path)
        result = await loop.run("go")
        assert result.output == "done", result.error
        await store.aclose()
        return {"image_bytes": len(image), "store_grew": _size(path) - empty, "steps": steps}


def _size(path: str) -> int:
    """The database's bytes on disk, its write-ahead log included."""
    return sum(os.path.getsize(p) for p in (path, f"{path}-wal") if os.path.exists(p))


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.content", description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--only", action="append", choices=CONTENDERS)
    parser.add_argument("--store", action="store_true", help="measure the bytes a store writes")
    parser.add_argument("--json", action="store_true", help="one JSON object on one line")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Print each contender's median per step and its quartiles; with --store, the bytes."""
    args = parse(argv)
    only = args.only or list(CONTENDERS)
    figures = anyio.run(measure, args.steps, args.repeats, only, backend=args.backend)
    written = anyio.run(stored_bytes, 10, backend=args.backend) if args.store else None
    if args.json:
        print(orjson.dumps({"steps": args.steps, "figures": figures, "store": written}).decode())
        return 0
    base = figures[only[0]][1]
    for name, (first, median, third) in figures.items():
        print(
            f"{args.steps} steps  tool returns {name:<5} {median:6.1f} us/step"
            f"  (quartiles {first:.1f}-{third:.1f})  ({median - base:+.1f})"
        )
    if written is not None:
        print(
            f"a {written['steps']}-step durable run, a {written['image_bytes']:,}-byte image in"
            f" step 1: the store grew {written['store_grew']:,} bytes"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

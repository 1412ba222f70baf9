"""`python -m benchmarks.agui_stream`: what encoding a run's events as AG-UI 1.0 SSE frames
costs per event (target: under 5 us per event).

The run and the measures are `benchmarks.ui_stream`'s (per step, reasoning and text streamed in
small pieces, two tool calls whose arguments stream, their results; the last step holds a call
for approval), so the two protocols' figures compare. Its events are fed to a fresh `AgUiEncoder`
per repeat, each with an SSE id, as the HTTP layer does; medians, in microseconds per event,
overall and for a text delta and a tool result.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import anyio

from benchmarks.ui_stream import of_kind, per_event, recorded
from reactloop._core import TextStreamed, ToolCallFinished
from reactloop._serve import AgUiEncoder, StreamContext, StreamEncoder

CONTEXT = StreamContext(run_id="bench", session_id="thread", client_run_id="bench")


def agui_encoder() -> StreamEncoder:
    """A fresh AG-UI encoder for the benchmark's run."""
    return AgUiEncoder(CONTEXT)


def measure(steps: int, repeats: int) -> dict[str, float]:
    """The figures, by name: microseconds per event of the whole run, a text delta, a result."""
    events = anyio.run(recorded, steps)
    return {
        "whole run": per_event(events, repeats, agui_encoder),
        "a text delta": of_kind(events, TextStreamed, max(1, repeats // 40), agui_encoder),
        "a tool result": of_kind(events, ToolCallFinished, max(1, repeats // 10), agui_encoder),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agui_stream", description=__doc__)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"AG-UI frames of a run of {args.steps} steps + an approval")
    for name, value in measure(args.steps, args.repeats).items():
        print(f"  {name:<16} {value:6.2f} us{'/event' if name == 'whole run' else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

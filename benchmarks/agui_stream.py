"""`python -m benchmarks.agui_stream`: what encoding a run's events as AG-UI 1.0 SSE frames
costs per event (target: under 5 us per event).

The run is `benchmarks.ui_stream`'s (per step, reasoning and text streamed in small pieces, two
tool calls whose arguments stream, their results; the last step holds a call for approval), so
the two protocols' figures compare. Its events are fed to a fresh `AgUiEncoder` per repeat, each
with an SSE id, as the HTTP layer does; medians, in microseconds per event, overall and for a
text delta and a tool result.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import anyio

from benchmarks._measure import median
from benchmarks.ui_stream import recorded
from reactloop._core import Event, TextStreamed, ToolCallFinished
from reactloop._serve import AgUiEncoder, StreamContext

CONTEXT = StreamContext(run_id="bench", session_id="thread", client_run_id="bench")


def encode_all(events: Sequence[Event], ids: Sequence[str]) -> int:
    """Feed every event to a fresh encoder; the bytes written."""
    encoder = AgUiEncoder(CONTEXT)
    written = len(encoder.opening())
    for event, event_id in zip(events, ids, strict=True):
        written += len(encoder.encode(event, event_id))
    return written + len(encoder.closing())


def per_event(events: Sequence[Event], repeats: int) -> float:
    """Median microseconds per event over `repeats` encodings of the whole run."""
    ids = [f"epoch-{n}" for n in range(1, len(events) + 1)]
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        encode_all(events, ids)
        samples.append(time.perf_counter() - started)
    return median(samples) / len(events) * 1e6


def of_kind(events: Sequence[Event], kind: type, rounds: int) -> float:
    """Median microseconds to encode one event of `kind`, in an encoder fed the events before
    it (so it has the state the live stream would)."""
    samples = []
    places = [n for n, event in enumerate(events) if isinstance(event, kind)][:50]
    for _ in range(rounds):
        for place in places:
            encoder = AgUiEncoder(CONTEXT)
            for earlier in events[:place]:
                encoder.encode(earlier, None)
            started = time.perf_counter()
            encoder.encode(events[place], "epoch-1")
            samples.append(time.perf_counter() - started)
    return median(samples) * 1e6


def measure(steps: int, repeats: int) -> dict[str, float]:
    """The figures, by name: microseconds per event of the whole run, a text delta, a result."""
    events = anyio.run(recorded, steps)
    return {
        "whole run": per_event(events, repeats),
        "a text delta": of_kind(events, TextStreamed, max(1, repeats // 40)),
        "a tool result": of_kind(events, ToolCallFinished, max(1, repeats // 10)),
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

"""`python -m benchmarks.ui_stream`: what encoding a run's events as the AI SDK's UI message
stream costs per event (target: under 5 us per event).

A scripted run is recorded once: per step, reasoning and text streamed in small pieces (as a
model's deltas arrive) and two tool calls whose arguments stream too, then the calls' results;
the last step holds a call for approval. Its events are then fed to a fresh `UIStreamEncoder`
per repeat, each with an SSE id, as the HTTP layer does. Figures are medians over the repeats, in
microseconds per event, overall and for the most frequent kinds (a text delta; a tool result).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from benchmarks._measure import median
from reactloop import ReActLoop, tool
from reactloop._core import Event, TextStreamed, ToolCallFinished
from reactloop._serve import StreamContext, StreamEncoder, UIStreamEncoder
from reactloop.stores import MemoryStore
from reactloop.testing import ScriptedModel, call, reply

WORDS = "The forecast for Paris is mild and sunny with a light breeze from the west. " * 4


@tool
def look_up(city: str, day: int) -> str:
    """The weather in a city."""
    return f"{city} on day {day}: 21 C, sunny"


@tool(requires_approval=True)
def book(city: str) -> str:
    """Book a trip (a person approves)."""
    return f"booked {city}"


def script(steps: int) -> list[Any]:
    """`steps` answers of reasoning, text and two calls; then one that asks to book."""
    answers: list[Any] = [
        reply(
            WORDS,
            call("look_up", city="Paris", day=n),
            call("look_up", city="Rome", day=n),
            reasoning=WORDS,
        )
        for n in range(steps)
    ]
    return [*answers, reply("Booking.", call("book", city="Paris"))]


async def recorded(steps: int) -> list[Event]:
    """The events of one scripted run, in order."""
    loop = ReActLoop(ScriptedModel(script(steps)), tools=[look_up, book], store=MemoryStore())
    async with loop.stream("Plan a trip", run_id="bench", session_id="s") as events:
        return [event async for event in events]


Encoders = Callable[[], StreamEncoder]
"""A fresh encoder of the protocol measured (`agui_stream` measures AG-UI's with these)."""


def ui_encoder() -> StreamEncoder:
    """A fresh AI SDK encoder for the benchmark's run."""
    return UIStreamEncoder(StreamContext(run_id="bench"))


def encode_all(events: Sequence[Event], ids: Sequence[str], make: Encoders = ui_encoder) -> int:
    """Feed every event to a fresh encoder; the bytes written."""
    encoder = make()
    written = len(encoder.opening())
    for event, event_id in zip(events, ids, strict=True):
        written += len(encoder.encode(event, event_id))
    return written + len(encoder.closing())


def per_event(events: Sequence[Event], repeats: int, make: Encoders = ui_encoder) -> float:
    """Median microseconds per event over `repeats` encodings of the whole run."""
    ids = [f"epoch-{n}" for n in range(1, len(events) + 1)]
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        encode_all(events, ids, make)
        samples.append(time.perf_counter() - started)
    return median(samples) / len(events) * 1e6


def of_kind(events: Sequence[Event], kind: type, rounds: int, make: Encoders = ui_encoder) -> float:
    """Median microseconds to encode one event of `kind`, each timed once in an encoder fed
    the events before it (an encoder's state is what makes a repeat cheaper: none here)."""
    samples = []
    places = [n for n, event in enumerate(events) if isinstance(event, kind)][:50]
    for _ in range(rounds):
        for place in places:
            encoder = make()
            for earlier in events[:place]:
                encoder.encode(earlier, None)
            started = time.perf_counter()
            encoder.encode(events[place], "epoch-1")
            samples.append(time.perf_counter() - started)
    return median(samples) * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ui_stream", description=__doc__)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args(argv)
    events = anyio.run(recorded, args.steps)
    print(f"a run of {len(events)} events ({args.steps} steps + an approval)")
    print(f"  whole run        {per_event(events, args.repeats):6.2f} us/event")
    print(f"  a text delta     {of_kind(events, TextStreamed, 5):6.2f} us")
    print(f"  a tool result    {of_kind(events, ToolCallFinished, 20):6.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Smoke tests of the serving benchmarks: each runs at a tiny size and reports positive figures
(the figures themselves are read by people, never asserted against a time)."""

from __future__ import annotations

import anyio
import pytest

from benchmarks import serve as serve_benchmark
from benchmarks import ui_stream as ui_stream_benchmark
from reactloop.serve import ChatServer

pytestmark = pytest.mark.anyio


async def test_the_serving_benchmark_streams_the_run_through_both_protocols() -> None:
    figures = await serve_benchmark.measure(steps=1, repeats=2)
    assert set(figures) == {"events", "loop.stream", "ai-sdk", "ag-ui"}
    assert figures["events"] > 10 and all(value > 0 for value in figures.values())


async def test_the_served_run_streams_every_event_of_the_run() -> None:
    """The benchmark's served run is the whole run: the closing frame arrives."""
    server = ChatServer(serve_benchmark.make_loop(1, 1))
    async with server.lifespan():
        written = await serve_benchmark.call_asgi(server.ai_sdk(), serve_benchmark.ai_sdk_body(1))
    assert written > 1000


def test_the_ui_stream_benchmark_reports_a_cost_per_event() -> None:
    events = anyio.run(ui_stream_benchmark.recorded, 1)
    assert len(events) > 10
    assert ui_stream_benchmark.per_event(events, repeats=2) > 0

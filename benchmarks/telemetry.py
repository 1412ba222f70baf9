"""`python -m benchmarks.telemetry`: what OpenTelemetry costs per step.

The same run (`--steps` tool steps, then an answer) is played by a loop without telemetry, by
one with `Telemetry` into an SDK tracer provider whose exporter drops every span (a no-op
exporter: the cost of making spans and measurements, not of shipping them), and by the same with
phase spans. Runs alternate; the figure is the median of the runs' mean time per step
(microseconds). Telemetry off must cost nothing measurable: compare its figure with the same
benchmark on a commit before telemetry existed.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from benchmarks._measure import interleave, median, per_step_main
from reactloop import ReActLoop
from reactloop._telemetry._settings import Telemetry
from reactloop.messages import ToolCall
from reactloop.models import ModelResponse
from reactloop.testing import FakeTool, ScriptedModel, reply

Play = Callable[[], Awaitable[float]]


class DroppingExporter(SpanExporter):
    """Takes every finished span and does nothing with it."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Drop the spans."""
        return SpanExportResult.SUCCESS


def script(steps: int) -> list[ModelResponse]:
    """`steps` responses calling the tool with new arguments, then a text answer."""
    calls = [reply("", ToolCall("echo", f'{{"n": {n}}}', f"c{n}")) for n in range(steps)]
    return [*calls, reply("done")]


def telemetry(phase_spans: bool) -> Telemetry:
    """Telemetry into a dropping exporter and an in-memory metric reader."""
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(DroppingExporter()))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return Telemetry(
        tracer_provider=tracer_provider, meter_provider=meters, phase_spans=phase_spans
    )


def player(steps: int, chosen: Telemetry | None) -> Play:
    """A contender: one run with a fresh model; its mean seconds per step."""

    async def play() -> float:
        loop = ReActLoop(
            ScriptedModel(script(steps)), tools=[FakeTool("echo")], max_iterations=steps + 1,
            telemetry=chosen,
        )  # fmt: skip
        started = time.perf_counter()
        result = await loop.run("go")
        assert result.output == "done", result.error
        return (time.perf_counter() - started) / (steps + 1)

    return play


async def measure(steps: int, repeats: int) -> dict[str, float]:
    """Median microseconds per step of each contender."""
    contenders = {
        "telemetry off": player(steps, None),
        "on, no-op exporter": player(steps, telemetry(phase_spans=False)),
        "on, with phase spans": player(steps, telemetry(phase_spans=True)),
    }
    samples = await interleave(contenders, repeats)
    return {name: median(values) * 1e6 for name, values in samples.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures for each step count."""
    return per_step_main("python -m benchmarks.telemetry", __doc__, measure, argv)


if __name__ == "__main__":
    raise SystemExit(main())

"""`Telemetry`: the loop's opt-in OpenTelemetry settings (`ReActLoop(..., telemetry=...)`).

This module does not import OpenTelemetry: `import reactloop` works without the `otel` extra. A
`Telemetry` is checked when it is made, and the loop turns it into a `Tracing` (`_otel.py`, which
imports the API) once, at construction; a loop without telemetry carries None and does no
tracing work at all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from reactloop._core import Phase
from reactloop._errors import ConfigurationError
from reactloop._validate import boolean, checked_arguments, optional_text

if TYPE_CHECKING:
    from reactloop._telemetry._otel import Tracing

EXTRA_HINT = "install the otel extra: pip install 'reactloop[otel]'"


def _api() -> Any:
    """The OpenTelemetry API's trace and metrics modules, or the error naming the extra."""
    try:
        trace = importlib.import_module("opentelemetry.trace")
        metrics = importlib.import_module("opentelemetry.metrics")
    except ImportError as missing:
        raise ConfigurationError(
            f"telemetry needs the OpenTelemetry API, which is not installed: {EXTRA_HINT}",
            option="telemetry",
            value="Telemetry(...)",
            rule="opentelemetry-api installed (the otel extra)",
        ) from missing
    return trace, metrics


def _provider(option: str, value: object, kind: type, what: str) -> object:
    if value is not None and not isinstance(value, kind):
        raise ConfigurationError.invalid(option, value, f"{what} or None (the global one)")
    return value


@checked_arguments
@frozen
class Telemetry:
    """OpenTelemetry GenAI traces and metrics for a loop's runs.

    `tracer_provider`/`meter_provider`: where spans and measurements go (None: the global
    providers, as set with `trace.set_tracer_provider`). `phase_spans` adds one span per phase
    (off by default). `record_content` records messages, tool arguments and results on spans
    (off by default: they may hold personal data). `agent_name` names the run span
    (`invoke_agent {agent_name}`) and sets `gen_ai.agent.name`.
    """

    tracer_provider: Any = field(default=None, kw_only=True)
    meter_provider: Any = field(default=None, kw_only=True)
    phase_spans: bool = field(default=False, kw_only=True)
    record_content: bool = field(default=False, kw_only=True)
    agent_name: str | None = field(default=None, kw_only=True)

    def __attrs_post_init__(self) -> None:
        trace, metrics = _api()
        _provider(
            "Telemetry.tracer_provider", self.tracer_provider, trace.TracerProvider,
            "an OpenTelemetry TracerProvider",
        )  # fmt: skip
        _provider(
            "Telemetry.meter_provider", self.meter_provider, metrics.MeterProvider,
            "an OpenTelemetry MeterProvider",
        )  # fmt: skip
        boolean("Telemetry.phase_spans", self.phase_spans)
        boolean("Telemetry.record_content", self.record_content)
        optional_text("Telemetry.agent_name", self.agent_name)


class WrappedPhase:
    """A phase inside another (a traced phase); it goes by its inner phase's name."""

    def __init__(self, inner: Phase) -> None:
        self.inner = inner
        self.name = type(inner).__name__

    def __repr__(self) -> str:
        return repr(self.inner)


def phase_name(phase: object) -> str:
    """A phase's name as events and logs show it: its class name, a wrapper's inner one's."""
    return phase.name if isinstance(phase, WrappedPhase) else type(phase).__name__


def telemetry_option(option: str, value: object) -> Telemetry | None:
    """The `telemetry=` option: a `Telemetry` or None (off)."""
    if value is None or isinstance(value, Telemetry):
        return value
    raise ConfigurationError.invalid(option, value, "a Telemetry(...) or None (off)")


def tracing_for(telemetry: Telemetry | None) -> Tracing | None:
    """The loop's tracing, built once at construction; None (no work per run) when off."""
    if telemetry is None:
        return None
    from reactloop._telemetry._otel import Tracing as Traced  # OpenTelemetry: only when asked

    return Traced.of(telemetry)

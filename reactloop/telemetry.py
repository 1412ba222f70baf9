"""Seeing runs: OpenTelemetry GenAI traces and metrics (`Telemetry`, the `otel` extra) and the
log filter that adds a run's id, step and phase to log records (`RunContextFilter`)."""

from reactloop._core import publish
from reactloop._telemetry import RunContextFilter, Telemetry

__all__ = ["RunContextFilter", "Telemetry"]

publish(__name__, globals())

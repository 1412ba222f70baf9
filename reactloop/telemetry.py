"""Seeing runs: OpenTelemetry GenAI traces and metrics (`Telemetry`, the `otel` extra) and the
log filter that adds a run's id, step and phase to log records (`RunContextFilter`)."""

from reactloop._logs import RunContextFilter
from reactloop._telemetry import Telemetry

__all__ = ["RunContextFilter", "Telemetry"]

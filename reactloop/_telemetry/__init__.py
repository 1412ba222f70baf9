"""OpenTelemetry spans and metrics (imported only when telemetry is on) and the run ids on
log records. Published by `reactloop.telemetry`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._telemetry._logs import RUN_MARKS, MarkedRun, RunContextFilter
from reactloop._telemetry._settings import Telemetry, phase_name, telemetry_option, tracing_for

__all__ = [
    "RUN_MARKS",
    "MarkedRun",
    "RunContextFilter",
    "Telemetry",
    "phase_name",
    "telemetry_option",
    "tracing_for",
]

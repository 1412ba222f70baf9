"""Running a `ReActLoop` on Temporal: the workflow that drives the real loop with model, tool and
toolset calls as activities, the worker helper, and the client-side run handle. Published by
`reactloop.temporal` (the `temporal` extra); ADR-0033 says what runs where.

What other packages may use is imported here; the rest is private to the package. Only the
errors are: they import no Temporal SDK, so `reactloop.errors` lists them without the extra."""

from reactloop._temporal._errors import (
    HistoryLimitError,
    PayloadTooLargeError,
    RemoteError,
    RunFailedError,
    RunNotPausedError,
    TemporalNotInstalledError,
    TemporalRunError,
    UnknownLoopError,
)

__all__ = [
    "HistoryLimitError",
    "PayloadTooLargeError",
    "RemoteError",
    "RunFailedError",
    "RunNotPausedError",
    "TemporalNotInstalledError",
    "TemporalRunError",
    "UnknownLoopError",
]

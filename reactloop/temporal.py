"""Running a loop on Temporal: model and tool calls as activities, the loop itself as workflow
code, approvals that wait in the workflow (needs the `temporal` extra:
`pip install 'reactloop[temporal]'`).

`support = TemporalLoop(loop, name="support", deps_factory=make_deps)` wraps a loop under a
stable name; `async with temporal_worker(client, task_queue="agents", loops=[support])` serves
it in this process (any number of processes may); `run = await support.start(client, text,
task_queue="agents")` starts a run whose handle gives `events()`, `decide()`, `result()` (the
same `RunResult` as `loop.run()`), `interrupt()`, `pending()` and `status()`.
`ActivityOptions`, `ModelActivity` and `ToolActivity` set the activities' timeouts, heartbeats
and retries; `HistoryLimits` when a run's or a session's workflow continues as new. Temporal's
SDK loads only when one of the first three is used.
"""

from __future__ import annotations

import importlib
from importlib.util import find_spec
from typing import TYPE_CHECKING

from reactloop._core import publish
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
from reactloop._temporal._limits import HistoryLimits
from reactloop._temporal._options import ActivityOptions, ModelActivity, ToolActivity

if TYPE_CHECKING:
    from reactloop._temporal._channel import EventChannel, WorkflowEvents
    from reactloop._temporal._client import TemporalLoop, TemporalRun
    from reactloop._temporal._worker import temporal_replayer, temporal_worker

LAZY = {
    "EventChannel": "reactloop._temporal._channel",
    "WorkflowEvents": "reactloop._temporal._channel",
    "TemporalLoop": "reactloop._temporal._client",
    "TemporalRun": "reactloop._temporal._client",
    "temporal_replayer": "reactloop._temporal._worker",
    "temporal_worker": "reactloop._temporal._worker",
}
"""The names that need Temporal's SDK: their modules load on first use."""


def __getattr__(name: str) -> object:
    """Load a name that needs Temporal's SDK, or say how to install it."""
    module = LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if find_spec("temporalio") is None:
        raise TemporalNotInstalledError("temporalio")
    found = getattr(importlib.import_module(module), name)
    found.__module__ = __name__
    globals()[name] = found
    return found


__all__ = [
    "ActivityOptions",
    "EventChannel",
    "HistoryLimitError",
    "HistoryLimits",
    "ModelActivity",
    "PayloadTooLargeError",
    "RemoteError",
    "RunFailedError",
    "RunNotPausedError",
    "TemporalLoop",
    "TemporalNotInstalledError",
    "TemporalRun",
    "TemporalRunError",
    "ToolActivity",
    "UnknownLoopError",
    "WorkflowEvents",
    "temporal_replayer",
    "temporal_worker",
]

publish(
    __name__,
    {name: value for name, value in globals().items() if name not in LAZY}
    | {"__all__": [name for name in __all__ if name not in LAZY]},
)

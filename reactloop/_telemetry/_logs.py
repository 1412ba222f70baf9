"""Run ids, steps and phases on log records: a context variable set once per run, and the
`RunContextFilter` that copies them onto records (`%(run_id)s %(step)s %(phase)s` in a format).

The variable holds one small mutable `RunMarks` per run: the step is read from the run's state
when a record is made, and the loop writes the current phase into it (an attribute store per
phase, no context-variable write), so marking costs next to nothing when nobody logs. A task or a
worker thread started inside a run copies the context, and so logs under that run; a run started
inside another (a sub-agent in a tool) sets its own marks for its duration.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import TYPE_CHECKING

from reactloop._telemetry._settings import phase_name

if TYPE_CHECKING:
    from reactloop._core import RunState
    from reactloop._loop import Run

NONE = "-"  # the fields' value outside a run (a format must never fail on a missing field)
FIELDS = ("run_id", "step", "phase")


class RunMarks:
    """Where a run is: its state (for the id and the step) and the phase running."""

    __slots__ = ("phase", "state")

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.phase: object = None


RUN_MARKS: ContextVar[RunMarks | None] = ContextVar("reactloop_run_marks", default=None)


class MarkedRun:
    """`with MarkedRun(run):` log records made in this context carry `run`'s marks. A class
    rather than a generator-based context manager: it is entered once per run, for a third of
    the cost."""

    __slots__ = ("_run", "_token")

    def __init__(self, run: Run) -> None:
        self._run = run

    def __enter__(self) -> None:
        self._token = RUN_MARKS.set(RunMarks(self._run.state))

    def __exit__(self, *exc_info: object) -> None:
        RUN_MARKS.reset(self._token)


def current_fields() -> tuple[str, str, str]:
    """The run id, step and phase of the current context (`-` for each one unknown)."""
    marks = RUN_MARKS.get()
    if marks is None:
        return NONE, NONE, NONE
    draft = marks.state.current
    step = NONE if draft is None else str(draft.index)
    phase = NONE if marks.phase is None else phase_name(marks.phase)
    return marks.state.run_id, step, phase


class RunContextFilter(logging.Filter):
    """Adds `run_id`, `step` and `phase` to every record it sees (`-` outside a run).

    Attach it to a handler (`handler.addFilter(RunContextFilter())`) to use the fields in its
    format; it never drops a record. Fields a record already carries (set where it was made, e.g.
    before a queue handed it to another thread) are kept.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Set the fields; always True."""
        if not hasattr(record, "run_id"):
            record.run_id, record.step, record.phase = current_fields()
        return True

"""Watching one run in the terminal: its events through a view, and Ctrl-C. The first Ctrl-C asks
the run to stop (the stream's interrupt: a model answer is cut short, a tool running finishes
first); a second one cancels it."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from anyio import CancelScope
from anyio.abc import TaskStatus

from reactloop._cli._lines import Kind, Line, Narrator
from reactloop._cli._views import View
from reactloop._core import Event, RunResult, unwrap_single_error
from reactloop._loop import RunStream

OpenStream = Callable[[], AbstractAsyncContextManager[RunStream[Any]]]

INTERRUPTING = "interrupt: the run stops now; a tool running finishes first (Ctrl-C again cancels)"
CANCELLED = "cancelled: the run was cancelled at once (a second Ctrl-C)"


async def watch_run(
    open_stream: OpenStream, view: View, observe: Callable[[Event], None] | None = None
) -> RunResult[Any] | None:
    """Show a run's events in `view` (each seen by `observe` too) until it ends; its result, or
    None when it was cancelled."""
    narrator = Narrator(time.monotonic, started=time.monotonic())
    result: RunResult[Any] | None = None
    with view, unwrap_single_error():
        async with anyio.create_task_group() as tasks:
            async with open_stream() as events:
                await tasks.start(_on_ctrl_c, events, view, narrator, tasks.cancel_scope)
                async for event in events:
                    if observe is not None:
                        observe(event)
                    view.show(narrator.watch(event))
                    view.status(narrator.status)
                result = await events.result()
            tasks.cancel_scope.cancel()
    if result is None:
        view.show([Line(Kind.ERROR, CANCELLED)])
    return result


async def _on_ctrl_c(
    events: RunStream[Any],
    view: View,
    narrator: Narrator,
    scope: CancelScope,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """First SIGINT: interrupt the run; the second: cancel it (and the view's block)."""
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        task_status.started()
        pressed = False
        async for _ in signals:
            if pressed:
                scope.cancel()
                return
            pressed = True
            events.interrupt()
            view.show([Line(Kind.NOTE, INTERRUPTING)])
            narrator.note = "interrupting (Ctrl-C again cancels) · "
            view.status(narrator.status)

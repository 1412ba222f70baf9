"""`temporal_worker`: a Temporal worker for some loops, in this process: it registers the run and
session workflows and each loop's activities, and serves a task queue for the block's life."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from temporalio.client import Client
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner, Worker

from reactloop._errors import ConfigurationError
from reactloop._temporal._activities import loop_activities
from reactloop._temporal._client import TemporalLoop
from reactloop._temporal._mirror import mirror_activities
from reactloop._temporal._session import SessionWorkflow
from reactloop._temporal._toolsets import held_open
from reactloop._temporal._workflow import LOOPS, RunWorkflow


def _checked(loops: Sequence[TemporalLoop]) -> list[TemporalLoop]:
    """The loops, each a `TemporalLoop`, their names distinct."""
    given = list(loops)
    names = [loop.name for loop in given if isinstance(loop, TemporalLoop)]
    if len(names) != len(given) or not given:
        rule = "a non-empty list of TemporalLoop(loop, name=...)"
        raise ConfigurationError.invalid("loops", loops, rule)
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ConfigurationError.invalid("loops", twice, "loops with distinct names")
    return given


def worker_for(
    client: Client, *, task_queue: str, loops: Sequence[TemporalLoop], **options: Any
) -> Worker:
    """A worker (not yet running) for `loops`; `options` go to Temporal's `Worker` as they are
    (`workflow_runner` defaults to the unsandboxed runner: reactloop makes the loop
    deterministic itself, and the sandbox refuses common libraries)."""
    served = _checked(loops)
    activities: list[Any] = []
    for loop in served:
        LOOPS[loop.name] = loop
        activities += loop_activities(loop.loop, loop.name, loop.deps_factory, loop.activities)
        if loop.mirror is not None:
            activities += mirror_activities(loop.name, loop.mirror)
    options.setdefault("workflow_runner", UnsandboxedWorkflowRunner())
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[RunWorkflow, SessionWorkflow],
        activities=activities,
        **options,
    )


def temporal_replayer(loops: Sequence[TemporalLoop], **options: Any) -> Replayer:
    """Temporal's `Replayer` for runs of `loops`: replay a run's history with it
    (`await replayer.replay_workflow(await handle.fetch_history())`) to check that a change to
    the loop's code keeps old runs deterministic before it ships. `options` go to `Replayer`."""
    for loop in _checked(loops):
        LOOPS[loop.name] = loop
    options.setdefault("workflow_runner", UnsandboxedWorkflowRunner())
    return Replayer(workflows=[RunWorkflow, SessionWorkflow], **options)


@asynccontextmanager
async def temporal_worker(
    client: Client, *, task_queue: str, loops: Sequence[TemporalLoop], **options: Any
) -> AsyncIterator[Worker]:
    """Serve `loops`' workflows and activities on `task_queue` for the block's life (any number
    of processes may serve the same queue); leaving the block shuts the worker down. The loops'
    toolsets (MCP servers) are opened for the block, as `async with loop:` opens them: every
    listing and call of this worker shares one connection per server."""
    worker = worker_for(client, task_queue=task_queue, loops=loops, **options)
    async with held_open([loop.loop for loop in _checked(loops)]), worker:
        yield worker

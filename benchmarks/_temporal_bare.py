"""Temporal alone, for `python -m benchmarks.temporal`: a workflow making a number of trivial
activities one after another, as a run's model and tool calls are made, with no loop around
them. What a step costs here is Temporal's own floor on the machine (its SDK loads with this
module, which only the benchmark imports)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

NAME = "BenchBare"


@activity.defn(name="bench.bare")
async def bare_activity(data: bytes) -> bytes:
    """Returns what it is given."""
    return data


@workflow.defn(name=NAME)
class BareWorkflow:
    """`calls` activities in sequence; returns how many it made."""

    @workflow.run
    async def run(self, calls: int) -> int:
        """Make the calls."""
        for _ in range(calls):
            await workflow.execute_activity(
                bare_activity, b"", start_to_close_timeout=timedelta(seconds=30)
            )
        return calls


def bare_worker(client: Client, task_queue: str) -> Worker:
    """A worker serving the bare workflow and its activity (unsandboxed, as reactloop's are)."""
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[BareWorkflow],
        activities=[bare_activity],
        workflow_runner=UnsandboxedWorkflowRunner(),
    )

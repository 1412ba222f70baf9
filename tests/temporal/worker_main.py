"""One worker process of the Temporal tests: `python -m tests.temporal.worker_main --address
HOST:PORT --task-queue Q --vendor URL --counts FILE` serves the test loop
(tests/temporal/agents.py) on the task queue, prints `ready` once it polls, and runs until
SIGTERM (a clean stop) or SIGKILL (a lost worker).

After a clean stop the process leaves without the interpreter's teardown (`os._exit(0)`): the
Temporal SDK's core threads outlive the worker and can abort a finalizing interpreter
(temporalio/sdk-python#300, "PyGILState_Release: thread state ... must be current"), which
would turn a clean stop into exit code -6 at random."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from datetime import timedelta
from pathlib import Path

import anyio
from temporalio.client import Client

from reactloop.temporal import temporal_worker
from tests.temporal.agents import temporal_loop

STICKY = timedelta(seconds=1)
"""How long a workflow task waits for this worker's sticky queue before any worker may take it:
short, so a killed worker's runs move on at once (the SDK's default is 10 s)."""


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tests.temporal.worker_main")
    parser.add_argument("--address", required=True)
    parser.add_argument("--task-queue", required=True)
    parser.add_argument("--vendor", required=True)
    parser.add_argument("--counts", required=True, type=Path)
    return parser.parse_args(argv)


async def serve(options: argparse.Namespace) -> None:
    """Serve until SIGTERM or SIGINT, then stop the worker cleanly."""
    client = await Client.connect(options.address)
    support = temporal_loop(options.vendor, options.counts)
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with temporal_worker(
            client,
            task_queue=options.task_queue,
            loops=[support],
            sticky_queue_schedule_to_start_timeout=STICKY,
        ):
            print("ready", flush=True)
            async for _ in signals:
                break


def main() -> None:
    """Serve, then exit 0 at once once the worker stopped cleanly (an error still raises)."""
    anyio.run(serve, arguments(sys.argv[1:]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()

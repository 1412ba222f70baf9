"""Fixtures of the Temporal tests: the dev server (one per package, in memory), the
time-skipping server (one per test), and a task queue per test, so tests sharing a server never
take each other's tasks.

These tests run on asyncio only: Temporal's Python SDK (its client, workers and the workflow
event loop) requires asyncio. The loop's trio coverage is its own suites and the Temporal trio
tool test (a tool written for trio running inside its activity).
"""

from __future__ import annotations

import functools
import inspect
import uuid
from collections.abc import AsyncIterator, Callable, Generator
from typing import Any

import anyio
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tests.temporal.servers import dev_server, time_skipping_server

HANG_SECONDS = 240.0
"""Each test's hang guard: far over the slowest test (the 200-run scale test, ~35 s on two
cores), so a test that hangs fails with this message instead of eating CI's time."""


def _guarded(test: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The async test `test`, failed when it runs past `HANG_SECONDS`."""

    @functools.wraps(test)
    async def guarded(**kwargs: Any) -> None:
        with anyio.move_on_after(HANG_SECONDS) as scope:
            await test(**kwargs)
        if scope.cancelled_caught:
            pytest.fail(f"{name} hung: it ran past its {HANG_SECONDS:.0f} s hang guard")

    return guarded


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Run every async Temporal test under the hang guard (anyio's plugin runs it next)."""
    original = pyfuncitem.obj
    if inspect.iscoroutinefunction(original):
        pyfuncitem.obj = _guarded(original, pyfuncitem.nodeid)
    try:
        return (yield)
    finally:
        pyfuncitem.obj = original


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

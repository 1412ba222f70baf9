"""Shared test setup: every async test runs on asyncio and on trio (anyio's own pytest plugin)."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each `pytest.mark.anyio` test on both backends."""
    return str(request.param)

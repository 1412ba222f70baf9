"""Shared test setup: every async test runs on asyncio and on trio (anyio's own pytest plugin);
`any_store` gives each run store."""

from __future__ import annotations

from pathlib import Path

import pytest

from reactloop._stores import MemoryStore, SqliteStore


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each `pytest.mark.anyio` test on both backends."""
    return str(request.param)


@pytest.fixture(params=["memory", "sqlite"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore | SqliteStore:
    """Each store implementation: in memory, and a real SQLite file in `tmp_path`."""
    if request.param == "memory":
        return MemoryStore()
    return SqliteStore(tmp_path / "runs.db")

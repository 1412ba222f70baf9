"""Shared test setup: every async test runs on asyncio and on trio (anyio's own pytest plugin);
`any_store` gives each run store.

`REACTLOOP_HYPOTHESIS_PROFILE=mutation` (set by `make mutate` for the tests it runs) runs property
tests with few, derandomized examples, so each mutant is judged quickly and the same way every
time (tests/strategies.py `examples()` caps the tests that ask for more).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from reactloop._stores import MemoryStore, SqliteStore

settings.register_profile("mutation", max_examples=10, derandomize=True, database=None)
settings.load_profile(os.environ.get("REACTLOOP_HYPOTHESIS_PROFILE", "default"))


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

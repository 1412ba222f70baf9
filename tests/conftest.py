"""Shared test setup: every async test runs on asyncio and on trio (anyio's own pytest plugin).

`REACTLOOP_HYPOTHESIS_PROFILE=mutation` (set by `make mutate` for the tests it runs) runs property
tests with few, derandomized examples, so each mutant is judged quickly and the same way every
time (tests/strategies.py `examples()` caps the tests that ask for more).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each `pytest.mark.anyio` test on both backends."""
    return str(request.param)


settings.register_profile("mutation", max_examples=10, derandomize=True, database=None)
settings.load_profile(os.environ.get("REACTLOOP_HYPOTHESIS_PROFILE", "default"))

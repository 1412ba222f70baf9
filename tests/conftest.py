"""Shared test setup: every async test runs on asyncio and on trio (anyio's own pytest plugin);
`any_store` gives each run store, PostgreSQL on a throwaway server the suite starts itself.

`REACTLOOP_HYPOTHESIS_PROFILE=mutation` (set by `make mutate` for the tests it runs) runs property
tests with few, derandomized examples, so each mutant is judged quickly and the same way every
time (tests/helpers/strategies.py `examples()` caps the tests that ask for more).
"""

from __future__ import annotations

import faulthandler
import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import settings

from reactloop._durable._stores import MemoryStore, PostgresStore, SqliteStore
from tests.helpers.postgres_server import binaries, fresh_schema, throwaway_cluster, unavailable

Store = MemoryStore | SqliteStore | PostgresStore

PROFILE = os.environ.get("REACTLOOP_HYPOTHESIS_PROFILE", "default")
settings.register_profile("mutation", max_examples=10, derandomize=True, database=None)
settings.load_profile(PROFILE)
MUTANT_HANG_SECONDS = 15.0
"""A test a mutant left hanging is stopped after this, plus 5x the test's usual duration."""


@functools.cache
def usual_durations(pid: int) -> dict[str, float]:
    """Each test's duration as mutmut measured it (`mutmut-stats.json` in the directory mutmut
    runs the tests from), read once per process (`pid`: mutmut forks one per mutant)."""
    stats = Path("mutmut-stats.json")
    return orjson.loads(stats.read_bytes())["duration_by_test"] if stats.exists() else {}


@pytest.fixture(autouse=True)
def mutation_watchdog(request: pytest.FixtureRequest) -> Iterator[None]:
    """Under `make mutate`, a test a mutant left hanging (asleep, so no CPU-time limit fires)
    ends its process soon after its usual duration: the mutant counts as detected."""
    if PROFILE != "mutation" or "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        yield  # measuring, or the unmutated tests: no limit
        return
    usual = usual_durations(os.getpid()).get(request.node.nodeid, 0.0)
    faulthandler.dump_traceback_later(MUTANT_HANG_SECONDS + 5 * usual, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each `pytest.mark.anyio` test on both backends."""
    return str(request.param)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL cluster started for this test session (and removed after it)."""
    bin_dir = binaries()
    if bin_dir is None:
        unavailable()
    with throwaway_cluster(bin_dir) as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A URL into a new, empty schema of the session's server: each test starts from nothing."""
    return fresh_schema(postgres_server)


@pytest.fixture
def postgres_store(postgres_url: str) -> Iterator[PostgresStore]:
    """A `PostgresStore` on a fresh schema; its connection is closed after the test."""
    store = PostgresStore(postgres_url)
    yield store
    close(store)


def close(store: PostgresStore) -> None:
    """Close a store's connections from synchronous teardown code."""
    store._connections.close_all()


@pytest.fixture
def worker(postgres_url: str) -> Iterator[Callable[..., PostgresStore]]:
    """Make workers (stores with their own connections, `worker("w2")`) on one fresh schema;
    closed after the test."""
    made: list[PostgresStore] = []

    def make(name: str = "w1", **options: Any) -> PostgresStore:
        made.append(PostgresStore(postgres_url, worker_id=name, **options))
        return made[-1]

    yield make
    for store in made:
        close(store)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """Each store implementation: in memory, a real SQLite file in `tmp_path`, and PostgreSQL."""
    if request.param == "memory":
        return MemoryStore()
    if request.param == "postgres":
        store: PostgresStore = request.getfixturevalue("postgres_store")
        return store
    return SqliteStore(tmp_path / "runs.db")


@pytest.fixture(params=["sqlite", "postgres"])
def shared_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store several processes share: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "postgres":
        postgres: str = request.getfixturevalue("postgres_url")
        return postgres
    return f"sqlite:///{tmp_path / 'runs.db'}"

"""`store_from_url`: the store a URL names; an unknown scheme suggests the closest known one."""

from __future__ import annotations

import pytest

from reactloop._durable._stores import MemoryStore, SqliteStore, store_from_url
from reactloop._errors import ConfigurationError


def test_a_sqlite_url_with_three_slashes_is_a_relative_path() -> None:
    store = store_from_url("sqlite:///runs.db")
    assert isinstance(store, SqliteStore) and store.path == "runs.db"


def test_a_sqlite_url_with_four_slashes_is_an_absolute_path() -> None:
    store = store_from_url("sqlite:////var/lib/app/runs.db")
    assert isinstance(store, SqliteStore) and store.path == "/var/lib/app/runs.db"


def test_a_memory_url_is_a_memory_store() -> None:
    assert isinstance(store_from_url("memory://"), MemoryStore)


def test_a_misspelled_scheme_suggests_the_right_one() -> None:
    with pytest.raises(ConfigurationError, match="did you mean 'sqlite'"):
        store_from_url("sqlit:///runs.db")

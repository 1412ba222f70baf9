"""Run stores: where durable runs keep their journal. `store_from_url` picks one by URL scheme."""

from __future__ import annotations

from reactloop._durable._memory import MemoryStore
from reactloop._durable._postgres import PostgresStore
from reactloop._durable._sqlite import SqliteStore
from reactloop._errors import ConfigurationError
from reactloop._redact import redacted
from reactloop._validate import checked_arguments, did_you_mean

SCHEMES = ("sqlite", "postgresql", "postgres", "memory")
Store = SqliteStore | MemoryStore | PostgresStore


@checked_arguments
def store_from_url(url: str) -> Store:
    """The store a URL names: `sqlite:///relative.db`, `sqlite:////absolute/path.db`, `memory://`,
    `postgresql://user:password@host:5432/db` (needs `pip install 'reactloop[postgres]'`).

    An unknown scheme is a `ConfigurationError` that suggests the closest known one.
    """
    return from_url("url", url)


def from_url(option: str, url: object) -> Store:
    """`store_from_url` for the option named `option` (the loop's `store`)."""
    if not isinstance(url, str) or "://" not in url:
        rule = "a store URL such as 'sqlite:///runs.db' or 'memory://'"
        raise ConfigurationError.invalid(
            option, redacted(url) if isinstance(url, str) else url, rule
        )
    scheme, _, rest = url.partition("://")
    if scheme == "memory":
        return MemoryStore()
    if scheme in ("postgresql", "postgres"):
        return PostgresStore(url)
    if scheme == "sqlite":
        path = rest[1:] if rest.startswith("/") else rest
        if not path:
            rule = "a sqlite URL with a file path, e.g. 'sqlite:///runs.db'"
            raise ConfigurationError.invalid(option, url, rule)
        return SqliteStore(path)
    hint = did_you_mean(scheme, SCHEMES) or f" (known schemes: {', '.join(SCHEMES)})"
    shown = redacted(url)
    raise ConfigurationError(
        f"{option} {shown!r} has an unknown scheme {scheme!r}{hint}",
        option=option,
        value=shown,
        rule=f"a URL whose scheme is one of {', '.join(SCHEMES)}",
    )


__all__ = ["MemoryStore", "PostgresStore", "SqliteStore", "store_from_url"]

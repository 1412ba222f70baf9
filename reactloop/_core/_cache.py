"""Prompt caching: the setting on `ModelSettings.cache` and the breakpoint a user places.

A loop re-sends a growing prefix on every step; a vendor that caches that prefix bills the part
it read from its cache at a fraction of the input price. `CacheSettings` asks for it (each
provider says it its own way, docs/caching.md); `CachePoint` marks where a user wants a cached
prefix to end.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from attrs import evolve, frozen

from reactloop._validate import boolean, checked_arguments, fail, optional_text

CacheTtl: TypeAlias = Literal["5m", "1h"]
"""How long a cached prefix lives: five minutes (the vendors' default) or one hour."""

CACHE_TTLS: tuple[CacheTtl, ...] = ("5m", "1h")


@checked_arguments
@frozen
class CacheSettings:
    """Prompt caching for a model's requests; `ModelSettings.cache = None` leaves each provider
    at its default (nothing is sent for caching).

    - `enabled`: False sends no cache fields at all and drops the user's `CachePoint`s.
    - `ttl`: the lifetime asked for, "5m" or "1h" (Anthropic's `cache_control.ttl`; on OpenAI,
      "1h" asks for extended retention where the model's profile takes it).
    - `key`: OpenAI's `prompt_cache_key`, which routes requests sharing a prefix to the same
      cache; None derives one from the loop's instructions and tools (or its session).
    """

    enabled: bool = True
    ttl: CacheTtl = "5m"
    key: str | None = None

    def __attrs_post_init__(self) -> None:
        boolean("CacheSettings.enabled", self.enabled)
        if self.ttl not in CACHE_TTLS:
            fail("CacheSettings.ttl", self.ttl, "'5m' or '1h'")
        optional_text("CacheSettings.key", self.key)


def session_keyed(cache: CacheSettings, session_id: str | None) -> CacheSettings:
    """The settings a run sends: a run of a session without its own key caches under the
    session's id (its runs share their history's prefix), others as they are."""
    if session_id is None or cache.key is not None or not cache.enabled:
        return cache
    return evolve(cache, key=session_id)


@frozen
class CachePoint:
    """A cache breakpoint among a user message's or a tool result's parts: the prefix up to the
    part before it is worth caching. Anthropic puts `cache_control` on that part's block; OpenAI
    puts `prompt_cache_breakpoint` on it where the model's profile takes explicit breakpoints
    (else it is left out); it carries no content, so text and token counts ignore it."""

"""OpenAI prompt caching: `prompt_cache_key` and extended retention, for Chat Completions and
Responses alike.

OpenAI caches a prompt's prefix by itself; the key routes requests sharing a prefix to the same
cache (the default key is derived from the instructions and the tools, which every step of one
loop shares). `CacheSettings.ttl = "1h"` asks for `prompt_cache_retention: "24h"` where the
model's profile says it takes extended retention (`ModelProfile.cache_retention`); "5m" leaves
OpenAI's in-memory default. A `CachePoint` becomes `prompt_cache_breakpoint` on the part before
it where the profile takes explicit breakpoints (`ModelProfile.cache_breakpoints`, GPT-5.6 and
later), else it is left out. `prompt_cache_options` is not sent: its implicit mode (one breakpoint
OpenAI places, plus the latest three explicit ones) is what a loop wants, and its `ttl` has one
value, the default.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

import orjson

from reactloop._core import CachePoint, CacheSettings, ContentPart, JsonObject, ModelRequest
from reactloop._providers._profiles import ModelProfile

KEY_PREFIX = "reactloop-"
EXTENDED_RETENTION = "24h"
BREAKPOINT = "prompt_cache_breakpoint"


def takes_breakpoints(profile: ModelProfile, cache: CacheSettings | None) -> bool:
    """Whether a request's cache points go as breakpoints: the model takes them and caching
    was not turned off."""
    return profile.cache_breakpoints and (cache is None or cache.enabled)


def marked(parts: Iterable[ContentPart], breakpoints: bool) -> bool:
    """True when the parts hold a cache point that goes as a breakpoint."""
    return breakpoints and any(isinstance(part, CachePoint) for part in parts)


def encoded_parts(
    parts: Iterable[ContentPart],
    encode: Callable[[ContentPart], JsonObject],
    skip: Callable[[ContentPart], bool],
    breakpoints: bool,
) -> list[JsonObject]:
    """The parts encoded in order (those `skip` names left out), each cache point a breakpoint
    on the part before it when `breakpoints`, else nothing."""
    out: list[JsonObject] = []
    for part in parts:
        if isinstance(part, CachePoint):
            if breakpoints and out:
                out[-1][BREAKPOINT] = {"mode": "explicit"}
        elif not skip(part):
            out.append(encode(part))
    return out


def derived_key(request: ModelRequest) -> str:
    """A key shared by every request with these instructions and tools: a digest of them."""
    digest = hashlib.sha256((request.instructions or "").encode())
    for spec in request.tools:
        shape = [spec.name, spec.description, spec.parameters]
        digest.update(orjson.dumps(shape, option=orjson.OPT_SORT_KEYS))
    return KEY_PREFIX + digest.hexdigest()[:32]


def openai_cache(request: ModelRequest, profile: ModelProfile) -> JsonObject:
    """The cache fields of a request whose settings turn caching on (else none)."""
    cache = request.settings.cache
    if cache is None or not cache.enabled:
        return {}
    body: JsonObject = {"prompt_cache_key": cache.key or derived_key(request)}
    if cache.ttl == "1h" and profile.cache_retention:
        body["prompt_cache_retention"] = EXTENDED_RETENTION
    return body

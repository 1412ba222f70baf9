"""OpenAI prompt caching: `prompt_cache_key` and extended retention, for Chat Completions and
Responses alike.

OpenAI caches a prompt's prefix by itself; the key routes requests sharing a prefix to the same
cache (the default key is derived from the instructions and the tools, which every step of one
loop shares). `CacheSettings.ttl = "1h"` asks for `prompt_cache_retention: "24h"` where the
model's profile says it takes extended retention (`ModelProfile.cache_retention`); "5m" leaves
OpenAI's in-memory default. A `CachePoint` is left out: these encoders send no breakpoint.
"""

from __future__ import annotations

import hashlib

import orjson

from reactloop._core import JsonObject, ModelRequest
from reactloop._providers._profiles import ModelProfile

KEY_PREFIX = "reactloop-"
EXTENDED_RETENTION = "24h"


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

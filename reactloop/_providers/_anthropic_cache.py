"""Anthropic prompt caching: `cache_control` breakpoints on a Messages body.

With `CacheSettings` on, breakpoints go on the last tool, the system prompt (then sent as one
text block) and the newest turn's last block, so each step reads the previous step's prefix from
the cache and the tools and system prompt stay cached when older turns are trimmed. A user's
`CachePoint`s (already on their blocks) take the same lifetime. Anthropic refuses a request with
more than four breakpoints: the newest four are kept. `enabled=False` removes every breakpoint;
no setting leaves the request as it was built (a user's `CachePoint`s kept, at most four).
"""

from __future__ import annotations

from collections.abc import Iterator

from reactloop._core import CacheSettings, JsonObject

MAX_BREAKPOINTS = 4
"""The most `cache_control` breakpoints Anthropic takes in one request."""
CACHE_CONTROL = "cache_control"
UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})
"""Blocks Anthropic refuses a breakpoint on."""


def _blocks(body: JsonObject) -> Iterator[JsonObject]:
    """Every block that may hold a breakpoint, in prompt order (tools, system, messages; a
    tool result's own blocks before the result)."""
    yield from body.get("tools", ())
    system = body.get("system")
    if isinstance(system, list):
        yield from system
    for turn in body.get("messages", ()):
        for block in turn["content"]:
            nested = block.get("content")
            if block.get("type") == "tool_result" and isinstance(nested, list):
                yield from nested
            yield block


def _mark_prefix(body: JsonObject, control: JsonObject) -> None:
    """Breakpoints on the last tool, the system prompt and the newest turn's last block."""
    tools = body.get("tools")
    if tools:
        tools[-1][CACHE_CONTROL] = control
    system = body.get("system")
    if isinstance(system, str):
        body["system"] = [{"type": "text", "text": system, CACHE_CONTROL: control}]
    turns = body.get("messages")
    if turns and turns[-1]["content"]:
        last = turns[-1]["content"][-1]
        if last.get("type") not in UNCACHEABLE:
            last[CACHE_CONTROL] = control


def apply_cache(body: JsonObject, cache: CacheSettings | None) -> None:
    """Place, retime or remove the body's breakpoints as `cache` says (module docstring)."""
    if cache is not None and cache.enabled:
        control = {"type": "ephemeral", "ttl": cache.ttl}
        _mark_prefix(body, control)
        marked = [block for block in _blocks(body) if CACHE_CONTROL in block]
        for block in marked:
            block[CACHE_CONTROL] = control
    else:
        marked = [block for block in _blocks(body) if CACHE_CONTROL in block]
        if cache is not None:  # caching off: no breakpoint at all
            for block in marked:
                del block[CACHE_CONTROL]
            return
    for block in marked[:-MAX_BREAKPOINTS]:
        del block[CACHE_CONTROL]


def breakpoints(body: JsonObject) -> int:
    """How many breakpoints a Messages body holds."""
    return sum(CACHE_CONTROL in block for block in _blocks(body))

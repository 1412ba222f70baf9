"""The loopback wire server the provider tests use: it lives in `reactloop._kit` (the provider
conformance kit serves its checks with it); these are the names the tests have always used."""

from __future__ import annotations

from reactloop._kit import (
    WireEnding,
    WireReply,
    WireRequest,
    WireServer,
    events_of,
    json_reply,
    split_at,
    sse_reply,
)

Ending = WireEnding
Reply = WireReply
Request = WireRequest

__all__ = [
    "Ending",
    "Reply",
    "Request",
    "WireServer",
    "events_of",
    "json_reply",
    "split_at",
    "sse_reply",
]

"""The provider kit: the loopback HTTP server (anyio, on asyncio and trio) that serves scripted
wire replies, the `ProviderHarness` contract a provider's author fills in, and the conformance
checks (streaming, parallel tool calls, tool results, reasoning, images, usage, typed errors,
cancellation, stalls) that `reactloop.testing` publishes for any provider, built-in or not."""

from reactloop._kit._answers import ANSWER_CHECKS
from reactloop._kit._check import (
    HANG_GUARD,
    CheckSkipped,
    ConformanceCheck,
    ConformanceError,
    ConformanceFailure,
)
from reactloop._kit._failures import FAILURE_CHECKS, RETRY_AFTER, STALL_IDLE_TIMEOUT
from reactloop._kit._harness import (
    ErrorKind,
    Features,
    ProviderHarness,
    ScriptedAnswer,
    ScriptedError,
    ScriptedReasoning,
    SentRequest,
)
from reactloop._kit._runner import CONFORMANCE_CHECKS, ConformanceReport, check_provider
from reactloop._kit._server import (
    WireEnding,
    WireReply,
    WireRequest,
    WireServer,
    events_of,
    json_reply,
    split_at,
    sse_reply,
)

__all__ = [
    "ANSWER_CHECKS",
    "CONFORMANCE_CHECKS",
    "FAILURE_CHECKS",
    "HANG_GUARD",
    "RETRY_AFTER",
    "STALL_IDLE_TIMEOUT",
    "CheckSkipped",
    "ConformanceCheck",
    "ConformanceError",
    "ConformanceFailure",
    "ConformanceReport",
    "ErrorKind",
    "Features",
    "ProviderHarness",
    "ScriptedAnswer",
    "ScriptedError",
    "ScriptedReasoning",
    "SentRequest",
    "WireEnding",
    "WireReply",
    "WireRequest",
    "WireServer",
    "check_provider",
    "events_of",
    "json_reply",
    "split_at",
    "sse_reply",
]

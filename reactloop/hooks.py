"""Hooks and their decisions (a hook returns None to let things go on), and input guards."""

from reactloop._contracts import (
    Hook,
    HookFailure,
    HookPoint,
    InputGuard,
)
from reactloop._decisions import (
    Override,
    Reject,
    StopRun,
)
from reactloop._guards import (
    BlockedPatterns,
    MaxInputLength,
)

__all__ = [
    "BlockedPatterns",
    "Hook",
    "HookFailure",
    "HookPoint",
    "InputGuard",
    "MaxInputLength",
    "Override",
    "Reject",
    "StopRun",
]

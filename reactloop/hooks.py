"""Hooks and their decisions (a hook returns None to let things go on), and input guards."""

from reactloop._core import (
    Hook,
    HookFailure,
    HookPoint,
    InputGuard,
    Override,
    Reject,
    StopRun,
    publish,
)
from reactloop._policies import BlockedPatterns, MaxInputLength

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

publish(__name__, globals())

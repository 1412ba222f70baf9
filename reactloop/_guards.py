"""Input guards: checks on the user's input that run before any model call."""

from __future__ import annotations

import re
from collections.abc import Iterable

from attrs import field, frozen

from reactloop._errors import ConfigurationError


@frozen
class MaxInputLength:
    """Reject input longer than `limit` characters."""

    limit: int

    def __attrs_post_init__(self) -> None:
        if self.limit <= 0:
            raise ConfigurationError(f"max input length must be positive, got {self.limit!r}")

    def __call__(self, text: str) -> str | None:
        """Why the input is too long, or None."""
        if len(text) > self.limit:
            return f"input is {len(text)} characters, over the limit of {self.limit}"
        return None


def _compile(patterns: Iterable[str | re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) if isinstance(p, str) else p for p in patterns)


@frozen
class BlockedPatterns:
    """Reject input matching any of `patterns` (regular expressions)."""

    patterns: tuple[re.Pattern[str], ...] = field(converter=_compile)

    def __call__(self, text: str) -> str | None:
        """Which pattern matched, or None."""
        for pattern in self.patterns:
            if pattern.search(text):
                return f"input matches blocked pattern {pattern.pattern!r}"
        return None

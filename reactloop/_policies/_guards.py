"""Input guards: checks on the user's input that run before any model call."""

from __future__ import annotations

import re
from collections.abc import Iterable

from attrs import field, frozen

from reactloop._errors import ConfigurationError
from reactloop._validate import checked_arguments, integer, items


@frozen
class NonEmptyInput:
    """Reject empty or whitespace-only input: built in, it runs before the loop's own guards.

    Empty input is the end user's data, not a programmer error: the run ends at once with
    `GUARD_REJECTED` and no model call, whichever provider is configured.
    """

    def __call__(self, text: str) -> str | None:
        """Why the input is refused, or None."""
        return None if text.strip() else "input must not be empty"


NON_EMPTY_INPUT = NonEmptyInput()


@checked_arguments
@frozen
class MaxInputLength:
    """Reject input longer than `limit` characters."""

    limit: int

    def __attrs_post_init__(self) -> None:
        integer("MaxInputLength.limit", self.limit)

    def __call__(self, text: str) -> str | None:
        """Why the input is too long, or None."""
        if len(text) > self.limit:
            return f"input is {len(text)} characters, over the limit of {self.limit}"
        return None


def _pattern(option: str, pattern: object) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern) and isinstance(pattern.pattern, str):
        return pattern
    if not isinstance(pattern, str) or not pattern:
        raise ConfigurationError.invalid(option, pattern, "a non-empty regular expression")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigurationError.invalid(
            option, pattern, f"a valid regular expression ({exc})"
        ) from None


def _compile(
    patterns: Iterable[str | re.Pattern[str]] | str | re.Pattern[str],
) -> tuple[re.Pattern[str], ...]:
    """One pattern (a string or compiled) is one pattern, not one per character; one at least."""
    single = isinstance(patterns, str | re.Pattern)
    given = (patterns,) if single else items("BlockedPatterns.patterns", patterns, "patterns")
    if not given:
        raise ConfigurationError.invalid(
            "BlockedPatterns.patterns", patterns, "at least one pattern"
        )
    return tuple(_pattern(f"BlockedPatterns.patterns[{i}]", p) for i, p in enumerate(given))


@checked_arguments
@frozen
class BlockedPatterns:
    """Reject input matching any of `patterns` (regular expressions; one string is one pattern)."""

    patterns: tuple[re.Pattern[str], ...] = field(converter=_compile)

    def __call__(self, text: str) -> str | None:
        """Which pattern matched, or None."""
        for pattern in self.patterns:
            if pattern.search(text):
                return f"input matches blocked pattern {pattern.pattern!r}"
        return None

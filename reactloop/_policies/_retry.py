"""Retrying model calls: exponential backoff with jitter that honours the provider's own hints.

Only transient failures are retried (rate limits unless the quota is exhausted, overload and
outages, timeouts and dropped connections); a provider's `x-should-retry` answer wins over that
classification, except that credentials, malformed requests and oversized contexts are never
retried. Cancellation is never caught, so it is never retried either.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import TypeGuard, TypeVar

import anyio
from attrs import frozen

from reactloop._errors import (
    AuthenticationError,
    ConfigurationError,
    ContextTooLongError,
    InvalidRequestError,
    ModelError,
)
from reactloop._validate import checked_arguments, integer, number

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]

NEVER_RETRIED: tuple[type[ModelError], ...] = (
    AuthenticationError,
    InvalidRequestError,
    ContextTooLongError,
)


@checked_arguments
@frozen
class RetryPolicy:
    """How model calls are retried: `max_retries` more calls after the first one fails.

    The n-th retry waits `min(initial_delay * multiplier ** (n - 1), max_delay)`, shortened by a
    random fraction of up to `jitter` (0.25: up to 25 % less) so that clients do not retry in
    step. A provider's `retry-after` wins when it lies in `(0, max_retry_after]`, as the official
    SDKs do; a longer or missing one falls back to the computed backoff.
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 8.0
    jitter: float = 0.25
    max_retry_after: float = 60.0

    def __attrs_post_init__(self) -> None:
        integer("RetryPolicy.max_retries", self.max_retries, minimum=0)
        number("RetryPolicy.initial_delay", self.initial_delay, inclusive=True)
        number("RetryPolicy.multiplier", self.multiplier, minimum=1, inclusive=True)
        number("RetryPolicy.max_delay", self.max_delay, minimum=self.initial_delay, inclusive=True)
        number("RetryPolicy.jitter", self.jitter, inclusive=True)
        if self.jitter > 1:
            raise ConfigurationError.invalid("RetryPolicy.jitter", self.jitter, "at most 1")
        number("RetryPolicy.max_retry_after", self.max_retry_after, inclusive=True)

    @classmethod
    def never(cls) -> RetryPolicy:
        """A policy that makes exactly one call."""
        return cls(max_retries=0)

    def backoff(self, retry: int, rng: random.Random) -> float:
        """The jittered exponential delay before retry number `retry` (1 for the first)."""
        base = min(self.initial_delay * self.multiplier ** (retry - 1), self.max_delay)
        return base * (1 - self.jitter * rng.random())

    def delay(self, error: ModelError, retry: int, rng: random.Random) -> float:
        """The provider's `retry_after` when it is in range, else the computed backoff."""
        hint = error.retry_after
        if hint is not None and 0 < hint <= self.max_retry_after:
            return hint
        return self.backoff(retry, rng)


@frozen
class RetryNotice:
    """A failed attempt that will be retried: attempt number (1-based), its error, the wait."""

    attempt: int
    error: ModelError
    delay: float
    retries_left: int


OnRetry = Callable[[RetryNotice], Awaitable[None]]


def is_retryable(error: BaseException) -> TypeGuard[ModelError]:
    """Whether retrying can help: transient model errors, or whatever the provider says."""
    if not isinstance(error, ModelError) or isinstance(error, NEVER_RETRIED):
        return False
    if error.should_retry is not None:
        return error.should_retry
    return error.retryable


def _annotate(error: Exception, attempts: int, policy: RetryPolicy) -> None:
    if isinstance(error, ModelError):
        error.attempts = attempts
    if attempts > 1:
        verdict = "retries exhausted" if is_retryable(error) else "not retryable"
        error.add_note(
            f"reactloop: gave up after {attempts} attempt(s), {verdict} "
            f"(max_retries={policy.max_retries})"
        )


_SHARED_RNG = random.Random()


async def call_with_retry(
    policy: RetryPolicy,
    attempt: Callable[[], Awaitable[T]],
    *,
    sleep: Sleep = anyio.sleep,
    rng: random.Random | None = None,
    on_retry: OnRetry | None = None,
) -> T:
    """Await `attempt()` until it succeeds, retrying transient model errors per `policy`.

    `attempt` is a zero-argument factory called anew for every attempt, so each one starts from
    clean state. The last error is re-raised with `attempts` set (for model errors) and a note.
    """
    try:
        return await attempt()
    except Exception as error:
        failed = error
    return await retry_after(policy, attempt, failed, sleep=sleep, rng=rng, on_retry=on_retry)


async def retry_after(
    policy: RetryPolicy,
    attempt: Callable[[], Awaitable[T]],
    failed: Exception,
    *,
    sleep: Sleep = anyio.sleep,
    rng: random.Random | None = None,
    on_retry: OnRetry | None = None,
) -> T:
    """`call_with_retry` once the first attempt failed with `failed` (a caller that made the
    first attempt itself, with no closure built for a call that most often succeeds)."""
    chance = rng if rng is not None else _SHARED_RNG
    number, error = 1, failed
    while True:
        if number > policy.max_retries or not is_retryable(error):
            _annotate(error, number, policy)
            raise error
        notice = RetryNotice(
            number, error, policy.delay(error, number, chance), policy.max_retries - number
        )
        if on_retry is not None:
            await on_retry(notice)
        await sleep(notice.delay)
        number += 1
        try:
            return await attempt()
        except Exception as exc:
            error = exc

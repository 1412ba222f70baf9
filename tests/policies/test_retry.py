"""Retrying model calls: delays, provider hints, what is never retried, exhaustion, cancellation."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop._errors import (
    AuthenticationError,
    ConfigurationError,
    ContextTooLongError,
    InvalidRequestError,
    InvalidResponseError,
    ModelError,
    ModelTimeoutError,
    ProviderUnavailableError,
    RateLimitedError,
    ToolExecutionError,
)
from reactloop._policies._retry import RetryNotice, RetryPolicy, call_with_retry, is_retryable

pytestmark = pytest.mark.anyio

NO_JITTER = RetryPolicy(jitter=0)


class Recorder:
    """An injected sleep that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def failing(errors: Iterable[Exception], result: str = "ok") -> Callable[[], Awaitable[str]]:
    """An attempt factory that raises the given errors in turn, then returns `result`."""
    pending = list(errors)

    async def attempt() -> str:
        if pending:
            raise pending.pop(0)
        return result

    return attempt


def unavailable() -> ProviderUnavailableError:
    return ProviderUnavailableError("503 from provider", status=503)


async def test_default_policy_waits_half_a_second_then_one() -> None:
    sleep = Recorder()
    result = await call_with_retry(NO_JITTER, failing([unavailable(), unavailable()]), sleep=sleep)
    assert result == "ok"
    assert sleep.delays == [0.5, 1.0]


async def test_delays_double_up_to_the_cap_of_eight_seconds() -> None:
    sleep = Recorder()
    policy = RetryPolicy(max_retries=7, jitter=0)
    await call_with_retry(policy, failing([unavailable() for _ in range(7)]), sleep=sleep)
    assert sleep.delays == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


@given(retry=st.integers(1, 30), jitter=st.floats(0, 1), seed=st.integers(0, 2**32))
def test_jitter_shortens_the_delay_by_at_most_its_fraction(
    retry: int, jitter: float, seed: int
) -> None:
    policy = RetryPolicy(jitter=jitter)
    base = min(0.5 * 2 ** (retry - 1), 8.0)
    delay = policy.backoff(retry, random.Random(seed))
    assert base * (1 - jitter) <= delay <= base


async def test_seeded_rng_makes_jittered_delays_reproducible() -> None:
    first, second = Recorder(), Recorder()
    for sleep in (first, second):
        errors = failing([unavailable(), unavailable()])
        await call_with_retry(RetryPolicy(), errors, sleep=sleep, rng=random.Random(7))
    assert first.delays == second.delays
    assert first.delays != [0.5, 1.0]


async def test_retry_after_from_the_provider_wins_over_backoff() -> None:
    sleep = Recorder()
    error = RateLimitedError("429", retry_after=3.5)
    await call_with_retry(NO_JITTER, failing([error]), sleep=sleep)
    assert sleep.delays == [3.5]


async def test_retry_after_of_exactly_sixty_seconds_is_honoured() -> None:
    sleep = Recorder()
    await call_with_retry(
        NO_JITTER, failing([RateLimitedError("429", retry_after=60)]), sleep=sleep
    )
    assert sleep.delays == [60]


@pytest.mark.parametrize("hint", [60.5, 3600.0, 0.0, -1.0])
async def test_retry_after_out_of_range_falls_back_to_backoff(hint: float) -> None:
    sleep = Recorder()
    await call_with_retry(
        NO_JITTER, failing([RateLimitedError("429", retry_after=hint)]), sleep=sleep
    )
    assert sleep.delays == [0.5]


async def test_max_retry_after_is_configurable() -> None:
    sleep = Recorder()
    policy = RetryPolicy(jitter=0, max_retry_after=2)
    await call_with_retry(policy, failing([RateLimitedError("429", retry_after=3)]), sleep=sleep)
    assert sleep.delays == [0.5]


@pytest.mark.parametrize(
    "error",
    [
        RateLimitedError("429"),
        ProviderUnavailableError("529 overloaded", status=529),
        ModelTimeoutError("read timed out"),
        ProviderUnavailableError("connection reset"),
    ],
)
async def test_transient_errors_are_retried(error: ModelError) -> None:
    sleep = Recorder()
    assert await call_with_retry(NO_JITTER, failing([error]), sleep=sleep) == "ok"
    assert sleep.delays == [0.5]


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError("401 bad key"),
        InvalidRequestError("400 malformed"),
        ContextTooLongError("too many tokens"),
        RateLimitedError("429 insufficient_quota", quota_exhausted=True),
        InvalidResponseError("not JSON"),
    ],
)
async def test_non_transient_errors_are_raised_at_once(error: ModelError) -> None:
    sleep = Recorder()
    with pytest.raises(type(error)) as raised:
        await call_with_retry(NO_JITTER, failing([error]), sleep=sleep)
    assert sleep.delays == []
    assert raised.value.attempts == 1


async def test_errors_outside_the_model_taxonomy_are_not_retried() -> None:
    sleep = Recorder()
    with pytest.raises(ValueError, match="bug"):
        await call_with_retry(NO_JITTER, failing([ValueError("bug")]), sleep=sleep)
    assert sleep.delays == []


async def test_should_retry_false_overrides_a_retryable_error() -> None:
    error = ProviderUnavailableError("503", should_retry=False)
    with pytest.raises(ProviderUnavailableError):
        await call_with_retry(NO_JITTER, failing([error]), sleep=Recorder())


async def test_should_retry_true_overrides_a_non_retryable_error() -> None:
    error = InvalidResponseError("truncated body", should_retry=True)
    assert await call_with_retry(NO_JITTER, failing([error]), sleep=Recorder()) == "ok"


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError("401", should_retry=True),
        InvalidRequestError("400", should_retry=True),
        ContextTooLongError("too long", should_retry=True),
    ],
)
def test_should_retry_never_revives_auth_invalid_or_context_errors(error: ModelError) -> None:
    assert not is_retryable(error)


def test_tool_errors_are_not_model_errors_and_not_retryable() -> None:
    assert not is_retryable(ToolExecutionError("search", RuntimeError("boom")))


async def test_exhaustion_reraises_the_last_error_with_the_attempt_count() -> None:
    errors = [unavailable() for _ in range(3)]
    with pytest.raises(ProviderUnavailableError) as raised:
        await call_with_retry(NO_JITTER, failing(errors), sleep=Recorder())
    assert raised.value is errors[-1]
    assert raised.value.attempts == 3
    assert any("gave up after 3 attempt(s)" in note for note in raised.value.__notes__)


async def test_a_non_retryable_error_after_retries_carries_its_attempt_number() -> None:
    with pytest.raises(AuthenticationError) as raised:
        await call_with_retry(
            NO_JITTER, failing([unavailable(), AuthenticationError("401")]), sleep=Recorder()
        )
    assert raised.value.attempts == 2


async def test_never_policy_makes_a_single_call() -> None:
    with pytest.raises(ProviderUnavailableError):
        await call_with_retry(RetryPolicy.never(), failing([unavailable()]), sleep=Recorder())


async def test_each_attempt_calls_the_factory_anew() -> None:
    calls: list[int] = []
    errors = failing([unavailable(), unavailable()])

    async def attempt() -> str:
        calls.append(len(calls) + 1)
        return await errors()

    await call_with_retry(NO_JITTER, attempt, sleep=Recorder())
    assert calls == [1, 2, 3]


async def test_on_retry_hears_each_retry_before_its_wait() -> None:
    heard: list[RetryNotice] = []
    sleep = Recorder()

    async def on_retry(notice: RetryNotice) -> None:
        assert len(sleep.delays) == notice.attempt - 1
        heard.append(notice)

    first, second = unavailable(), RateLimitedError("429", retry_after=2)
    await call_with_retry(NO_JITTER, failing([first, second]), sleep=sleep, on_retry=on_retry)
    assert heard == [RetryNotice(1, first, 0.5, 1), RetryNotice(2, second, 2, 0)]


async def test_cancellation_during_the_backoff_sleep_propagates() -> None:
    calls: list[int] = []
    with anyio.CancelScope() as scope:

        async def cancelling_sleep(delay: float) -> None:
            scope.cancel()
            await anyio.lowlevel.checkpoint()

        async def attempt() -> str:
            calls.append(1)
            raise unavailable()

        await call_with_retry(NO_JITTER, attempt, sleep=cancelling_sleep)
    assert scope.cancelled_caught
    assert calls == [1]


async def test_cancellation_inside_an_attempt_is_not_retried() -> None:
    sleep = Recorder()
    with anyio.CancelScope() as scope:

        async def attempt() -> str:
            scope.cancel()
            await anyio.lowlevel.checkpoint()
            return "unreachable"

        await call_with_retry(NO_JITTER, attempt, sleep=sleep)
    assert scope.cancelled_caught
    assert sleep.delays == []


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("max_retries", -1),
        ("max_retries", 1.5),
        ("initial_delay", -0.1),
        ("multiplier", 0.5),
        ("max_delay", 0.1),
        ("jitter", 1.5),
        ("jitter", float("nan")),
        ("max_retry_after", -1),
    ],
)
def test_bad_policy_settings_name_the_setting_and_value(setting: str, value: float) -> None:
    settings: dict[str, Any] = {setting: value}
    with pytest.raises(ConfigurationError, match=f"RetryPolicy.{setting} .*{value!r}"):
        RetryPolicy(**settings)


async def test_exhausted_retries_are_noted_as_such() -> None:
    errors = [unavailable() for _ in range(3)]
    with pytest.raises(ProviderUnavailableError) as raised:
        await call_with_retry(NO_JITTER, failing(errors), sleep=Recorder())
    assert raised.value.__notes__ == [
        "reactloop: gave up after 3 attempt(s), retries exhausted (max_retries=2)"
    ]


async def test_a_non_retryable_error_after_a_retry_is_noted_as_such() -> None:
    with pytest.raises(AuthenticationError) as raised:
        await call_with_retry(
            NO_JITTER, failing([unavailable(), AuthenticationError("401")]), sleep=Recorder()
        )
    assert raised.value.__notes__ == [
        "reactloop: gave up after 2 attempt(s), not retryable (max_retries=2)"
    ]


async def test_an_error_on_the_only_attempt_gets_no_note() -> None:
    with pytest.raises(AuthenticationError) as raised:
        await call_with_retry(NO_JITTER, failing([AuthenticationError("401")]), sleep=Recorder())
    assert not hasattr(raised.value, "__notes__") and raised.value.attempts == 1


@pytest.mark.parametrize(
    "settings",
    [
        {"initial_delay": 0},
        {"multiplier": 1},
        {"multiplier": 1.5},
        {"initial_delay": 2, "max_delay": 2},
        {"jitter": 1},
        {"max_retry_after": 0},
    ],
    ids=repr,
)
def test_each_policy_setting_accepts_its_bound(settings: dict[str, Any]) -> None:
    assert RetryPolicy(**settings) == RetryPolicy(**settings)


def test_a_jitter_above_one_is_refused_with_its_rule() -> None:
    with pytest.raises(ConfigurationError) as caught:
        RetryPolicy(jitter=1.5)
    assert (caught.value.option, caught.value.rule) == ("RetryPolicy.jitter", "at most 1")


async def test_a_retry_after_below_one_second_is_honoured() -> None:
    sleep = Recorder()
    error = RateLimitedError("429", retry_after=0.25)
    await call_with_retry(NO_JITTER, failing([error]), sleep=sleep)
    assert sleep.delays == [0.25]

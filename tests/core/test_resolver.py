"""User-facing error messages: one safe sentence per code, replaceable and overridable."""

from __future__ import annotations

import pytest

from reactloop._errors import (
    AuthenticationError,
    ConfigurationError,
    ErrorCode,
    RateLimitedError,
    ReactLoopError,
    RunLimitError,
    RunTimeoutError,
    ToolExecutionError,
)
from reactloop._resolver import (
    DEFAULT_RESOLVER,
    DefaultErrorMessages,
    ErrorMessageResolver,
    user_message,
)


class Coded(ReactLoopError):
    """An error with an arbitrary code, to reach every code through the resolver."""

    def __init__(self, code: ErrorCode) -> None:
        super().__init__("internal detail: sk-secret-123")
        self.code = code


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_code_has_its_own_sentence(code: ErrorCode) -> None:
    text = DEFAULT_RESOLVER(Coded(code))
    assert text.endswith(".")
    assert text == DEFAULT_RESOLVER.for_code(code)


def test_sentences_are_distinct_per_code() -> None:
    sentences = {DEFAULT_RESOLVER.for_code(code) for code in ErrorCode}
    assert len(sentences) == len(ErrorCode)


@pytest.mark.parametrize("code", list(ErrorCode))
def test_the_error_message_never_leaks(code: ErrorCode) -> None:
    assert "sk-secret" not in DEFAULT_RESOLVER(Coded(code))


def test_rate_limited_says_the_service_is_busy() -> None:
    text = DEFAULT_RESOLVER(RateLimitedError("429 from api.example.com"))
    assert text == "The AI service is busy right now. Please try again in a moment."


def test_run_level_timeouts_use_the_timeout_sentence() -> None:
    expected = DEFAULT_RESOLVER.for_code(ErrorCode.TIMEOUT)
    assert DEFAULT_RESOLVER(RunTimeoutError(30)) == expected
    assert DEFAULT_RESOLVER(RunLimitError(4, 2.0)) == expected


def test_overrides_replace_one_code_and_keep_the_rest() -> None:
    resolver = DefaultErrorMessages({ErrorCode.RATE_LIMITED: "Trop de demandes."})
    assert resolver(RateLimitedError("429")) == "Trop de demandes."
    assert resolver(AuthenticationError("401")) == DEFAULT_RESOLVER(AuthenticationError("401"))


def test_overrides_must_be_non_empty_sentences_keyed_by_code() -> None:
    with pytest.raises(ConfigurationError, match="'rate_limited'"):
        DefaultErrorMessages({"rate_limited": "busy"})  # type: ignore[dict-item]


def test_a_plain_function_is_a_resolver() -> None:
    def shout(error: ReactLoopError) -> str:
        return f"FAILED ({error.code})"

    assert isinstance(shout, ErrorMessageResolver)
    assert user_message(RateLimitedError("429"), shout) == "FAILED (rate_limited)"


def test_user_message_uses_the_default_resolver_by_default() -> None:
    error = ToolExecutionError("search", RuntimeError("db password wrong"))
    assert user_message(error) == DEFAULT_RESOLVER.for_code(ErrorCode.TOOL_ERROR)


def test_a_failing_custom_resolver_falls_back_to_the_default() -> None:
    def broken(error: ReactLoopError) -> str:
        raise KeyError(error.code)

    assert user_message(RateLimitedError("429"), broken) == DEFAULT_RESOLVER(
        RateLimitedError("429")
    )


def test_an_empty_custom_sentence_falls_back_to_the_default() -> None:
    assert user_message(RateLimitedError("429"), lambda error: " ") == DEFAULT_RESOLVER(
        RateLimitedError("429")
    )

"""Shared HTTP plumbing: retry hints, error typing by status and body, and key masking."""

from __future__ import annotations

import pytest

from reactloop._errors import (
    AuthenticationError,
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    InvalidResponseError,
    ModelError,
    ModelTimeoutError,
    ProviderConfigurationError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._providers._auth import Secret, resolve_key
from reactloop._providers._http import parse_json, shown_url
from reactloop._providers._http_errors import (
    ErrorDetail,
    RetryHints,
    detail_of,
    retry_hints,
    status_error,
    stream_error,
)

NOW = 1_700_000_000.0
CONFIG = ProviderConfigurationError


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, RetryHints()),
        ({"retry-after-ms": "250"}, RetryHints(0.25)),
        ({"retry-after-ms": "soon", "retry-after": "3"}, RetryHints(3.0)),
        ({"retry-after": "1.5"}, RetryHints(1.5)),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:40 GMT"}, RetryHints(20.0)),
        ({"retry-after": "Tue, 14 Nov 2023 22:00:00 GMT"}, RetryHints(0.0)),
        ({"retry-after": "-4"}, RetryHints()),
        ({"retry-after": "nan"}, RetryHints()),
        ({"retry-after": "someday"}, RetryHints()),
        ({"x-should-retry": "true"}, RetryHints(None, True)),
        ({"x-should-retry": "False"}, RetryHints(None, False)),
        ({"x-should-retry": "maybe"}, RetryHints()),
    ],
)
def test_retry_hints(headers: dict[str, str], expected: RetryHints) -> None:
    assert retry_hints(headers, now=NOW) == expected


@pytest.mark.parametrize(
    ("status", "detail", "kind"),
    [
        (429, ErrorDetail("slow down", "rate_limit_error"), RateLimitedError),
        (401, ErrorDetail("bad key", "authentication_error"), AuthenticationError),
        (403, ErrorDetail("not allowed", "permission_error"), AuthenticationError),
        (408, ErrorDetail("timeout"), ModelTimeoutError),
        (400, ErrorDetail("x", "invalid_request", "context_length_exceeded"), ContextTooLongError),
        (400, ErrorDetail("prompt is too long: 9 tokens > 8 maximum"), ContextTooLongError),
        (400, ErrorDetail("This model's maximum context length is 8192"), ContextTooLongError),
        (400, ErrorDetail("messages: required", "invalid_request_error"), InvalidRequestError),
        (422, ErrorDetail("This model's maximum context length is 4096"), ContextTooLongError),
        (413, ErrorDetail("request too large", "request_too_large"), ContextTooLongError),
        (400, ErrorDetail("unsupported", "invalid_request_error", "unsupported_value"), CONFIG),
        (400, ErrorDetail("`temperature` is deprecated for this model."), CONFIG),
        (400, ErrorDetail("role 'system' is not supported on this model"), CONFIG),
        (400, ErrorDetail('messages: Unexpected role "system".', "invalid_request_error"), CONFIG),
        (402, ErrorDetail("Insufficient credits"), RateLimitedError),
        (404, ErrorDetail("no such model", "not_found_error"), CONFIG),
        (404, ErrorDetail("<html>Not Found</html>"), CONFIG),
        (405, ErrorDetail("Method Not Allowed"), CONFIG),
        (410, ErrorDetail("gone"), CONFIG),
        (415, ErrorDetail("Unsupported Media Type"), CONFIG),
        (422, ErrorDetail("field required"), CONFIG),
        (409, ErrorDetail("conflict"), ProviderUnavailableError),
        (500, ErrorDetail("oops", "api_error"), ProviderUnavailableError),
        (529, ErrorDetail("Overloaded", "overloaded_error"), ProviderUnavailableError),
        (302, ErrorDetail("moved"), CONFIG),
        (418, ErrorDetail("teapot"), InvalidRequestError),
    ],
)
def test_status_and_body_pick_the_error(
    status: int, detail: ErrorDetail, kind: type[ModelError]
) -> None:
    error = status_error("p", status, detail)
    assert type(error) is kind
    assert (error.status, error.provider) == (status, "p")
    assert detail.message in str(error)


def test_error_messages_name_provider_status_and_type() -> None:
    error = status_error("openai", 400, ErrorDetail("bad", "invalid_request_error", "x_code"))
    assert str(error) == "openai answered HTTP 400 invalid_request_error x_code: bad"


@pytest.mark.parametrize(
    ("kind", "expected", "status"),
    [
        ("overloaded_error", ProviderUnavailableError, 529),
        ("rate_limit_error", RateLimitedError, 429),
        ("invalid_request_error", InvalidRequestError, 400),
        ("mystery", ProviderUnavailableError, 500),
    ],
)
def test_stream_errors_are_typed_by_their_type(
    kind: str, expected: type[ModelError], status: int
) -> None:
    error = stream_error("anthropic", ErrorDetail("m", kind), None)
    assert (type(error), error.status) == (expected, status)
    assert str(error).startswith("anthropic sent an error")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error": {"message": "m", "type": "t", "code": 42}}', ErrorDetail("m", "t", "42")),
        (b'{"type": "error", "error": {"type": "t", "message": "m"}}', ErrorDetail("m", "t")),
        (b'{"error": "plain words"}', ErrorDetail("plain words")),
        (b'{"detail": "from a compatible server"}', ErrorDetail("from a compatible server")),
        (b"<html>502</html>", ErrorDetail("<html>502</html>")),
    ],
)
def test_error_bodies_of_every_shape(body: bytes, expected: ErrorDetail) -> None:
    assert detail_of(body) == expected


@pytest.mark.parametrize(
    ("status", "detail"),
    [
        (429, ErrorDetail("no money", "insufficient_quota", "insufficient_quota")),
        (402, ErrorDetail("Insufficient credits")),
    ],
)
def test_quota_exhaustion_is_flagged(status: int, detail: ErrorDetail) -> None:
    error = status_error("openai", status, detail)
    assert isinstance(error, RateLimitedError)
    assert error.quota_exhausted
    assert not error.retryable
    assert error.code is ErrorCode.QUOTA_EXHAUSTED


def test_a_plain_rate_limit_keeps_its_code() -> None:
    error = status_error("openai", 429, ErrorDetail("slow down", "rate_limit_error"))
    assert error.code is ErrorCode.RATE_LIMITED


def test_a_configuration_error_names_the_url_and_what_to_check() -> None:
    url = "https://api.example.com/v1/chat/completions"
    error = status_error("openai", 404, ErrorDetail("Not Found"), url=url)
    assert isinstance(error, ProviderConfigurationError)
    assert str(error).startswith(f"openai answered HTTP 404 for POST {url}: Not Found")
    assert "check the base URL" in str(error)
    assert (error.url, error.code) == (url, ErrorCode.CONFIGURATION)


def test_a_url_loses_its_user_name_and_password() -> None:
    assert shown_url("https://me:pw@h.example/v1?x=1") == "https://h.example/v1?x=1"


def test_the_key_is_masked_everywhere() -> None:
    secret = Secret("sk-very-secret")
    error = status_error("openai", 401, ErrorDetail("bad key sk-very-secret"), secret=secret)
    assert "sk-very-secret" not in str(error)
    assert "sk-very-secret" not in repr(secret)
    assert "sk-very-secret" not in str(secret)


def test_keys_come_from_the_argument_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_KEY", "from-env")
    assert resolve_key("given", "SOME_KEY") is not None
    assert resolve_key(None, "SOME_KEY") is not None
    monkeypatch.delenv("SOME_KEY")
    assert resolve_key(None, "SOME_KEY") is None


@pytest.mark.parametrize("body", [b"{", b"[1, 2]", b""])
def test_parse_json_rejects_what_is_not_an_object(body: bytes) -> None:
    with pytest.raises(InvalidResponseError, match="p sent"):
        parse_json("p", body)

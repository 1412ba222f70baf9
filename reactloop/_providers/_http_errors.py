"""How an HTTP failure becomes a typed `ModelError`: the error body read (`ErrorDetail`: OpenAI,
Anthropic, Google and looser compatible shapes), the retry hints of the headers, and the class a
status and its detail stand for (who can fix it: nobody, the end user, the developer)."""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Mapping
from typing import Any

import orjson
from attrs import frozen

from reactloop._errors import (
    AuthenticationError,
    ContextTooLongError,
    InvalidRequestError,
    InvalidResponseError,
    ModelError,
    ModelTimeoutError,
    ProviderConfigurationError,
    ProviderUnavailableError,
    RateLimitedError,
)
from reactloop._providers._auth import Masks, Secret

MAX_DETAIL = 500

_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "context length",
    "exceed_context_size",
    "context window",
    "input token count",  # Gemini: "The input token count (N) exceeds the maximum ..."
)

_SETTING_MARKERS = (
    "unsupported_parameter",
    "unsupported_value",
    "model_not_found",
    "for this model",
    "on this model",
    "with this model",
    "by this model",
    "unexpected role",
)
"""Words of a 400 that says the configured model rejects a parameter or a value of the request."""

CONFIGURATION_HINTS = {
    404: "nothing answers at this URL, or the model does not exist:"
    " check the base URL and the model name",
    405: "this URL does not take a POST: check the base URL",
    410: "this endpoint or model is gone: check the base URL and the model name",
    415: "this URL does not take a JSON body: check the base URL",
    422: "the server cannot process a request of this shape: check that the base URL is a server"
    " of this protocol and that the model accepts these settings",
}
"""Statuses that say the request cannot succeed as configured, with what to check for each."""

REDIRECT_HINT = "the server answers with a redirect: set the base URL to where it redirects"
SETTING_HINT = "the model rejects a parameter or value of this request: change the model settings"

KIND_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "insufficient_quota": 429,
    "api_error": 500,
    "server_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
    # Google's canonical statuses (google.rpc.Code), as Gemini names them beside the code
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""The HTTP status an error type stands for, for errors that arrive inside a 200 stream."""

_CREDENTIAL_REASONS = ("API_KEY_", "ACCESS_TOKEN_", "CREDENTIALS_MISSING")
"""Prefixes of the `reason` of an error whose credentials were refused, whatever its status
(Google answers a bad API key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID)."""

_PRECONDITION_HINT = "the account cannot make this request as set up (billing, region, project)"


@frozen
class RetryHints:
    """What the server said about retrying: seconds to wait and an explicit yes/no."""

    retry_after: float | None = None
    should_retry: bool | None = None


def _seconds(value: str | None, scale: float = 1.0) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value.strip()) / scale
    except ValueError:
        return None
    return seconds if seconds >= 0 and math.isfinite(seconds) else None


def _date_delay(value: str | None, now: float) -> float | None:
    if value is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now)


def retry_hints(headers: Mapping[str, str], now: float | None = None) -> RetryHints:
    """Parse `retry-after-ms`, `retry-after` (seconds or HTTP date) and `x-should-retry`."""
    after = _seconds(headers.get("retry-after-ms"), 1000.0)
    if after is None:
        after = _seconds(headers.get("retry-after"))
    if after is None:
        after = _date_delay(headers.get("retry-after"), time.time() if now is None else now)
    flag = (headers.get("x-should-retry") or "").strip().lower()
    should = True if flag == "true" else False if flag == "false" else None
    return RetryHints(after, should)


@frozen
class ErrorDetail:
    """The parts of an error body that decide its type: message, type and code."""

    message: str
    kind: str | None = None
    code: str | None = None
    param: str | None = None  # the request field at fault, when the error names it (OpenAI)
    reason: str | None = None  # a machine-readable reason in `details` (Google's ErrorInfo)
    retry_after: float | None = None  # a delay the body gives (Google's RetryInfo)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _details(inner: dict[str, Any]) -> tuple[str | None, float | None]:
    """The first `reason` and `retryDelay` ("22s") of Google's `details` list."""
    details = inner.get("details")
    found = [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
    reason = next((r for d in found if (r := _text(d.get("reason")))), None)
    delay = next((d for entry in found if (d := _text(entry.get("retryDelay")))), None)
    return reason, None if delay is None else _seconds(delay.removesuffix("s"))


def error_detail(body: object, raw: bytes = b"") -> ErrorDetail:
    """Read `{"error": {...}}` (OpenAI, Anthropic, Google: its `status` as the type, its
    `details` reason and retry delay) or a looser body of a compatible server; Google's
    streaming endpoint sends its error as a list of one (`[{"error": {...}}]`)."""
    if isinstance(body, list) and len(body) == 1:
        body = body[0]
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = _text(inner.get("message")) or _text(inner.get("detail")) or ""
            code = inner.get("code")
            kind = _text(inner.get("type")) or _text(inner.get("status"))
            param = _text(inner.get("param"))
            reason, delay = _details(inner)
            code_text = None if code is None else str(code)
            return ErrorDetail(message, kind, code_text, param, reason, delay)
        if isinstance(inner, str):
            return ErrorDetail(inner)
    text = raw.decode("utf-8", "replace").strip()
    return ErrorDetail(text[:MAX_DETAIL])


def detail_of(content: bytes) -> ErrorDetail:
    """The error detail of a raw response body, JSON or not."""
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        body = None
    return error_detail(body, content)


def _is_context_overflow(detail: ErrorDetail) -> bool:
    words = f"{detail.code or ''} {detail.kind or ''} {detail.message}".lower()
    return any(marker in words for marker in _CONTEXT_MARKERS)


def _rejects_a_setting(detail: ErrorDetail) -> bool:
    words = f"{detail.code or ''} {detail.kind or ''} {detail.message}".lower()
    return any(marker in words for marker in _SETTING_MARKERS)


@frozen
class Rejected:
    """The parameter a 400 says the model rejects, its value as sent, and the model."""

    param: str
    value: object
    model: str | None


_NOT_PARAMETERS = frozenset({"model", "messages", "stream"})


def rejected_parameter(detail: ErrorDetail, sent: bytes) -> Rejected | None:
    """What a 400 that says the model rejects a setting is about: the parameter the error names
    (OpenAI's `param`), else the first top-level field of the request its message names."""
    if not _rejects_a_setting(detail):
        return None
    try:
        body = orjson.loads(sent)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict):
        return None
    model = _text(body.get("model"))
    param = detail.param
    if param is None:
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", detail.message))
        fields = (key for key in body if key not in _NOT_PARAMETERS)
        param = next((key for key in fields if key in words), None)
    if param is None:
        return None
    return Rejected(param, body.get(param.split(".")[0]), model)


def _error_class(status: int, detail: ErrorDetail) -> type[ModelError]:
    """The error class of a status: who can fix it (nobody, the end user, the developer)."""
    if status in (402, 429):
        return RateLimitedError
    if status in (401, 403) or (detail.reason or "").startswith(_CREDENTIAL_REASONS):
        return AuthenticationError
    if status == 408:
        return ModelTimeoutError
    if status == 409 or status >= 500 or detail.kind == "overloaded_error":
        return ProviderUnavailableError  # 409, a lock conflict: both official SDKs retry it
    if status == 413 or (status >= 400 and _is_context_overflow(detail)):
        return ContextTooLongError  # 413: the request is too large to be taken at all
    if 300 <= status < 400 or status in CONFIGURATION_HINTS or _rejects_a_setting(detail):
        return ProviderConfigurationError
    if detail.kind == "FAILED_PRECONDITION":
        return ProviderConfigurationError
    if status >= 400:
        return InvalidRequestError
    return InvalidResponseError


def _hint(status: int, detail: ErrorDetail) -> str:
    if 300 <= status < 400:
        return REDIRECT_HINT
    if detail.kind == "FAILED_PRECONDITION" and status not in CONFIGURATION_HINTS:
        return _PRECONDITION_HINT
    return CONFIGURATION_HINTS.get(status, SETTING_HINT)


def status_error(
    provider: str,
    status: int,
    detail: ErrorDetail,
    *,
    hints: RetryHints = RetryHints(),
    secret: Secret | Masks | None = None,
    origin: str | None = None,
    url: str | None = None,
    rejected: Rejected | None = None,
) -> ModelError:
    """The typed error for an HTTP status (or the status an in-stream error stands for).

    The message names the URL tried, when there is one; a configuration error says what to check.
    """
    text = detail.message or "(no message)"
    label = " ".join(part for part in (detail.kind, detail.code) if part)
    where = origin or f"answered HTTP {status}"
    target = f" for POST {url}" if url else ""
    message = f"{provider} {where}{target}" + (f" {label}" if label else "") + f": {text}"
    cls = _error_class(status, detail)
    if cls is ProviderConfigurationError and rejected is not None:
        model = f"model {rejected.model!r}" if rejected.model else "the model"
        message += f" ({model} does not take the parameter {rejected.param!r}: leave it unset)"
    elif cls is ProviderConfigurationError:
        message += f" ({_hint(status, detail)})"
    if secret is not None:
        message = secret.redact(message)
        url = None if url is None else secret.redact(url)
    kwargs: dict[str, Any] = {
        "status": status,
        "provider": provider,
        "retry_after": detail.retry_after if hints.retry_after is None else hints.retry_after,
        "should_retry": hints.should_retry,
    }
    if cls is RateLimitedError:
        quota = status == 402 or "insufficient_quota" in (detail.code, detail.kind)
        return RateLimitedError(message, quota_exhausted=quota, **kwargs)
    if cls is ProviderConfigurationError and rejected is not None:
        rule = f"not sent to {rejected.model or 'this model'}"
        return ProviderConfigurationError(
            message, url=url, option=rejected.param, value=rejected.value, rule=rule, **kwargs
        )
    if cls is ProviderConfigurationError:
        return ProviderConfigurationError(message, url=url, **kwargs)
    return cls(message, **kwargs)


def stream_error(provider: str, detail: ErrorDetail, secret: Secret | Masks | None) -> ModelError:
    """The typed error for an error inside a 200 answer (a stream event or body), by its type,
    or by its code when that is an HTTP status (OpenRouter's `{"code": 429, ...}`)."""
    status = KIND_STATUS.get(detail.kind or "", KIND_STATUS.get(detail.code or "", 500))
    if detail.code is not None and detail.code.isdigit() and 400 <= int(detail.code) < 600:
        status = int(detail.code)
    return status_error(provider, status, detail, secret=secret, origin="sent an error")

"""What both providers share over HTTP: the client, secrets, retry hints and error mapping.

Every failure leaves this module as a typed `ModelError` carrying `status`, `provider`,
`retry_after` and `should_retry`, so a retry policy can act on it without knowing the protocol.
"""

from __future__ import annotations

import email.utils
import functools
import math
import re
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx
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
from reactloop._providers._auth import AuthScheme, Masks, Secret, TokenSource
from reactloop._providers._sse import SseDecoder, SseEvent
from reactloop._redact import redacted
from reactloop._unicode import dumps

T = TypeVar("T")

EventHandler = Callable[[SseEvent], Awaitable[bool]]
"""Handles one SSE event; returns True when the response is complete and reading may stop."""

DEFAULT_TIMEOUT = 600.0
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_IDLE_TIMEOUT = 120.0
DRAIN_SECONDS = 2.0
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
    `details` reason and retry delay) or a looser body of a compatible server."""
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


def shown_url(url: httpx.URL | str) -> str:
    """A URL fit for an error message: any user name and password in it are removed, and the
    values of query parameters that hold secrets (`?api-key=`, `?sig=`, ...) masked."""
    return redacted(str(httpx.URL(url).copy_with(userinfo=b"")))


def endpoint(base_url: str, path: str) -> str:
    """The URL of `path` under `base_url`: appended to the base URL's path, any query it has
    (`https://host/v1?api-version=x`) kept after the path's own (Gemini's `?alt=sse`); its
    fragment (never sent) dropped."""
    parts = urlsplit(base_url)
    if "?" not in path:  # every path but Gemini's streaming one
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path, fragment=""))
    route, _, query = path.partition("?")
    joined = "&".join(q for q in (query, parts.query) if q)
    return urlunsplit(
        parts._replace(path=parts.path.rstrip("/") + route, query=joined, fragment="")
    )


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


def transport_error(provider: str, error: httpx.RequestError, url: str | None = None) -> ModelError:
    """The typed error for a failure below HTTP: timeouts, refused or reset connections.

    The message names the URL tried, when there is one: a wrong host or port shows at once.
    """
    what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    target = f" for POST {url}" if url else ""
    if isinstance(error, httpx.TimeoutException):
        message = f"{provider} request timed out{target} ({what})"
        return ModelTimeoutError(message, provider=provider)
    if isinstance(error, httpx.DecodingError):
        message = f"{provider} body cannot be decoded{target} ({what})"
        return InvalidResponseError(message, provider=provider)
    message = f"{provider} connection failed{target} ({what})"
    return ProviderUnavailableError(message, provider=provider)


def parse_json(
    provider: str, content: bytes, status: int | None = None, url: str | None = None
) -> dict[str, Any]:
    """A JSON object from a body, or `InvalidResponseError` naming what came instead (and the URL
    that sent it, when known: a base URL pointing at a web page answers HTML)."""
    source = f" from {url}" if url else ""
    try:
        value = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        snippet = content[:80].decode("utf-8", "replace")
        raise InvalidResponseError(
            f"{provider} sent malformed JSON{source} ({exc}): {snippet!r}",
            status=status,
            provider=provider,
        ) from None
    if not isinstance(value, dict):
        raise InvalidResponseError(
            f"{provider} sent JSON {type(value).__name__}{source}, expected an object",
            status=status,
            provider=provider,
        )
    return value


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every client: building one costs tens of milliseconds."""
    return httpx.create_ssl_context()


def make_client(
    timeout: float = DEFAULT_TIMEOUT,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    limits: httpx.Limits | None = None,
) -> httpx.AsyncClient:
    """A pooled client; `timeout` bounds each read, `connect_timeout` each connect."""
    return httpx.AsyncClient(
        verify=_tls_context(),
        timeout=httpx.Timeout(timeout, connect=connect_timeout),
        limits=limits or httpx.Limits(max_connections=100, max_keepalive_connections=20),
    )


class HttpChannel:
    """One provider's endpoint: posts JSON, reads JSON or SSE, maps every failure to a type."""

    def __init__(
        self,
        provider: str,
        base_url: str,
        headers: Mapping[str, str],
        *,
        secret: Secret | None,
        auth: AuthScheme,
        client: httpx.AsyncClient | None,
        idle_timeout: float | None,
        tokens: TokenSource | None = None,
    ) -> None:
        self.provider = provider
        parts = urlsplit(base_url)
        self.base_url = urlunsplit(parts._replace(path=parts.path.rstrip("/")))
        self._headers = dict(headers)
        self._secret = secret
        self._masks = Masks(secret, base_url)
        self._auth = auth
        self._tokens = tokens  # a token asked for each request, sent with `auth`'s scheme
        self._owns_client = client is None
        self.client = client if client is not None else make_client()
        self.idle_timeout = idle_timeout

    async def aclose(self) -> None:
        """Close the client if this channel created it."""
        if self._owns_client:
            await self.client.aclose()

    async def _signed(
        self, tokens: TokenSource, path: str, body: Mapping[str, Any]
    ) -> tuple[httpx.Request, Masks]:
        """The request with a fresh token of `tokens`, and masks that include it."""
        token = await tokens.secret()
        return self._request(path, body, token), self._masks.including(token)

    def _request(
        self, path: str, body: Mapping[str, Any], token: Secret | None = None
    ) -> httpx.Request:
        headers, secret = self._headers, token or self._secret
        if secret is not None:
            headers = {**headers, **secret.header(self._auth)}
        url, content = endpoint(self.base_url, path), dumps(body, where="a request to the model")
        return self.client.build_request("POST", url, content=content, headers=headers)

    def _url(self, request: httpx.Request) -> str:
        """The request's URL as error messages show it: no user info, no key."""
        return self._masks.redact(shown_url(request.url))

    def _failure(self, response: httpx.Response, masks: Masks) -> ModelError:
        hints = retry_hints(response.headers)
        detail = detail_of(response.content)
        location = response.headers.get("location")
        if response.is_redirect and location and not detail.message:
            detail = ErrorDetail(f"redirects to {shown_url(response.request.url.join(location))}")
        url = self._url(response.request)
        rejected = rejected_parameter(detail, response.request.content)
        return status_error(
            self.provider, response.status_code, detail, hints=hints, secret=masks, url=url,
            rejected=rejected,
        )  # fmt: skip

    def _not_a_stream(self, response: httpx.Response, masks: Masks) -> ModelError:
        detail = detail_of(response.content)
        if detail.kind or detail.code:
            return stream_error(self.provider, detail, masks)
        kind = response.headers.get("content-type", "(none)")
        return InvalidResponseError(
            f"{self.provider} answered a streaming request to {self._url(response.request)}"
            f" with content-type {kind!r}, not text/event-stream",
            status=response.status_code,
            provider=self.provider,
        )

    async def post_json(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST `body`; the JSON object answered, or a typed error."""
        if self._tokens is None:  # the plain path: no await beyond the send
            request, masks = self._request(path, body), self._masks
        else:
            request, masks = await self._signed(self._tokens, path, body)
        try:
            response = await self.client.send(request)
        except httpx.RequestError as exc:
            raise transport_error(self.provider, exc, self._url(request)) from exc
        if not response.is_success:
            raise self._failure(response, masks)
        return parse_json(self.provider, response.content, response.status_code, self._url(request))

    async def post_stream(self, path: str, body: Mapping[str, Any], handle: EventHandler) -> None:
        """POST `body` and feed each SSE event to `handle` until it says done or the body ends.

        The idle timeout bounds the wait for the response head and then for each chunk.
        """
        if self._tokens is None:  # the plain path: no await beyond the send
            request, masks = self._request(path, body), self._masks
        else:
            request, masks = await self._signed(self._tokens, path, body)
        url = self._url(request)
        try:
            response = await self._idle(self.client.send(request, stream=True))
        except httpx.RequestError as exc:
            raise transport_error(self.provider, exc, url) from exc
        try:
            if not response.is_success:
                await self._idle(response.aread())
                raise self._failure(response, masks)
            if not _is_event_stream(response):
                await self._idle(response.aread())
                raise self._not_a_stream(response, masks)
            await self._pump(response, handle)
        except httpx.RequestError as exc:
            raise transport_error(self.provider, exc, url) from exc
        finally:
            await response.aclose()

    async def _idle(self, step: Awaitable[T]) -> T:
        try:
            with anyio.fail_after(self.idle_timeout):
                return await step
        except TimeoutError:
            raise ModelTimeoutError(
                f"{self.provider} stream stalled: nothing arrived for {self.idle_timeout:g} s"
                " (the idle timeout)",
                provider=self.provider,
            ) from None

    async def _pump(self, response: httpx.Response, handle: EventHandler) -> None:
        decoder = SseDecoder()
        chunks = response.aiter_bytes()
        try:
            while (chunk := await self._idle(anext(chunks, None))) is not None:
                for event in decoder.feed(chunk):
                    if await handle(event):
                        await _drain(chunks)
                        return
            for event in decoder.close():
                await handle(event)
        finally:
            await _abandon(chunks)


def _is_event_stream(response: httpx.Response) -> bool:
    """False for a JSON body (an error) or a web page (a base URL that is no API); servers that
    label their stream loosely (or not at all) are still read as one."""
    kind = response.headers.get("content-type", "text/event-stream").lower()
    return "json" not in kind and "html" not in kind


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows the last event, so the connection can go back to the pool."""
    with anyio.move_on_after(DRAIN_SECONDS):
        try:
            async for _ in chunks:
                pass
        except httpx.RequestError:
            return


async def _abandon(chunks: AsyncIterator[bytes]) -> None:
    """Finish httpx's chain of byte generators so that none is left suspended.

    Closing only the outer generator would leave the inner ones (httpx, httpcore) to the garbage
    collector, which trio reports as a ResourceWarning. Pulling once more under a cancelled scope
    raises inside the innermost read, which unwinds and finishes every generator of the chain
    (and makes httpcore drop the half-read connection).
    """
    with anyio.CancelScope() as scope:
        scope.cancel()
        try:
            async for _ in chunks:
                pass
        except httpx.RequestError:
            return

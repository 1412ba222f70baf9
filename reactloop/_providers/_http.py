"""What every provider shares over HTTP: the client, the channel, the URL of an endpoint, and
every failure typed (the error mapping itself lives in `_http_errors`).

Every failure leaves this module as a typed `ModelError` carrying `status`, `provider`,
`retry_after` and `should_retry`, so a retry policy can act on it without knowing the protocol.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx
import orjson

from reactloop._errors import (
    InvalidResponseError,
    ModelError,
    ModelTimeoutError,
    ProviderUnavailableError,
)
from reactloop._providers._auth import AuthScheme, Masks, Secret, TokenSource
from reactloop._providers._http_errors import (
    ErrorDetail,
    detail_of,
    rejected_parameter,
    retry_hints,
    status_error,
    stream_error,
)
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


def shown_url(url: httpx.URL | str) -> str:
    """A URL fit for an error message: any user name and password in it are removed, and the
    values of query parameters that hold secrets (`?api-key=`, `?sig=`, ...) masked."""
    return redacted(str(httpx.URL(url).copy_with(userinfo=b"")))


def endpoint(base_url: str, path: str) -> str:
    """The URL of `path` under `base_url`: appended to the base URL's path, any query it has
    (`https://host/v1?api-version=x`) kept after the path's own (Gemini's `?alt=sse`); its
    fragment (never sent) dropped."""
    parts = urlsplit(base_url)
    route, _, query = path.partition("?")
    joined = f"{query}&{parts.query}" if query and parts.query else query or parts.query
    return urlunsplit(
        parts._replace(path=parts.path.rstrip("/") + route, query=joined, fragment="")
    )


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

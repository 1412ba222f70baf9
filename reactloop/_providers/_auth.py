"""How a provider proves who it is: the key's header scheme (`AuthScheme`), a key that never
shows itself (`Secret`), what a channel masks in its messages (`Masks`), where a key comes
from (`resolve_key`), and a token asked of the user's callable for each request (`TokenSource`)."""

from __future__ import annotations

import copy
import enum
import inspect
import os
from collections.abc import Awaitable, Callable
from typing import assert_never

import anyio.to_thread

from reactloop._errors import AuthenticationError
from reactloop._redact import Credentials

TokenProvider = Callable[[], str | Awaitable[str]]
"""A callable returning a bearer token (sync or async), such as azure-identity's
`get_bearer_token_provider(credential, scope)`: asked once for every request."""


class AuthScheme(enum.Enum):
    """How a key travels: `Authorization: Bearer` (OpenAI and compatible hosts), `x-api-key`
    (Anthropic), `x-goog-api-key` (Gemini) or `api-key` (Azure OpenAI)."""

    BEARER = "bearer"
    X_API_KEY = "x-api-key"
    GOOG_API_KEY = "x-goog-api-key"
    API_KEY = "api-key"


class Secret:
    """An API key that never shows itself: its repr and str are masked."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def header(self, scheme: AuthScheme) -> dict[str, str]:
        """The request header carrying the key, built only when a request is sent."""
        match scheme:
            case AuthScheme.BEARER:
                return {"authorization": f"Bearer {self._value}"}
            case AuthScheme.X_API_KEY:
                return {"x-api-key": self._value}
            case AuthScheme.GOOG_API_KEY:
                return {"x-goog-api-key": self._value}
            case AuthScheme.API_KEY:
                return {"api-key": self._value}
            case _:
                assert_never(scheme)

    def redact(self, text: str) -> str:
        """`text` with every occurrence of the key masked."""
        return text.replace(self._value, "***") if self._value else text

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


class Masks:
    """What one channel keeps out of its messages: its key and its base URL's credentials
    (userinfo password, secret query parameters such as `?api-key=`), wherever they appear."""

    __slots__ = ("_credentials", "_secret", "_token")

    def __init__(self, secret: Secret | None, base_url: str, token: Secret | None = None) -> None:
        self._secret = secret
        self._credentials = Credentials(base_url)
        self._token = token

    def including(self, token: Secret) -> Masks:
        """These masks and one request's token (a `TokenSource`'s, new for each request)."""
        masks = copy.copy(self)
        masks._token = token
        return masks

    def redact(self, text: str) -> str:
        """`text` with the key, the request's token and the URL's credentials masked."""
        text = text if self._secret is None else self._secret.redact(text)
        text = text if self._token is None else self._token.redact(text)
        return self._credentials.redact(text)

    def __repr__(self) -> str:
        return "Masks('***')"


def resolve_key(explicit: str | None, env_var: str) -> Secret | None:
    """The explicit key, else the environment variable's, else None (`""` means no key)."""
    value = explicit if explicit is not None else os.environ.get(env_var)
    return Secret(value) if value else None


class TokenSource:
    """A bearer token asked of the user's `TokenProvider` for every request, never kept: an async
    provider is awaited, a sync one runs in a worker thread (it may block on the network) that a
    cancelled request abandons. A provider that fails, or answers no token, is an
    `AuthenticationError` and nothing is sent."""

    __slots__ = ("_is_async", "_provider", "name")

    def __init__(self, name: str, provider: TokenProvider) -> None:
        self.name = name  # the provider name its errors carry
        self._provider = provider
        method = type(provider).__call__  # an object whose __call__ is async counts as async
        self._is_async = any(map(inspect.iscoroutinefunction, (provider, method)))

    async def secret(self) -> Secret:
        """A fresh token from the provider, as a `Secret`."""
        try:
            if self._is_async:
                answer = self._provider()
            else:
                answer = await anyio.to_thread.run_sync(self._provider, abandon_on_cancel=True)
            token = await answer if inspect.isawaitable(answer) else answer
        except Exception as exc:
            raise AuthenticationError(
                f"{self.name} token provider failed: {type(exc).__name__}: {exc}"
                " (nothing was sent)",
                provider=self.name,
            ) from exc
        return self._checked(token)

    def _checked(self, token: object) -> Secret:
        if not isinstance(token, str) or not token.strip():
            kind = "a blank string" if isinstance(token, str) else type(token).__name__
            raise AuthenticationError(
                f"{self.name} token provider must return a non-empty string (a bearer token),"
                f" got {kind}: nothing was sent",
                provider=self.name,
            )
        return Secret(token)

    def __repr__(self) -> str:
        return f"TokenSource({self._provider!r})"

"""How a provider proves who it is: the key's header scheme (`AuthScheme`), a key that never
shows itself (`Secret`), what a channel masks in its messages (`Masks`), and where a key comes
from (`resolve_key`)."""

from __future__ import annotations

import enum
import os
from typing import assert_never

from reactloop._redact import Credentials


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

    __slots__ = ("_credentials", "_secret")

    def __init__(self, secret: Secret | None, base_url: str) -> None:
        self._secret = secret
        self._credentials = Credentials(base_url)

    def redact(self, text: str) -> str:
        """`text` with the key and the URL's credentials masked."""
        text = text if self._secret is None else self._secret.redact(text)
        return self._credentials.redact(text)

    def __repr__(self) -> str:
        return "Masks('***')"


def resolve_key(explicit: str | None, env_var: str) -> Secret | None:
    """The explicit key, else the environment variable's, else None (`""` means no key)."""
    value = explicit if explicit is not None else os.environ.get(env_var)
    return Secret(value) if value else None

"""Checking the options every HTTP provider shares, when the provider is constructed."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from reactloop._errors import ConfigurationError
from reactloop._redact import redacted
from reactloop._validate import optional_instance, optional_number, optional_text, text


def check_base_url(owner: str, url: object) -> str:
    """The server's base URL: an http:// or https:// URL."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        rule = "an http:// or https:// URL"
        shown = redacted(url) if isinstance(url, str) else url
        raise ConfigurationError.invalid(f"{owner}.base_url", shown, rule)
    return url


def _headers(owner: str, headers: object) -> None:
    if headers is None:
        return
    valid = isinstance(headers, Mapping) and all(
        isinstance(key, str) and isinstance(value, str) for key, value in headers.items()
    )
    if not valid:
        rule = "a mapping of header names to string values, or None"
        raise ConfigurationError.invalid(f"{owner}.extra_headers", headers, rule)


def check_http_options(
    owner: str,
    *,
    model: object,
    api_key: object,
    base_url: object,
    provider: object,
    idle_timeout: object,
    http_client: object,
    extra_headers: object,
) -> None:
    """Check the options of `OpenAIModel` and `AnthropicModel` that mean the same in both."""
    text(f"{owner}.model", model)
    optional_text(f"{owner}.api_key", api_key, blank=True)
    if base_url is not None:
        check_base_url(owner, base_url)
    text(f"{owner}.provider", provider)
    optional_number(f"{owner}.idle_timeout", idle_timeout)
    optional_instance(
        f"{owner}.http_client", http_client, httpx.AsyncClient, "an httpx.AsyncClient"
    )
    _headers(owner, extra_headers)

"""Checking the options every HTTP provider shares, when the provider is constructed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import orjson
from attrs import field, frozen

from reactloop._core import JsonObject
from reactloop._errors import ConfigurationError
from reactloop._redact import redacted
from reactloop._validate import fail, optional_instance, optional_number, optional_text, text


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


@frozen
class ExtraBody:
    """Fields a user adds to every request body of a provider (its `extra_body` option).

    They never override a field reactloop sets: the fields reactloop always owns are refused at
    construction (`check_extra_body`), and a request whose body already has one of them (a field
    reactloop sets only for some requests, such as `thinking` or `response_format`) is refused
    with a `ConfigurationError` naming the key, before anything is sent.
    """

    option: str  # "OpenAIModel.extra_body", for the error
    fields: Mapping[str, Any] = field(factory=dict)

    def apply(self, body: JsonObject) -> JsonObject:
        """`body` with the extra fields added (the same object when there are none)."""
        if not self.fields:
            return body
        for key in self.fields:
            if key in body:
                rule = f"free of the fields reactloop sets in this request ({key!r} is one)"
                raise ConfigurationError.invalid(self.option, dict(self.fields), rule)
        return {**body, **self.fields}


def check_extra_body(owner: str, extra_body: object, owned: frozenset[str]) -> ExtraBody:
    """The `extra_body` option: None, or a mapping of string keys to JSON values, none of them a
    field reactloop sets itself (`owned`; the ModelSettings or option that sets it is the way)."""
    option = f"{owner}.extra_body"
    if extra_body is None:
        return ExtraBody(option)
    if not isinstance(extra_body, Mapping) or not all(isinstance(k, str) for k in extra_body):
        fail(option, extra_body, "a mapping of field names to JSON values, or None")
    taken = sorted(key for key in extra_body if key in owned)
    if taken:
        names = ", ".join(map(repr, taken))
        fail(option, extra_body, f"free of the fields reactloop sets ({names}: use ModelSettings)")
    try:
        orjson.dumps(dict(extra_body))
    except TypeError:
        fail(option, extra_body, "a mapping of field names to JSON values, or None")
    return ExtraBody(option, dict(extra_body))

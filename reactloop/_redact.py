"""Credentials kept out of everything reactloop shows or stores: reprs, error messages, the
journal's stored errors, spans and the CLI.

One rule for URLs, libpq connection strings and free text: a URL's userinfo password, the value
of a query parameter whose name suggests a secret (password, api-key, token, sig, ...) and a libpq
`password=` value are replaced with `***`. `Credentials` also masks the secret values of one URL
wherever they appear, for text (a driver's message) that may quote them out of place.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"

_USERINFO = re.compile(r"(?P<lead>[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:'\"]*):(?P<pw>[^\s/?#'\"]*)@")
_PARAMETER = re.compile(r"(?P<lead>[?&;#](?P<name>[^=&;#\s'\"]+)=)(?P<value>[^&;#\s'\"]*)")
_SECRET_NAME = re.compile(r"pass|pwd|secret|token|key|sig|auth|credential|session", re.I)
_LIBPQ = re.compile(
    r"(?P<lead>(?<![\w-])[\w.-]*(?:password|passwd|pwd)\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*'?|[^\s'\"&;#]+)",
    re.I,
)
_SHORTEST_SECRET = 4  # shorter values are masked where they stand, not wherever they appear


def _userinfo(match: re.Match[str]) -> str:
    return f"{match['lead']}:{MASK}@" if match["pw"] else match[0]


def _parameter(match: re.Match[str]) -> str:
    if not match["value"] or _SECRET_NAME.search(match["name"]) is None:
        return match[0]
    return f"{match['lead']}{MASK}"


def _libpq(match: re.Match[str]) -> str:
    return match[0] if match["value"] == MASK else f"{match['lead']}{MASK}"


def redacted(text: str) -> str:
    """`text` (a URL, a libpq `key=value` string, or a message quoting either) with every
    credential in it masked: userinfo passwords, secret-named query parameters, `password=`."""
    if "=" not in text and "@" not in text:
        return text
    text = _USERINFO.sub(_userinfo, text)
    text = _PARAMETER.sub(_parameter, text)
    return _LIBPQ.sub(_libpq, text)


def _secret_values(url: str) -> list[str]:
    """The credential values in a URL or connection string, as written and percent-decoded."""
    found = [match["pw"] for match in _USERINFO.finditer(url)]
    found += [m["value"] for m in _PARAMETER.finditer(url) if _SECRET_NAME.search(m["name"])]
    found += [match["value"].strip("'") for match in _LIBPQ.finditer(url)]
    values = {value for text in found for value in (text, unquote(text))}
    return sorted((v for v in values if len(v) >= _SHORTEST_SECRET), key=len, reverse=True)


class Credentials:
    """The secrets of one URL (or libpq string): masks them in any text, such as a driver's
    message, even where they appear without their name. Never shows them itself."""

    __slots__ = ("_values",)

    def __init__(self, url: str) -> None:
        self._values = tuple(_secret_values(url))

    def redact(self, text: str) -> str:
        """`text` redacted (see `redacted`), with this URL's secret values masked anywhere."""
        for value in self._values:
            text = text.replace(value, MASK)
        return redacted(text)

    def __repr__(self) -> str:
        return f"Credentials(<{len(self._values)} not shown>)"

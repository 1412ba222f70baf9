"""A request body read as JSON, as browsers write it: `JSON.stringify` escapes a lone UTF-16
surrogate (a text cut in the middle of an emoji, say) as `\\ud83d`, which is valid JSON but not
valid Unicode, so orjson refuses it. Such a body is read with the standard library instead and
repaired by the library's one rule (adr/0022: each lone surrogate becomes U+FFFD), rather than
the whole turn being refused as not JSON."""

from __future__ import annotations

import json
from typing import Any

import orjson

from reactloop._unicode import repaired_value


def request_json(body: bytes) -> Any:
    """The JSON value of `body`; `orjson.JSONDecodeError` when it is not JSON at all."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            return repaired_value(json.loads(body))[0]
        except (ValueError, RecursionError):
            raise orjson.JSONDecodeError("the body is not JSON", "", 0) from None

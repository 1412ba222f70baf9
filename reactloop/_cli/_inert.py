"""Untrusted text made inert for a terminal. A run's text (the model's, a tool's, an id, an error)
is shown as written but can no longer act on the terminal: control characters (C0, DEL, C1, so
ESC and every CSI, OSC or DCS sequence), bidi overrides and isolates, line and paragraph
separators and lone surrogates are shown as visible escapes (`\\x1b`, `\\u202e`), never sent."""

from __future__ import annotations

import re

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_SEPARATORS = "\u2028\u2029"
_SURROGATES = "\ud800-\udfff"
_UNSAFE = _CONTROLS + _BIDI + _SEPARATORS + _SURROGATES

_IN_LINES = re.compile(f"[{_UNSAFE}]")
"""What is escaped where the view shows several lines: all but tab and newline."""

_IN_ONE_LINE = re.compile(f"[\t\n{_UNSAFE}]")
"""What is escaped on one line: tab and newline too."""

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str, *, lines: bool = False) -> str:
    """`text` safe to write to a terminal: every character that could move the cursor, clear or
    title the screen, write the clipboard or reorder what is shown becomes a visible escape.
    `lines=True` keeps newlines and tabs (a multi-line answer); else the text stays one line."""
    pattern = _IN_LINES if lines else _IN_ONE_LINE
    return pattern.sub(_escape, text)


_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_BIDI}{_SEPARATORS}]")


def inert_json(document: bytes) -> bytes:
    """A JSON document (as orjson writes it: C0 controls already escaped) with the characters a
    terminal would act on also written as `\\uXXXX` escapes: the same JSON value, safe to print."""
    text = document.decode("utf-8")
    escaped = _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    return escaped.encode("utf-8")

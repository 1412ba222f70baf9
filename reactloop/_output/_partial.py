"""Partial JSON: the value a structured answer holds so far, while its text streams in.

`PartialJson` is an incremental parser: each delta is scanned once (no re-parse of the whole
answer), and `feed` returns the new partial value when something new became visible, else
`UNCHANGED`. What is visible, so that every partial is *prefix-consistent* with the final value:

- objects and arrays as soon as they open (`{` shows `{}`); they only gain keys and items;
- a key only with its value, once the key's string is complete;
- numbers, `true`, `false` and `null` once complete (`12` may still become `123`): a number
  ends at the character after it, or at `finish()` for a bare top-level number;
- strings once complete; with `growing_strings=True`, a string value shows as soon as its
  opening quote arrives and grows with its text (keys never do);
- so every field of a partial has its final value, except the last open container or growing
  string on the path being written, which holds a prefix of it.

Duplicate keys keep the last value, as `orjson.loads` does (a partial may show the earlier one).
Partials share their completed parts with later partials and with the final value: read them,
do not mutate them. Invalid JSON raises `PartialJsonError` as soon as it is seen; `finish()` raises
it too when the answer ends before its value is complete. Scalars are decoded by orjson, so the
final value equals `orjson.loads` of the whole answer (same numbers, escapes and refusals).
"""

from __future__ import annotations

import codecs
import enum
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

import orjson

from reactloop._errors import PartialJsonError
from reactloop._validate import boolean, checked_arguments


class Unchanged(enum.Enum):
    """The type of `UNCHANGED`: nothing new became visible with the last delta."""

    UNCHANGED = "unchanged"


UNCHANGED: Final = Unchanged.UNCHANGED
MAX_DEPTH: Final = 1024
"""Deepest nesting accepted, as orjson's own limit."""

_WHITESPACE = " \t\n\r"
_SKIP = re.compile(r"[ \t\n\r]*")
_PLAIN = re.compile(r'[^"\\]*')
_NUMBER = re.compile(r"[-+0-9.eE]*")
_LITERALS: Final = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}
_FENCE_OPEN = re.compile(r"```[^\n`]*\n")
_FENCE = "```"
_VALUE_STARTS = '{["-0123456789'
_ABSENT: Final = object()

State = Callable[[str, int], "int | None"]
"""A parser state: scans the buffer from an offset; the offset reached, or None to wait for
more text."""


class _Frame:
    """An open object or array, and the key whose value is being read (objects only)."""

    __slots__ = ("container", "key")

    def __init__(self, container: dict[str, object] | list[object]) -> None:
        self.container = container
        self.key = ""


@checked_arguments
class PartialJson:
    """An incremental JSON parser whose `feed` returns each new partial value (module docstring).

    `fences=True` reads an answer as `strip_fences` does, for prompted models: the value may sit
    in a Markdown code fence (```json ... ```, the closing fence optional), after lines of prose
    (skipped until a line opens a fence; prose that starts like a JSON value is read as JSON),
    and the lines after the closing fence are ignored.
    """

    def __init__(self, *, growing_strings: bool = False, fences: bool = False) -> None:
        self.growing_strings = boolean("PartialJson.growing_strings", growing_strings)
        self.fences = boolean("PartialJson.fences", fences)
        self._buf = ""
        self._pos = 0
        self._dropped = 0
        self._stack: list[_Frame] = []
        self._state: State = self._at_start
        self._in_key = False
        self._text = ""
        self._segment = 0
        self._top: object = _ABSENT
        self._fenced = False
        self._changed = False
        self._ending = False
        self._error: PartialJsonError | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def feed(self, delta: str | bytes) -> object | Unchanged:
        """Read the next piece of the answer; the new partial value, or `UNCHANGED`.

        Bytes are decoded as UTF-8, so a delta may end inside a multi-byte character.
        """
        if self._error is not None:
            raise self._error
        if isinstance(delta, bytes):
            delta = self._decode(delta, final=False)
        self._buf = self._buf[self._pos :] + delta
        self._dropped += self._pos
        self._segment -= self._pos
        self._pos = 0
        self._advance()
        if not self._changed:
            return UNCHANGED
        self._changed = False
        return self._snapshot()

    def finish(self) -> object:
        """The final value, once the whole answer was fed; `PartialJsonError` if incomplete."""
        if self._error is not None:
            raise self._error
        tail = self._decode(b"", final=True)
        self._ending = True
        self.feed(tail)
        if self._state not in (self._at_end, self._after_fence, self._ignoring):
            raise self._fail(self._dropped + len(self._buf), "the answer ended early", "")
        return self._top

    @property
    def value(self) -> object | Unchanged:
        """The current partial value (`UNCHANGED` while nothing is visible yet)."""
        return self._snapshot()

    def _decode(self, data: bytes, *, final: bool) -> str:
        try:
            return self._decoder.decode(data, final)
        except UnicodeDecodeError as error:
            raise self._fail(
                self._dropped + len(self._buf), "text must be UTF-8", repr(data)
            ) from error

    def _fail(self, offset: int, rule: str, got: str) -> PartialJsonError:
        self._error = PartialJsonError(offset, rule, got)
        return self._error

    def _bad(self, buf: str, pos: int, rule: str) -> PartialJsonError:
        return self._fail(self._dropped + pos, rule, buf[pos : pos + 20])

    def _advance(self) -> None:
        buf = self._buf
        pos = self._pos
        end = len(buf)
        while pos < end:
            reached = self._state(buf, pos)
            if reached is None:
                break
            pos = reached
        self._pos = pos

    # --- the visible value ---------------------------------------------------------------------

    def _snapshot(self) -> object | Unchanged:
        value: object = _ABSENT
        if self.growing_strings and self._state == self._in_string and not self._in_key:
            value = self._text
        for frame in reversed(self._stack):
            container = frame.container.copy()
            if value is not _ABSENT:
                if isinstance(container, list):
                    container.append(value)
                else:
                    container[frame.key] = value
            value = container
        if not self._stack and self._top is not _ABSENT:
            value = self._top
        return UNCHANGED if value is _ABSENT else value

    def _put(self, value: object, *, shown: bool = True) -> None:
        """A value is complete: into its container (or the top), then what may follow it."""
        self._changed = self._changed or shown
        if not self._stack:
            self._top = value
            self._state = self._at_end
            return
        frame = self._stack[-1]
        if isinstance(frame.container, list):
            frame.container.append(value)
        else:
            frame.container[frame.key] = value
        self._state = self._at_comma

    # --- states between tokens -----------------------------------------------------------------

    def _at_start(self, buf: str, pos: int) -> int | None:
        char = buf[pos]
        if char in _WHITESPACE:
            return _end(_SKIP, buf, pos)
        if not self.fences or char in _VALUE_STARTS:
            self._state = self._at_value
            return pos
        if char == "`":
            return self._opening_fence(buf, pos)
        if char in _LITERALS:
            return self._literal_or_prose(buf, pos)
        self._state = self._in_prose
        return pos

    def _literal_or_prose(self, buf: str, pos: int) -> int | None:
        """Fences on: an answer starting `t`, `f` or `n` is JSON if a literal, else prose."""
        word = _LITERALS[buf[pos]][0]
        if buf.startswith(word, pos):
            self._state = self._at_value
        elif len(buf) - pos < len(word) and word.startswith(buf[pos:]):
            return None
        else:
            self._state = self._in_prose
        return pos

    def _opening_fence(self, buf: str, pos: int) -> int | None:
        """A line starting with ```: a fence opens (the JSON follows), or it is prose."""
        match = _FENCE_OPEN.match(buf, pos)
        if match is not None:
            self._fenced = True
            self._state = self._at_value
            return match.end()
        rest = buf[pos:]
        if "\n" not in rest and (rest.startswith(_FENCE) or _FENCE.startswith(rest)):
            return None
        self._state = self._in_prose
        return pos

    def _in_prose(self, buf: str, pos: int) -> int:
        """Fences on: text before the fence, skipped a line at a time."""
        newline = buf.find("\n", pos)
        if newline < 0:
            return len(buf)
        self._state = self._at_line
        return newline + 1

    def _at_line(self, buf: str, pos: int) -> int:
        """The start of a line of prose: a fence may open here."""
        char = buf[pos]
        if char in " \t\n":
            return pos + 1
        self._state = self._opening_fence if char == "`" else self._in_prose
        return pos

    def _at_value(self, buf: str, pos: int) -> int | None:
        char = buf[pos]
        if char in _WHITESPACE:
            return _end(_SKIP, buf, pos)
        if char == '"':
            return self._open_string(pos, key=False)
        if char in "{[":
            return self._open(buf, pos)
        if char == "-" or "0" <= char <= "9":
            return self._number(buf, pos)
        if char in _LITERALS:
            return self._literal(buf, pos)
        raise self._bad(buf, pos, 'a value starts with {, [, ", a digit, -, true, false or null')

    def _at_first_item(self, buf: str, pos: int) -> int | None:
        if buf[pos] == "]":
            return self._close(pos)
        return self._at_value(buf, pos)

    def _at_key(self, buf: str, pos: int) -> int | None:
        char = buf[pos]
        if char in _WHITESPACE:
            return _end(_SKIP, buf, pos)
        if char != '"':
            raise self._bad(buf, pos, 'an object key is a string in double quotes (")')
        return self._open_string(pos, key=True)

    def _at_first_key(self, buf: str, pos: int) -> int | None:
        if buf[pos] == "}":
            return self._close(pos)
        return self._at_key(buf, pos)

    def _at_colon(self, buf: str, pos: int) -> int | None:
        char = buf[pos]
        if char in _WHITESPACE:
            return _end(_SKIP, buf, pos)
        if char != ":":
            raise self._bad(buf, pos, "a colon (:) follows an object key")
        self._state = self._at_value
        return pos + 1

    def _at_comma(self, buf: str, pos: int) -> int | None:
        char = buf[pos]
        if char in _WHITESPACE:
            return _end(_SKIP, buf, pos)
        frame = self._stack[-1]
        in_list = isinstance(frame.container, list)
        closer = "]" if in_list else "}"
        if char == ",":
            self._state = self._at_value if in_list else self._at_key
            return pos + 1
        if char == closer:
            return self._close(pos)
        raise self._bad(buf, pos, f"a comma (,) or {closer} follows a value in an {_kind(frame)}")

    def _at_end(self, buf: str, pos: int) -> int | None:
        if buf[pos] in _WHITESPACE:
            return _end(_SKIP, buf, pos)
        if self._fenced and buf[pos] == "`":
            self._state = self._at_closing_fence
            return pos
        raise self._bad(buf, pos, "nothing but whitespace follows the JSON value")

    def _at_closing_fence(self, buf: str, pos: int) -> int | None:
        rest = buf[pos : pos + 3]
        if rest == _FENCE:
            self._state = self._after_fence
            return pos + 3
        if _FENCE.startswith(rest):
            return None
        raise self._bad(buf, pos, "only a closing ``` follows the fenced JSON value")

    def _after_fence(self, buf: str, pos: int) -> int:
        """The rest of the closing fence's line; any text on the lines after it is ignored."""
        char = buf[pos]
        if char == "\n":
            self._state = self._ignoring
            return pos + 1
        if char in " \t\r":
            return pos + 1
        raise self._bad(buf, pos, "a closing ``` ends its line")

    def _ignoring(self, buf: str, pos: int) -> int:
        return len(buf)

    # --- containers ----------------------------------------------------------------------------

    def _open(self, buf: str, pos: int) -> int:
        if len(self._stack) >= MAX_DEPTH:
            raise self._bad(buf, pos, f"objects and arrays nest at most {MAX_DEPTH} deep")
        is_list = buf[pos] == "["
        self._stack.append(_Frame([] if is_list else {}))
        self._state = self._at_first_item if is_list else self._at_first_key
        self._changed = True
        return pos + 1

    def _close(self, pos: int) -> int:
        frame = self._stack.pop()
        self._put(frame.container, shown=False)
        return pos + 1

    # --- scalars -------------------------------------------------------------------------------

    def _number(self, buf: str, pos: int) -> int | None:
        end = _end(_NUMBER, buf, pos)
        if end == len(buf) and not self._ending:
            return None  # the number may go on in the next delta
        try:
            number = orjson.loads(buf[pos:end])
        except orjson.JSONDecodeError as error:
            raise self._bad(buf, pos, f"not a JSON number ({error.msg})") from error
        self._put(number)
        return end

    def _literal(self, buf: str, pos: int) -> int | None:
        word, value = _LITERALS[buf[pos]]
        if buf.startswith(word, pos):
            self._put(value)
            return pos + len(word)
        if len(buf) - pos < len(word) and word.startswith(buf[pos:]):
            return None
        raise self._bad(buf, pos, f"expected {word}")

    def _open_string(self, pos: int, *, key: bool) -> int:
        self._in_key = key
        self._text = ""
        self._segment = pos + 1
        self._state = self._in_string
        if self.growing_strings and not key:
            self._changed = True
        return pos + 1

    def _in_string(self, buf: str, pos: int) -> int | None:
        """Scan a string up to its closing quote; an escape cut by the delta's end waits."""
        start = pos
        end = len(buf)
        while True:
            pos = _end(_PLAIN, buf, pos)
            if pos == end:
                break
            if buf[pos] == '"':
                self._take_segment(buf, pos)
                self._end_string()
                return pos + 1
            skip = _escape_length(buf, pos)
            if skip is None:
                break
            pos += skip
        self._take_segment(buf, pos)
        return None if pos == start else pos

    def _take_segment(self, buf: str, pos: int) -> None:
        """Decode the string's text scanned since the last segment (it ends on no escape's half)."""
        start = self._segment
        if pos == start:
            return
        try:
            piece = orjson.loads(f'"{buf[start:pos]}"')
        except orjson.JSONDecodeError as error:
            raise self._bad(buf, start, f"not a JSON string ({error.msg})") from error
        self._text += piece
        self._segment = pos
        if self.growing_strings and not self._in_key:
            self._changed = True

    def _end_string(self) -> None:
        if self._in_key:
            self._stack[-1].key = self._text
            self._state = self._at_colon
        else:
            self._put(self._text, shown=not self.growing_strings)


def _end(pattern: re.Pattern[str], buf: str, pos: int) -> int:
    """Where `pattern` (which matches the empty string too) stops matching from `pos`."""
    match = pattern.match(buf, pos)
    return pos if match is None else match.end()


def _escape_length(buf: str, pos: int) -> int | None:
    """How many characters the escape at `pos` takes (a surrogate pair's two escapes as one),
    or None when the buffer ends before it does."""
    end = len(buf)
    if pos + 1 >= end:
        return None
    if buf[pos + 1] != "u":
        return 2
    if pos + 6 > end:
        return None
    if buf[pos + 2] not in "dD" or buf[pos + 3] not in "89abAB":
        return 6
    if pos + 8 > end:
        return None
    if buf[pos + 6 : pos + 8] != "\\u":
        return 6
    return 12 if pos + 12 <= end else None


def _kind(frame: _Frame) -> str:
    return "array" if isinstance(frame.container, list) else "object"


def iter_partials(
    deltas: Iterable[str | bytes], *, growing_strings: bool = False, fences: bool = False
) -> Iterator[object]:
    """Each new partial value as `deltas` arrive, then the final value (`PartialJson`)."""
    parser = PartialJson(growing_strings=growing_strings, fences=fences)
    for delta in deltas:
        partial = parser.feed(delta)
        if partial is not UNCHANGED:
            yield partial
    yield parser.finish()


_FENCED = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)(?:```[ \t\r]*$|\Z)", re.MULTILINE | re.DOTALL)


def strip_fences(text: str) -> str:
    """The JSON in a model's answer: the content of its first Markdown code fence (```json ...
    ```, the closing fence optional), else the answer itself; surrounding whitespace removed.

    A fence opens only at the start of a line, so a ``` inside a JSON string (where no raw line
    break can come before it) is never taken for one.
    """
    match = _FENCED.search(text)
    return (match.group(1) if match is not None else text).strip()

"""An incremental Server-Sent Events decoder: bytes in any split, whole events out.

It follows the WHATWG event-stream rules: lines end in CRLF, LF or CR (a CR at the end of a chunk
waits for the next one), UTF-8 may be split anywhere, `:` lines are comments, a blank line
dispatches the event. An event still open when the stream ends is dropped, as the spec says, so
a provider must never depend on the last event of a stream arriving.
"""

from __future__ import annotations

import codecs
import re

from attrs import frozen

_LINE_END = re.compile(r"\r\n|\r|\n")
_BOM = "\ufeff"


@frozen
class SseEvent:
    """One dispatched event: its type (`message` when none was named), data and last id."""

    event: str
    data: str
    id: str | None = None


class SseDecoder:
    """Feed it chunks of bytes; it returns the events each chunk completes."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._started = False
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Decode one chunk; return the events whose blank line arrived with it."""
        text = self._utf8.decode(chunk)
        if not self._started and text:
            self._started = True
            text = text.removeprefix(_BOM)
        return self._lines(self._pending + text)

    def close(self) -> list[SseEvent]:
        """End of stream: finish the last line; an event without its blank line is dropped."""
        text = self._pending + self._utf8.decode(b"", final=True)
        self._pending = ""
        events = self._lines(text + "\n") if text else []
        self._event, self._data = "", []
        return events

    def _lines(self, text: str) -> list[SseEvent]:
        events: list[SseEvent] = []
        start = 0
        for match in _LINE_END.finditer(text):
            if match.group() == "\r" and match.end() == len(text):
                break  # a CR at the very end may be the first half of a CRLF
            event = self._line(text[start : match.start()])
            if event is not None:
                events.append(event)
            start = match.end()
        self._pending = text[start:]
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        return None

    def _dispatch(self) -> SseEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return SseEvent(event or "message", "\n".join(data), self._last_id)

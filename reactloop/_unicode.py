"""One rule for text that is not valid Unicode, and one for identifiers (adr/0022).

Text a run carries (user input, history, instructions, model text, tool and MCP results) may hold
lone surrogates, e.g. a file name that is not UTF-8 decoded with `os.fsdecode`. No JSON encoder, no
provider and no store can take them, so such text is repaired where it enters the run: each lone
surrogate becomes U+FFFD, and the run says so (a `RepairNote`, a warning, and for a tool result a
line the model reads). Identifiers a caller chooses (run, session, user and worker ids) are never
changed: one that breaks `ID_RULE` is refused with a `ConfigurationError`, on every store alike.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from enum import Enum
from operator import attrgetter
from typing import Any, TypeVar

import attrs
import orjson

from reactloop._validate import fail

logger = logging.getLogger("reactloop")
R = TypeVar("R", bound=attrs.AttrsInstance)

REPLACEMENT = "\ufffd"
MAX_ID_LENGTH = 256
"""Ids are at most this many characters: 1 KB of UTF-8, well inside PostgreSQL's index entry cap."""
ID_RULE = (
    f"an id of 1 to {MAX_ID_LENGTH} characters of valid Unicode, not all whitespace, without "
    "control characters (no NUL, tab or newline) or lone surrogates"
)
_NOT_IN_IDS = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def is_valid(text: str) -> bool:
    """Whether `text` is valid Unicode (holds no surrogate code point, so it encodes as UTF-8)."""
    return text.isascii() or _SURROGATE.search(text) is None


def repaired(text: str) -> tuple[str, int]:
    """`text` with each lone surrogate replaced by U+FFFD (a pair of surrogates becomes the
    character it encodes), and how many characters were replaced."""
    if is_valid(text):
        return text, 0
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count(REPLACEMENT) - text.count(REPLACEMENT)


def repaired_value(value: Any) -> tuple[Any, int]:
    """A JSON-like value (dicts, lists, tuples, strings, keys too) with its text repaired, and
    how many characters were replaced in all."""
    if isinstance(value, str):
        return repaired(value)
    if isinstance(value, dict):
        total, fixed = 0, {}
        for key, item in value.items():
            new_key, count = repaired_value(key)
            fixed[new_key], more = repaired_value(item)
            total += count + more
        return fixed, total
    if isinstance(value, list | tuple):
        pairs = [repaired_value(item) for item in value]
        return type(value)(item for item, _ in pairs), sum(count for _, count in pairs)
    return value, 0


_WALKED: dict[type, tuple[tuple[str, str], ...]] = {}
"""Per attrs class, the (name, init name) of the fields the repair walks (found once)."""
_PLAIN = (int, float, bool, type(None), bytes)  # bytes: a part's content, never text


_SKIPPED: set[type] = set(_PLAIN)
"""Types whose values never hold text the repair walks: plain values and `holds_no_text` classes."""
_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
"""Per attrs class, one call that reads all its walked fields at once (see `_is_clean`)."""


def holds_no_text(cls: type) -> type:
    """Mark an attrs class whose fields never hold text (counts, amounts): the repair skips it
    whole instead of walking its fields on every record that holds one."""
    _WALKED[cls] = ()
    _SKIPPED.add(cls)
    return cls


def _walked(cls: type) -> tuple[tuple[str, str], ...]:
    found = _WALKED.get(cls)
    if found is None:
        found = tuple(
            (field.name, field.alias or field.name)
            for field in attrs.fields(cls)
            if field.init and field.eq  # e.g. a tool result's sub-run: repaired in its run
        )
        _WALKED[cls] = found
    return found


def _getter(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    names = [name for name, _ in _walked(cls)]
    if len(names) > 1:
        found: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
    else:
        read = attrgetter(*names) if names else None
        found = (lambda _: ()) if read is None else (lambda record: (read(record),))
    _GETTERS[cls] = found
    return found


def _is_clean(record: Any) -> bool:
    """Whether the repair would change nothing in `record`: the common case, checked without a
    call per field (ASCII text and plain values inline, records and tuples in depth)."""
    getter = _GETTERS.get(type(record)) or _getter(type(record))
    for value in getter(record):
        kind = type(value)
        if kind is str:
            if not (value.isascii() or _SURROGATE.search(value) is None):
                return False
        elif kind in _SKIPPED:
            continue
        elif not (_is_clean(value) if kind in _GETTERS else _is_clean_value(value, kind)):
            return False
    return True


def _is_clean_value(value: Any, kind: type) -> bool:
    """`_is_clean` for a field that is not plain: a tuple, a record, a str subclass, or a value
    the repair leaves alone (dicts, lists: the walk does not enter them)."""
    if kind is tuple:
        for item in value:
            item_kind = type(item)
            clean = _is_clean(item) if item_kind in _GETTERS else _is_clean_value(item, item_kind)
            if not clean:
                return False
        return True
    if kind is str or isinstance(value, str):
        if isinstance(value, Enum):  # a member's value is the library's text, not the run's
            _SKIPPED.add(kind)
        return is_valid(value)
    if kind in _SKIPPED:
        return True
    return _is_clean(value) if _is_record(kind) else True


def repaired_record(record: R) -> tuple[R, int]:
    """A frozen attrs record (a message, a response, a tool result) with the text of its fields,
    and of the records it holds, repaired; and how many characters were replaced in all."""
    return (record, 0) if _is_clean(record) else walked_record(record)


def walked_record(record: R) -> tuple[R, int]:
    """`repaired_record` without the fast check first: every field walked (the slow path)."""
    changes: dict[str, Any] = {}
    total = 0
    for name, alias in _walked(type(record)):
        fixed, count = _repaired_field(getattr(record, name))
        if count:
            changes[alias] = fixed
            total += count
    return (attrs.evolve(record, **changes) if changes else record), total  # type: ignore[misc]


def _is_record(kind: type) -> bool:
    return kind in _WALKED or attrs.has(kind)


def _repaired_field(value: Any) -> tuple[Any, int]:
    kind = type(value)
    if kind is str:
        return (value, 0) if value.isascii() else repaired(value)
    if kind in _PLAIN or (kind is tuple and not value):  # () : a result's parts, most often
        return value, 0
    if isinstance(value, str):
        return repaired(value)
    if _is_record(kind):
        return repaired_record(value)
    if isinstance(value, tuple) and any(_is_record(type(item)) for item in value):
        pairs = [_repaired_field(item) for item in value]
        return tuple(item for item, _ in pairs), sum(count for _, count in pairs)
    return value, 0


def note(count: int) -> str:
    """The line a repaired tool result ends with, so the model knows the text was changed."""
    what = "character that was" if count == 1 else "characters that were"
    return (
        f"\n[reactloop: {count} {what} not valid Unicode (lone surrogates, e.g. from a file "
        "name that is not UTF-8) replaced by U+FFFD '\ufffd': a name shown here may differ from "
        "the real one]"
    )


def json_text(value: Any, *, default: Callable[[Any], Any] | None = None, option: int = 0) -> str:
    """`value` as JSON text; text in it that is not valid Unicode is kept as it is (orjson
    refuses it, the standard library writes it), so that the run repairs and notes it where the
    text enters (a tool result, a call's arguments)."""
    try:
        return orjson.dumps(value, default=default, option=option).decode()
    except orjson.JSONEncodeError as exc:
        if "surrogates" not in str(exc):
            raise
    return json.dumps(value, default=default, ensure_ascii=False, separators=(",", ":"))


def dumps(
    value: Any, *, where: str, option: int = 0, default: Callable[[Any], Any] | None = None
) -> bytes:
    """`orjson.dumps`, but text that is not valid Unicode is repaired (and logged, naming
    `where`) instead of raising; any other failure raises as orjson's does."""
    try:
        return orjson.dumps(value, default=default, option=option)
    except orjson.JSONEncodeError as exc:
        if "surrogates" not in str(exc):
            raise
    fixed, count = repaired_value(value)
    repair = None if default is None else _repairing(default)
    logger.warning("%s: replaced %d lone surrogate(s) by U+FFFD", where, count)
    return orjson.dumps(fixed, default=repair, option=option)


def _repairing(default: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def repaired_default(value: Any) -> Any:
        return repaired_value(default(value))[0]

    return repaired_default


def identifier(option: str, value: object) -> str:
    """A caller's id, unchanged, if it keeps `ID_RULE`; a `ConfigurationError` otherwise."""
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= MAX_ID_LENGTH
        or value.isspace()
        or _NOT_IN_IDS.search(value) is not None
    ):
        fail(option, value, ID_RULE)
    return value


def optional_identifier(option: str, value: object) -> str | None:
    """None, or an id (see `identifier`)."""
    return None if value is None else identifier(option, value)


def checked_ids(**ids: object) -> None:
    """Refuse any given id (None: not given) that breaks `ID_RULE`, naming its option: what
    every store checks first, so all of them accept and refuse the same ids."""
    for option, value in ids.items():
        optional_identifier(option, value)

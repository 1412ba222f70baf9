"""Task groups wrap errors in exception groups; a lone error should escape as itself."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn


@contextmanager
def unwrap_single_error() -> Iterator[None]:
    """Let a lone error escape task groups as itself: not in a (nested) group, and unchanged."""
    try:
        yield
    except BaseExceptionGroup as group:
        lone = _lone_error(group)
        if lone is None:
            raise
        reraise(lone)


def _lone_error(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        if len(error.exceptions) != 1:
            return None if error is group else error
        error = error.exceptions[0]
    return error


def reraise(error: BaseException) -> NoReturn:
    """Raise `error` keeping its own cause and context (raising here would chain the group)."""
    cause, context, suppress = error.__cause__, error.__context__, error.__suppress_context__
    try:
        raise error
    finally:
        error.__cause__, error.__context__ = cause, context
        error.__suppress_context__ = suppress

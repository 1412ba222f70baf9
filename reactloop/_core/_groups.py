"""Task groups wrap errors in exception groups; a lone error should escape as itself."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import NoReturn


class _Unwrapping:
    """The context manager `unwrap_single_error` gives: stateless, so one serves every block (a
    class, not a generator: entered once per run, for a fraction of the cost)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: BaseException | None, traceback: object) -> None:
        lone = _lone_error(error) if isinstance(error, BaseExceptionGroup) else None
        if lone is not None:
            reraise(lone)


_UNWRAPPING = _Unwrapping()


def unwrap_single_error() -> AbstractContextManager[None]:
    """Let a lone error escape task groups as itself: not in a (nested) group, and unchanged."""
    return _UNWRAPPING


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

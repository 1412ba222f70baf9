"""A limit on concurrent runs: at most `max_runs` at once, waiting at most `max_wait` for a slot."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.lowlevel import RunVar

from reactloop._errors import RunLimitError
from reactloop._validate import checked_arguments, integer, optional_number


def _check_settings(max_runs: int, max_wait: float | None) -> None:
    integer("RunLimiter.max_runs", max_runs)
    optional_number("RunLimiter.max_wait", max_wait, inclusive=True)


@checked_arguments
class RunLimiter:
    """At most `max_runs` runs at once; a run waits for a slot, for at most `max_wait` seconds.

    One limiter is shared by the runs of a loop, or by several loops when passed to each. It may
    be created outside any event loop: the underlying `anyio.CapacityLimiter` is made lazily, one
    per running event loop (so the limit counts the runs of one event loop, whatever its backend).
    A run that waits longer than `max_wait` gets a `RunLimitError`; `max_wait=None` waits as
    long as it takes and `max_wait=0` never waits.
    """

    def __init__(self, max_runs: int, *, max_wait: float | None = None) -> None:
        _check_settings(max_runs, max_wait)
        self.max_runs = max_runs
        self.max_wait = max_wait
        self._limiters: RunVar[anyio.CapacityLimiter] = RunVar(f"RunLimiter-{id(self):x}")

    def __repr__(self) -> str:
        return f"RunLimiter(max_runs={self.max_runs!r}, max_wait={self.max_wait!r})"

    def _limiter(self) -> anyio.CapacityLimiter:
        limiter = self._limiters.get(None)
        if limiter is None:
            limiter = anyio.CapacityLimiter(self.max_runs)
            self._limiters.set(limiter)
        return limiter

    @property
    def running(self) -> int:
        """Runs holding a slot in the current event loop."""
        return self._limiter().statistics().borrowed_tokens

    @property
    def waiting(self) -> int:
        """Runs waiting for a slot in the current event loop."""
        return self._limiter().statistics().tasks_waiting

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the block; raises `RunLimitError` when none frees up in time."""
        limiter = self._limiter()
        borrower = object()  # one per slot, so one task may hold several (nested runs)
        await self._acquire(limiter, borrower)
        try:
            yield
        finally:
            limiter.release_on_behalf_of(borrower)

    async def _acquire(self, limiter: anyio.CapacityLimiter, borrower: object) -> None:
        try:
            limiter.acquire_on_behalf_of_nowait(borrower)
            return
        except anyio.WouldBlock:
            pass
        if self.max_wait is None:
            await limiter.acquire_on_behalf_of(borrower)
            return
        try:
            with anyio.fail_after(self.max_wait):
                await limiter.acquire_on_behalf_of(borrower)
        except TimeoutError:
            raise RunLimitError(self.max_runs, self.max_wait) from None

"""One conformance check and what it runs on: `ConformanceCheck` (a named async callable taking
a harness), `ConformanceError` (the check, what was expected, what came), `CheckSkipped` (a
`unittest.SkipTest`, which pytest reports as a skip, so no pytest import is needed here), and
`Session`: the kit's server and the model aimed at it, with the calls a check makes."""

from __future__ import annotations

import enum
import unittest
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager

import anyio
import attrs
from attrs import frozen

from reactloop._core import Model, ModelDelta, ModelRequest, ModelResponse
from reactloop._errors import ReactLoopError, show
from reactloop._kit._harness import ProviderHarness, check_harness
from reactloop._kit._server import WireReply, WireRequest, WireServer

HANG_GUARD = 10.0
"""Seconds any one call (or a cancelled call's ending) may take before the check reports a hang:
a guard against waiting forever, far above what a loopback call takes, never a timing check."""

IDLE_TIMEOUT = 30.0
"""The idle timeout of the model every check but the stalled-stream one builds."""


def differing(path: str, expected: object, got: object) -> list[tuple[str, object, object]]:
    """The fields (dotted paths) where two values of one attrs class differ, nested attrs
    values followed down; empty for values of other kinds or classes (a tuple of calls in
    another order reads best whole)."""
    kind = type(expected)
    if kind is not type(got) or not attrs.has(kind):
        return []
    found: list[tuple[str, object, object]] = []
    for field in attrs.fields(kind):
        mine, theirs = getattr(expected, field.name), getattr(got, field.name)
        if mine != theirs:
            name = f"{path}{field.name}"
            found += differing(f"{name}.", mine, theirs) or [(name, mine, theirs)]
    return found


class Mode(enum.Enum):
    """How a check calls the model: `request` (whole) or `stream`."""

    REQUEST = "request"
    STREAM = "stream"


@frozen
class ConformanceFailure:
    """One failed expectation: the check, the provider, what was expected and what came."""

    check: str
    provider: str
    expected: str
    got: str

    def __str__(self) -> str:
        return f"{self.check} ({self.provider}): expected {self.expected}; got {self.got}"


class ConformanceError(ReactLoopError, AssertionError):
    """A provider failed conformance checks; `failures` lists each (the check, what was
    expected, what came). An `AssertionError` too, so a test runner shows it as a failure."""

    def __init__(self, failures: Sequence[ConformanceFailure]) -> None:
        self.failures = tuple(failures)
        count = len(self.failures)
        lines = "\n".join(f"- {failure}" for failure in self.failures)
        plural = "" if count == 1 else "s"
        super().__init__(f"{count} conformance failure{plural}:\n{lines}")


class CheckSkipped(unittest.SkipTest):
    """A check that does not apply to the provider (its harness declares the feature absent);
    pytest reports it as skipped, `check_provider` lists it."""


Check = Callable[["Session"], Awaitable[None]]


@frozen
class ConformanceCheck:
    """A named check: `await check(harness)` runs it against the provider the harness drives
    (raising `ConformanceError` on failure, `CheckSkipped` when it does not apply); `str(check)`
    is its name (pytest ids: `ids=str`) and `description` says what it checks."""

    name: str
    description: str
    run: Check
    needs: str | None = None  # the Features flag the check needs, when it needs one
    idle_timeout: float = IDLE_TIMEOUT

    def __str__(self) -> str:
        return self.name

    def applies_to(self, harness: ProviderHarness) -> bool:
        """Whether the check applies to the provider: its harness declares what it needs (to
        leave the others out of a parametrization instead of skipping them)."""
        return self.needs is None or bool(getattr(harness.features, self.needs))

    async def __call__(self, harness: ProviderHarness) -> None:
        """Run the check against the provider `harness` drives."""
        check_harness(harness)
        if not self.applies_to(harness):
            why = f"{harness.name} does not declare it (Features.{self.needs} is False)"
            raise CheckSkipped(f"{self.name} skipped: {why}")
        failed: Exception | None = None
        async with serving(self, harness) as session:
            try:
                await self.run(session)
            except Exception as error:
                failed = error  # raised after the server stops, not inside its task group
        if failed is not None:
            raise failed


@asynccontextmanager
async def serving(check: ConformanceCheck, harness: ProviderHarness) -> AsyncIterator[Session]:
    """The kit's server and the harness's model aimed at it (closed afterwards)."""
    async with WireServer.running() as server:
        model = harness.build(server.url, idle_timeout=check.idle_timeout)
        try:
            yield Session(check.name, harness, server, model)
        finally:
            close = getattr(model, "aclose", None)
            if callable(close):
                with anyio.fail_after(HANG_GUARD):
                    await close()


@frozen
class Answered:
    """What one call gave: the response and, for a streamed call, the deltas in order."""

    response: ModelResponse
    deltas: tuple[ModelDelta, ...]


class Session:
    """A check at work: its server, the model aimed at it, and the calls and failures."""

    def __init__(
        self, check: str, harness: ProviderHarness, server: WireServer, model: Model
    ) -> None:
        self.check = check
        self.harness = harness
        self.server = server
        self.model = model

    def failure(self, expected: str, got: object) -> ConformanceError:
        """The error saying this check expected `expected` and got `got` (text as it is, any
        other value shown by its repr)."""
        shown = got if isinstance(got, str) else show(got)
        return ConformanceError(
            [ConformanceFailure(self.check, self.harness.name, expected, shown)]
        )

    def expect(self, what: str, expected: object, got: object) -> None:
        """Fail unless `got == expected`; `what` names the value compared. Two values of one
        attrs class are shown by the fields that differ (`usage.input_tokens 1234`), which a
        whole repr cut short could hide."""
        if got == expected:
            return
        found = differing("", expected, got)
        if not found:
            raise self.failure(f"{what} {show(expected)}", got)
        wanted = ", ".join(f"{name} {show(value)}" for name, value, _ in found)
        came = ", ".join(f"{name} {show(value)}" for name, _, value in found)
        raise self.failure(f"{what}: {wanted}", came)

    def last_request(self) -> WireRequest:
        """The last request the server received (a failure when there was none)."""
        if not self.server.requests:
            raise self.failure("a request at the server", "no request arrived")
        return self.server.requests[-1]

    async def call(self, request: ModelRequest, mode: Mode, reply: WireReply) -> Answered:
        """Serve `reply` and call the model once in `mode`; a failure when it raises or hangs."""
        try:
            return await self.attempt(request, mode, reply)
        except ConformanceError:
            raise
        except Exception as error:
            got = f"{type(error).__name__}: {error}"
            raise self.failure(f"a response to a {mode.value} call", got) from error

    async def attempt(self, request: ModelRequest, mode: Mode, reply: WireReply) -> Answered:
        """Serve `reply` and call the model once in `mode`, letting its error through (a
        failure only when it hangs)."""
        self.server.reply_with(reply)
        deltas: list[ModelDelta] = []

        async def collect(delta: ModelDelta) -> None:
            deltas.append(delta)

        with anyio.move_on_after(HANG_GUARD):
            if mode is Mode.STREAM:
                response = await self.model.stream(request, collect)
            else:
                response = await self.model.request(request)
            return Answered(response, tuple(deltas))
        hang = f"no end within {HANG_GUARD:g} s (the kit's hang guard)"
        raise self.failure(f"the {mode.value} call to end", hang)

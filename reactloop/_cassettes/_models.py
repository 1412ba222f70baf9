"""The two models of cassettes: `RecordingModel` records a live run, `ReplayModel` replays one.

Both are `Model`s (request and stream). One instance serves one run: interactions are kept in
the order the requests come, and a run's requests come one after another.
"""

from __future__ import annotations

import anyio

from reactloop._cassettes._cassette import Cassette, Interaction, RecordedRequest, mismatch
from reactloop._core import (
    DeltaSink,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    RunResult,
    deltas_of,
)
from reactloop._errors import ConfigurationError
from reactloop._stored_errors import CassetteError, CassetteExhaustedError, CassetteMismatchError
from reactloop._validate import boolean, checked_arguments


@checked_arguments
class RecordingModel:
    """Wraps a real model and records each request it answers, with the response; failed calls
    (a retried error) are not recorded. `cassette(result)` turns the recording into a
    `Cassette`, taking the run's input, history and tool results from its `RunResult`."""

    def __init__(self, model: Model) -> None:
        if not isinstance(model, Model) or isinstance(model, type):
            raise ConfigurationError.invalid(
                "RecordingModel.model", model, "a Model (with request and stream)"
            )
        self.model = model
        self.interactions: list[Interaction] = []

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Ask the wrapped model and record its answer."""
        response = await self.model.request(request)
        return self._record(request, response)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """Stream from the wrapped model (deltas pass through) and record the whole answer."""
        response = await self.model.stream(request, on_delta)
        return self._record(request, response)

    def _record(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        if isinstance(response, ModelResponse):  # else the loop reports the broken contract
            self.interactions.append(Interaction(RecordedRequest.of(request), response))
        return response

    def cassette(self, result: RunResult) -> Cassette:
        """The recorded run as a cassette; `result` is the run's `RunResult`."""
        if not isinstance(result, RunResult):
            raise ConfigurationError.invalid(
                "RecordingModel.cassette(result)", result, "a RunResult"
            )
        return Cassette.from_result(self.interactions, result)


def _extends(messages: tuple[Message, ...], prefix: tuple[Message, ...]) -> bool:
    """Whether `messages` begins with `prefix`: fast when they share the message objects (a
    tuple compares identical items without calling their `__eq__`)."""
    return messages[: len(prefix)] == prefix


@checked_arguments
class ReplayModel:
    """Answers with a cassette's recorded responses in order, checking each request first.

    The first request that differs from the recorded one raises `CassetteMismatchError` (its
    message names the interaction and holds a unified diff); a request past the end raises
    `CassetteExhaustedError`. Neither is retried: the run fails with it as `result.error`, and
    `run()` raises it under `strict=True`. Since a run may also swallow it (a hook, a custom
    phase), `assert_matched()` raises the first one again and `assert_complete()` also fails
    when recorded interactions were left unused.

    `check_requests=False` answers even a request that differs (to replay the recorded answers
    against changed code); the differences are still kept for `assert_matched()`.
    """

    def __init__(self, cassette: Cassette, *, check_requests: bool = True) -> None:
        if not isinstance(cassette, Cassette):
            raise ConfigurationError.invalid("ReplayModel.cassette", cassette, "a Cassette")
        self.cassette = cassette
        self.check_requests = boolean("ReplayModel.check_requests", check_requests)
        self.position = 0
        self.requests: list[ModelRequest] = []
        self.errors: list[CassetteError] = []
        self._matched: tuple[tuple[Message, ...], tuple[Message, ...]] | None = None

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The next recorded response, if `request` matches the recorded one."""
        await anyio.lowlevel.checkpoint()
        self.requests.append(request)
        try:
            response = self._answer(request)
        except CassetteError as error:
            self.errors.append(error)
            raise
        return response

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """As `request`, delivering the response as deltas first (as the test models do)."""
        response = await self.request(request)
        for delta in deltas_of(response):
            await on_delta(delta)
        return response

    def _answer(self, request: ModelRequest) -> ModelResponse:
        recorded = self.cassette.interactions
        if self.position >= len(recorded):
            raise CassetteExhaustedError(len(recorded))
        interaction, actual = recorded[self.position], RecordedRequest.of(request)
        try:
            if not self._continues(actual, interaction.request):
                mismatch(self.position, interaction, len(recorded), actual)
            self._matched = (actual.messages, interaction.request.messages)
        except CassetteMismatchError as error:
            if self.check_requests:
                raise
            self.errors.append(error)
            self._matched = None
        self.position += 1
        return interaction.response

    def _continues(self, actual: RecordedRequest, expected: RecordedRequest) -> bool:
        """True when both requests extend the last matched pair and the rest matches: each step
        compares only its new messages (the earlier ones are the same objects, found equal by
        identity), not the whole transcript again."""
        if self._matched is None:
            return False
        before, recorded_before = self._matched
        return (
            _extends(actual.messages, before)
            and _extends(expected.messages, recorded_before)
            and expected.accepts(actual, len(before))
        )

    @property
    def remaining(self) -> int:
        """How many recorded interactions were not replayed yet."""
        return len(self.cassette.interactions) - self.position

    def assert_matched(self) -> None:
        """Raise the first mismatch (or request past the end) the replay met, if any."""
        if self.errors:
            raise self.errors[0]

    def assert_complete(self) -> None:
        """`assert_matched`, and fail if some recorded interactions were not replayed."""
        self.assert_matched()
        if self.remaining:
            count = len(self.cassette.interactions)
            raise AssertionError(
                f"replay model: {self.remaining} of {count} recorded interactions were not used"
            )

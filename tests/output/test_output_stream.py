"""Streamed structured answers: `stream()` reports partial values, each a prefix of the final
one, for every strategy and any way the answer is split into deltas; the run ends typed."""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactloop._core._contracts import DeltaSink
from reactloop._core._events import Event, OutputStreamed
from reactloop._core._messages import (
    AssistantMessage,
    FinishReason,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from reactloop._loop._loop import ReActLoop
from reactloop._output._spec import FINAL_TOOL, OutputStrategy
from reactloop.output import OutputOptions
from tests.output.test_partial import is_prefix

pytestmark = pytest.mark.anyio


@attrs.frozen
class Leg:
    city: str
    nights: int


@attrs.frozen
class Trip:
    name: str
    legs: list[Leg]
    notes: str = ""


NOTES = 'bring "warm" clothes'
ANSWER: dict[str, Any] = {
    "name": "Andes \u00e9t\u00e9",
    "legs": [{"city": "Lima", "nights": 3}, {"city": "Cusco", "nights": 12}],
    "notes": NOTES,
}


class SplitModel:
    """Streams one recorded answer cut at the given points (text, or the final-answer call)."""

    def __init__(self, strategy: OutputStrategy, cuts: list[int]) -> None:
        self.tool = strategy is OutputStrategy.TOOL
        self.text = orjson.dumps(ANSWER).decode()
        self.cuts = sorted({c % (len(self.text) + 1) for c in cuts})

    def response(self) -> ModelResponse:
        calls = (ToolCall(FINAL_TOOL, self.text, "call_1"),) if self.tool else ()
        message = AssistantMessage("" if self.tool else self.text, calls)
        reason = FinishReason.TOOL_CALLS if self.tool else FinishReason.STOP
        return ModelResponse(message, Usage(), reason)

    async def request(self, request: ModelRequest) -> ModelResponse:
        return self.response()

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        bounds = [0, *self.cuts, len(self.text)]
        pieces = [self.text[a:b] for a, b in itertools.pairwise(bounds) if b > a]
        if self.tool:
            await on_delta(ToolCallDelta(0, "", "call_1", FINAL_TOOL))
        for piece in pieces:
            await on_delta(ToolCallDelta(0, piece) if self.tool else TextDelta(piece))
        return self.response()


async def streamed(strategy: OutputStrategy, cuts: list[int]) -> tuple[list[Any], Any]:
    loop = ReActLoop(
        SplitModel(strategy, cuts), output_type=Trip, output=OutputOptions(strategy=strategy)
    )
    events: list[Event] = []
    async with loop.stream("plan") as stream:
        async for event in stream:
            events.append(event)
    result = await stream.result()
    return [e.partial for e in events if isinstance(e, OutputStreamed)], result.output


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    strategy=st.sampled_from(list(OutputStrategy)[1:]),
    cuts=st.lists(st.integers(0, 10_000), max_size=30),
)
async def test_every_partial_is_a_prefix_of_the_answer_however_it_is_split(
    strategy: OutputStrategy, cuts: list[int]
) -> None:
    partials, output = await streamed(strategy, cuts)
    assert output == Trip(
        "Andes \u00e9t\u00e9", [Leg("Lima", 3), Leg("Cusco", 12)], ANSWER["notes"]
    )
    assert partials and partials[-1] == ANSWER
    assert all(is_prefix(partial, ANSWER, growing=False) for partial in partials)
    assert all(a != b for a, b in itertools.pairwise(partials))


async def test_a_wrapped_type_streams_the_value_inside_the_wrapper() -> None:
    class ListModel(SplitModel):
        def __init__(self) -> None:
            super().__init__(OutputStrategy.NATIVE, [3, 9])
            self.text = orjson.dumps({"result": ["a", "b"]}).decode()

    loop = ReActLoop(
        ListModel(), output_type=list[str], output=OutputOptions(strategy=OutputStrategy.NATIVE)
    )
    async with loop.stream("list") as stream:
        partials = [e.partial async for e in stream if isinstance(e, OutputStreamed)]
    assert partials[-1] == ["a", "b"] and all(isinstance(p, list) for p in partials)

"""The shipped fakes behave as documented (users rely on them as much as we do)."""

from __future__ import annotations

import pytest

from reactloop import UserMessage
from reactloop.errors import ScriptExhaustedError
from reactloop.models import ModelRequest, TextDelta, ToolCallDelta
from reactloop.testing import FakeClock, FunctionModel, ScriptedModel, call, deltas_of, reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(messages=(UserMessage("hi"),))


async def test_scripted_model_answers_in_order_and_records() -> None:
    model = ScriptedModel(["one", call("t", a=1)])
    first, second = await model.request(REQUEST), await model.request(REQUEST)
    assert first.message.text == "one"
    assert second.message.tool_calls[0].arguments == '{"a":1}'
    assert model.requests == [REQUEST, REQUEST]


async def test_assert_complete_fails_on_unused_responses() -> None:
    model = ScriptedModel(["one", "two"])
    await model.request(REQUEST)
    with pytest.raises(AssertionError, match="1 of 2 responses were not used"):
        model.assert_complete()


async def test_exhausted_script_raises_a_typed_error() -> None:
    with pytest.raises(ScriptExhaustedError):
        await ScriptedModel([]).request(REQUEST)


async def test_scripted_exception_is_raised() -> None:
    with pytest.raises(KeyError):
        await ScriptedModel([KeyError("boom")]).request(REQUEST)


async def test_stream_delivers_deltas_then_the_same_response() -> None:
    got: list[object] = []

    async def sink(delta: object) -> None:
        got.append(delta)

    response = await ScriptedModel([reply("a b", call("t", x=1))]).stream(REQUEST, sink)
    assert got == deltas_of(response)
    assert "".join(d.text for d in got if isinstance(d, TextDelta)) == "a b"
    assert "".join(d.arguments_delta for d in got if isinstance(d, ToolCallDelta)) == '{"x":1}'


async def test_function_model_computes_from_the_request() -> None:
    async def answer(request: ModelRequest) -> str:
        return f"{len(request.messages)} messages"

    assert (await FunctionModel(answer).request(REQUEST)).message.text == "1 messages"


def test_fake_clock_moves_only_when_told() -> None:
    clock = FakeClock()
    clock.advance(2.5)
    assert clock() == 2.5

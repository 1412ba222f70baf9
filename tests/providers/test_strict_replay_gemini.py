"""A real `ReActLoop` on Gemini's native API over the strict fake (tests/helpers/strict_gemini.py):
three steps (one with two parallel calls), plain and streamed, each step's first call signed as
Gemini 3 signs it. The run finishes only if every signature went back on its call, verbatim, as
the thought-signatures guide requires; a signature dropped, moved or changed fails here with
Google's own 400, as it would against the API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from reactloop import ReActLoop
from reactloop._core import (
    AssistantMessage,
    ModelRequest,
    ReasoningPart,
    RunResult,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._core._events import RunFinished
from reactloop._errors import InvalidRequestError
from reactloop._providers import GeminiModel
from tests.helpers.strict_gemini import StrictGemini
from tests.providers.conftest import API_KEY
from tests.providers.test_strict_replay import FINAL, QUESTION, STEPS, get_time, get_weather
from tests.providers.wire_server import WireServer

pytestmark = pytest.mark.anyio

MODEL = "gemini-3-pro-preview"


@pytest.fixture
async def gemini3(server: WireServer) -> AsyncIterator[GeminiModel]:
    async with GeminiModel(MODEL, api_key=API_KEY, base_url=server.url) as model:
        yield model


def check(result: RunResult, fake: StrictGemini) -> None:
    assert fake.rejections == []
    assert result.error is None
    assert (result.stop_reason, result.output) == (StopReason.COMPLETED, FINAL)
    assert [len(step.tool_calls) for step in result.steps] == [1, 2, 0]


async def test_a_run_sends_every_signature_back_on_its_call(
    server: WireServer, gemini3: GeminiModel
) -> None:
    fake = StrictGemini(STEPS)
    server.handler = fake.handle
    result = await ReActLoop(gemini3, tools=[get_weather, get_time]).run(QUESTION)
    check(result, fake)
    assert fake.answered == len(server.requests) == 3


@pytest.mark.parametrize("piece", [None, 7], ids=["per-event", "7-byte-pieces"])
async def test_a_streamed_run_sends_every_signature_back_on_its_call(
    server: WireServer, gemini3: GeminiModel, piece: int | None
) -> None:
    fake = StrictGemini(STEPS, piece=piece)
    server.handler = fake.handle
    loop = ReActLoop(gemini3, tools=[get_weather, get_time])
    async with loop.stream(QUESTION) as events:
        last = [event async for event in events][-1]
    assert isinstance(last, RunFinished)
    check(last.result, fake)
    assert all(":streamGenerateContent" in request.path for request in server.requests)


async def test_the_fake_refuses_a_changed_signature_with_googles_400(
    server: WireServer, gemini3: GeminiModel
) -> None:
    """The fake is no rubber stamp: a call sent back with a signature it never issued is
    refused, and the 400 reaches the caller typed."""
    fake = StrictGemini(STEPS)
    server.handler = fake.handle
    forged = ReasoningPart(signature="Zm9yZ2Vk", provider="google", model=MODEL)
    call = ToolCall("get_weather", '{"city": "Paris"}', "call_1")
    history = (
        UserMessage(QUESTION),
        AssistantMessage(parts=[forged, call]),
        ToolMessage("call_1", "get_weather", "18 C"),
    )
    with pytest.raises(InvalidRequestError, match="Corrupted thought signature") as caught:
        await gemini3.request(ModelRequest(history))
    assert caught.value.status == 400
    assert fake.rejections and fake.answered == 0


async def test_the_fake_refuses_a_call_whose_signature_was_lost(
    server: WireServer, gemini3: GeminiModel
) -> None:
    """A run's answers sent back without their reasoning parts (a lost signature: reactloop puts
    Google's placeholder on such a call) are refused for the call this server signed."""
    fake = StrictGemini(STEPS)
    server.handler = fake.handle
    first = await gemini3.request(ModelRequest((UserMessage(QUESTION),)))
    (call,) = first.message.tool_calls
    lost = AssistantMessage(parts=[p for p in first.message.parts if isinstance(p, ToolCall)])
    history = (UserMessage(QUESTION), lost, ToolMessage(call.id, call.name, "18 C"))
    with pytest.raises(InvalidRequestError, match="replaced by the placeholder"):
        await gemini3.request(ModelRequest(history))
    assert fake.answered == 1

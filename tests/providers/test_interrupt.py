"""An interrupt during the model's final answer, over each real provider and the loopback server:
the call is cut short at once (the server is still holding the rest of the answer), the text that
had streamed is kept as the partial last message and the output, and the run ends `interrupted`;
a stored run interrupted so resumes by asking the model again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import attrs
import pytest
from attrs import define, field

from reactloop._core._contracts import Model
from reactloop._core._decisions import StopReason
from reactloop._core._events import RunFinished, TextStreamed
from reactloop._core._messages import AssistantMessage, ToolCall, ToolMessage
from reactloop._core._state import RunResult
from reactloop._durable._stores import SqliteStore
from reactloop._errors import NoResultError
from reactloop._loop._loop import ReActLoop
from reactloop._phases._interrupt import CUT_CALL, PARTIAL_ANSWER
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel
from tests.providers.render import anthropic_json, anthropic_stream, openai_json, openai_stream
from tests.providers.render_gemini import gemini_answer, gemini_answer_stream
from tests.providers.test_loop import get_weather, is_stream, results_in
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

LOOKING = "Let me look."
FINAL = "Paris is 18 C, and this answer would go on for a long while yet."
PARTIAL = FINAL[:10]  # two pieces of five characters: what streams before the server holds
CALL = ToolCall("get_weather", '{"city": "Paris"}', "weather_paris")
HANG_GUARD = 30.0
"""Longest a test waits for an interrupted run to end (a slow machine, not a timing check)."""

# The protocols' renderers, and how many chunks of the final answer's stream carry PARTIAL.
PROTOCOLS = {
    "openai": (openai_stream, openai_json, 3),  # role, then "Paris", " is 1"
    "anthropic": (anthropic_stream, anthropic_json, 5),  # start, ping, block start, two deltas
    "gemini": (gemini_answer_stream, gemini_answer, 2),  # "Paris", " is 1"
}


@define
class SlowFinalAnswer:
    """The server's side: a tool call first, then a final answer that stops after PARTIAL (or
    halfway through its JSON body) until `hold` is set; `arrived` is set when it is asked for."""

    streamed: Callable[..., list[bytes]]
    whole: Callable[..., object]
    shown: int
    hold: anyio.Event = field(factory=anyio.Event)
    arrived: anyio.Event = field(factory=anyio.Event)
    finals: int = 0

    def __call__(self, request: Request) -> Reply:
        stream = is_stream(request)
        if results_in(request) == 0:
            return self._reply(stream, LOOKING, (CALL,))
        self.finals += 1
        self.arrived.set()
        reply = self._reply(stream, FINAL, ())
        if self.finals > 1:  # asked again (a resume): the whole answer at once
            return reply
        chunks = reply.chunks if stream else halves(reply.chunks[0])
        cut = self.shown if stream else 1
        return attrs.evolve(reply, chunks=chunks[:cut], hold=self.hold, rest=chunks[cut:])

    def _reply(self, stream: bool, text: str, calls: tuple[ToolCall, ...]) -> Reply:
        if stream:
            return sse_reply(self.streamed(text, calls))
        return json_reply(self.whole(text, calls))


def halves(body: bytes) -> tuple[bytes, bytes]:
    """A JSON body cut in two: the server sends the first half, then holds."""
    return body[: len(body) // 2], body[len(body) // 2 :]


@pytest.fixture(params=sorted(PROTOCOLS))
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def model(
    protocol: str, openai: OpenAIModel, anthropic: AnthropicModel, gemini: GeminiModel
) -> Model:
    models: dict[str, Model] = {"openai": openai, "anthropic": anthropic, "gemini": gemini}
    return models[protocol]


@pytest.fixture
def answer(server: WireServer, protocol: str) -> SlowFinalAnswer:
    streamed, whole, shown = PROTOCOLS[protocol]
    slow = SlowFinalAnswer(streamed, whole, shown)
    server.handler = slow
    return slow


async def interrupted_stream(loop: ReActLoop, message: str | None = None) -> RunResult:
    """Stream a run and interrupt it once PARTIAL of the final answer has streamed."""
    heard = ""
    with anyio.fail_after(HANG_GUARD):
        async with loop.stream("Weather in Paris?") as events:
            async for event in events:
                if isinstance(event, TextStreamed):
                    heard += event.text
                    if heard == LOOKING + PARTIAL:
                        events.interrupt(message)
                last = event
    assert isinstance(last, RunFinished)
    return last.result


def assert_cut_after_partial(result: RunResult, answer: SlowFinalAnswer) -> None:
    assert not answer.hold.is_set()  # the server still holds the rest: nothing waited for it
    assert result.stop_reason is StopReason.INTERRUPTED and result.error is None
    assert result.stop_detail == PARTIAL_ANSWER
    assert result.messages[-1] == AssistantMessage(PARTIAL)  # kept, and marked partial
    assert isinstance(result.messages[-2], ToolMessage)
    assert len(result.steps) == 1  # the cut answer is no step's response
    assert answer.finals == 1


async def test_an_interrupt_cuts_a_streamed_final_answer_short_keeping_its_text(
    model: Model, answer: SlowFinalAnswer
) -> None:
    result = await interrupted_stream(ReActLoop(model, tools=[get_weather]))
    assert_cut_after_partial(result, answer)
    assert result.output == PARTIAL


async def test_the_interrupts_message_is_the_output_and_the_partial_text_stays(
    model: Model, answer: SlowFinalAnswer
) -> None:
    result = await interrupted_stream(ReActLoop(model, tools=[get_weather]), "Stopped.")
    assert_cut_after_partial(result, answer)
    assert result.output == "Stopped."


async def test_an_interrupt_cuts_an_unstreamed_final_answer_short(
    model: Model, answer: SlowFinalAnswer
) -> None:
    loop = ReActLoop(model, tools=[get_weather])
    with anyio.fail_after(HANG_GUARD):
        async with loop.start("Weather in Paris?") as handle:
            await answer.arrived.wait()
            handle.interrupt()
            result = await handle.result()
    assert not answer.hold.is_set()
    assert (result.stop_reason, result.stop_detail) == (StopReason.INTERRUPTED, CUT_CALL)
    assert isinstance(result.messages[-1], ToolMessage)  # nothing of the answer had arrived
    assert result.output == LOOKING  # the last text, as at any interrupt
    assert len(result.steps) == 1 and answer.finals == 1


async def test_a_stored_run_cut_mid_answer_resumes_by_asking_the_model_again(
    model: Model, answer: SlowFinalAnswer, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    loop = ReActLoop(model, tools=[get_weather], store=store)
    try:
        cut = await interrupted_stream(loop)
        assert_cut_after_partial(cut, answer)
        with anyio.fail_after(HANG_GUARD):
            resumed = await loop.resume(cut.run_id)
    finally:
        await store.aclose()
    assert (resumed.stop_reason, resumed.output) == (StopReason.COMPLETED, FINAL)
    assert answer.finals == 2  # asked again
    assert AssistantMessage(PARTIAL) not in resumed.messages  # never an accepted response
    assert resumed.messages[-1] == AssistantMessage(FINAL)
    assert [step.tool_results[0].content for step in resumed.steps[:1]] == ["18 C"]


async def test_a_cancellation_from_outside_is_never_taken_for_an_interrupt(
    model: Model, answer: SlowFinalAnswer
) -> None:
    loop = ReActLoop(model, tools=[get_weather])
    with anyio.fail_after(HANG_GUARD), anyio.CancelScope() as outside:
        async with loop.start("Weather in Paris?") as handle:
            await answer.arrived.wait()
            handle.interrupt()
            outside.cancel()  # both at once: the cancellation wins, and goes on
            await handle.result()
    assert outside.cancelled_caught
    with pytest.raises(NoResultError):
        await handle.result()

"""The checks of what a provider decodes and sends back: a stream adds up to the whole call's
response, text deltas arrive in order while the stream is still going, parallel calls keep
their order, names, ids and arguments, tool results and opaque reasoning reach the next request,
an image reaches the body, and usage is decoded."""

from __future__ import annotations

import base64

import anyio
import attrs

from reactloop._core import (
    FinishReason,
    ImagePart,
    Message,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from reactloop._kit._check import HANG_GUARD, ConformanceCheck, Mode, Session
from reactloop._kit._harness import ScriptedAnswer, ScriptedReasoning
from reactloop._kit._server import WireReply
from reactloop._kit._views import CallView, ResponseView, assembled

USER = "What is the weather in Paris, and the time in Tokyo?"
REQUEST = ModelRequest((UserMessage(USER),))
CALLS = (
    ToolCall("get_weather", '{"city": "Paris", "units": "metric"}', "call_kit_1"),
    ToolCall(
        "get_time", '{"zone": "Asia/Tokyo", "tags": ["ünï", "✓"], "n": {"k": 3}}', "call_kit_2"
    ),
    ToolCall("list_alerts", "{}", "call_kit_3"),
)
RESULTS = ("18 °C and sunny", "21:04 JST")
TOOLS = tuple(ToolSpec(call.name, f"the {call.name} tool", {"type": "object"}) for call in CALLS)
LONG_TEXT = (
    "Paris is sunny at eighteen degrees, Tokyo is clear at twenty-one past nine; "
    "both cities report light winds, no alerts, and café terraces are open — enjoy the evening."
)
THOUGHT = "The user wants two facts; I will call both tools."
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
"""A 1x1 PNG."""


def opaque(number: int) -> str:
    """A distinct opaque reasoning value: base64 text, as vendors' signatures are."""
    return base64.b64encode(f"kit-signature-{number}-\x00\xff\xfe".encode("latin-1")).decode()


def first_request(*messages: Message) -> ModelRequest:
    """A request with the kit's tools offered, the user's question first."""
    return ModelRequest((UserMessage(USER), *messages), tools=TOOLS)


def usage_for(session: Session) -> Usage:
    """The usage to script: cache reads and reasoning tokens only where the harness says the
    provider reports them."""
    features = session.harness.features
    return Usage(
        input_tokens=1234,
        output_tokens=567,
        cache_read_tokens=200 if features.cache_read_tokens else 0,
        reasoning_tokens=89 if features.reasoning_tokens else 0,
    )


def full_answer(session: Session) -> ScriptedAnswer:
    """Everything the provider declares, at once: reasoning, text, two calls, usage."""
    features = session.harness.features
    reasoning = ScriptedReasoning(THOUGHT, opaque(1)) if features.reasoning else None
    return ScriptedAnswer("Let me look both up.", CALLS[:2], reasoning, usage_for(session))


async def stream_matches_whole(session: Session) -> None:
    """Everything the provider declares in one answer, whole and streamed: equal responses,
    and deltas that add up to the streamed one (a consumer sees what the loop keeps)."""
    answer = full_answer(session)
    request = first_request()
    whole = await session.call(request, Mode.REQUEST, session.harness.render_whole(answer))
    streamed = await session.call(request, Mode.STREAM, session.harness.render_stream(answer))
    session.expect("the streamed response equal to the whole call's", ResponseView.of(
        whole.response), ResponseView.of(streamed.response))  # fmt: skip
    added = assembled(streamed.deltas)
    response = streamed.response.message
    session.expect("text deltas adding up to the response's text", response.text, added.text)
    calls = tuple(CallView.of(call) for call in response.tool_calls)
    session.expect("tool call deltas adding up to the response's calls", calls, added.calls)
    if session.harness.features.reasoning_text:
        readable = "".join(part.readable for part in response.reasoning)
        session.expect("reasoning deltas adding up to its reasoning", readable, added.readable)


def held(reply: WireReply, hold: anyio.Event) -> WireReply:
    """The reply with its second half held back until `hold` is set."""
    half = len(reply.chunks) // 2
    return attrs.evolve(reply, chunks=reply.chunks[:half], hold=hold, rest=reply.chunks[half:])


class Watched:
    """A streamed call watched as it goes: its deltas, the first text delta (`first`, set too
    when the call fails), and the error it raised, if any."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.first = anyio.Event()
        self.deltas: list[ModelDelta] = []
        self.failed: Exception | None = None

    async def collect(self, delta: ModelDelta) -> None:
        """Note a delta."""
        self.deltas.append(delta)
        if isinstance(delta, TextDelta):
            self.first.set()

    async def stream(self) -> None:
        """Stream the kit's question, keeping its error for the check to report."""
        try:
            await self.session.model.stream(REQUEST, self.collect)
        except Exception as error:
            self.failed = error
            self.first.set()

    def check_no_failure(self, doing: str) -> None:
        """Fail the check when the call raised."""
        if self.failed is not None:
            got = f"{type(self.failed).__name__}: {self.failed}"
            raise self.session.failure(doing, got)


async def text_deltas_in_order(session: Session) -> None:
    """A long text streamed with its second half held back by the server: a text delta must
    arrive before the hold is released (the provider streams, not buffers), and all the text
    deltas must add up, in order, to the text."""
    hold = anyio.Event()
    reply = held(session.harness.render_stream(ScriptedAnswer(LONG_TEXT)), hold)
    session.server.reply_with(reply)
    watched = Watched(session)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(watched.stream)
        with anyio.move_on_after(HANG_GUARD) as waiting:
            await watched.first.wait()
        hold.set()
    watched.check_no_failure("a streamed call of a long text")
    if waiting.cancelled_caught:
        sent = f"{len(reply.chunks)} of {len(reply.chunks) + len(reply.rest)} chunks"
        got = f"none within {HANG_GUARD:g} s ({sent} sent)"
        raise session.failure("a text delta while the server held the stream's second half", got)
    text = "".join(delta.text for delta in watched.deltas if isinstance(delta, TextDelta))
    session.expect("text deltas adding up, in order, to", LONG_TEXT, text)
    answered = await session.call(REQUEST, Mode.STREAM, session.harness.render_stream(
        ScriptedAnswer(LONG_TEXT)))  # fmt: skip
    session.expect("the streamed response's text", LONG_TEXT, answered.response.message.text)


async def parallel_tool_calls(session: Session) -> None:
    """Three calls in one answer, whole and streamed: their order, names, ids and arguments
    kept (arguments compared as JSON), the finish reason TOOL_CALLS, call deltas by index."""
    answer = ScriptedAnswer("", CALLS)
    expected = tuple(CallView.of(call) for call in CALLS)
    for mode in Mode:
        reply = render(session, answer, mode)
        answered = await session.call(first_request(), mode, reply)
        calls = tuple(CallView.of(call) for call in answered.response.message.tool_calls)
        session.expect(f"{mode.value}: the calls, in order,", expected, calls)
        finish = answered.response.finish_reason
        session.expect(f"{mode.value}: the finish reason", FinishReason.TOOL_CALLS, finish)
        if mode is Mode.STREAM:
            session.expect("call deltas adding up to", expected, assembled(answered.deltas).calls)


def render(session: Session, answer: ScriptedAnswer, mode: Mode) -> WireReply:
    """The answer as the reply to a call in `mode`."""
    if mode is Mode.STREAM:
        return session.harness.render_stream(answer)
    return session.harness.render_whole(answer)


def results_for(response: ModelResponse) -> tuple[ToolMessage, ...]:
    """A result for each call of the response, in order."""
    calls = response.message.tool_calls
    return tuple(ToolMessage(c.id, c.name, text) for c, text in zip(calls, RESULTS, strict=False))


async def tool_results_paired(session: Session) -> None:
    """A tool loop, both ways round (stream then whole, whole then stream): the decoded answer
    goes back with a result per call, and the body carries each result with its call's id."""
    for first, second in ((Mode.STREAM, Mode.REQUEST), (Mode.REQUEST, Mode.STREAM)):
        answer = ScriptedAnswer("", CALLS[:2])
        asked = await session.call(first_request(), first, render(session, answer, first))
        message = asked.response.message
        request = first_request(message, *results_for(asked.response))
        await session.call(request, second, render(session, ScriptedAnswer("Done."), second))
        sent = session.harness.read_request(session.last_request())
        pairs = tuple((call.id, text) for call, text in zip(CALLS, RESULTS, strict=False))
        session.expect(f"{first.value} then {second.value}: tool results", pairs, sent.tool_results)
        if USER not in sent.texts:
            raise session.failure(f"the user's text {USER!r} among the texts sent", sent.texts)


async def reasoning_sent_back(session: Session) -> None:
    """Reasoning signed with an opaque value, whole and streamed: decoded as a reasoning part
    carrying an opaque value (in whatever form the provider keeps it) and its text where
    declared, and the next request carries the value back byte-identical."""
    for number, mode in enumerate(Mode, start=2):
        value = opaque(number)
        answer = ScriptedAnswer("", CALLS[:1], ScriptedReasoning(THOUGHT, value))
        asked = await session.call(first_request(), mode, render(session, answer, mode))
        view = ResponseView.of(asked.response)
        if not view.reasoning:  # how it keeps the value is its own: it must only keep one
            expected = f"{mode.value}: a reasoning part carrying an opaque value"
            raise session.failure(expected, asked.response.message.parts)
        if session.harness.features.reasoning_text:
            session.expect(f"{mode.value}: the readable reasoning", THOUGHT, view.readable)
        request = first_request(asked.response.message, *results_for(asked.response))
        await session.call(
            request, Mode.REQUEST, session.harness.render_whole(ScriptedAnswer("Ok."))
        )
        sent = session.harness.read_request(session.last_request())
        session.expect(f"{mode.value}: the opaque values sent back", (value,), sent.reasoning)


async def images_reach_the_body(session: Session) -> None:
    """A user message of a text and a PNG: the body carries the image's bytes and the text."""
    question = "What is in this picture?"
    request = ModelRequest((UserMessage(parts=[question, ImagePart(PNG)]),))
    await session.call(
        request, Mode.REQUEST, session.harness.render_whole(ScriptedAnswer("A dot."))
    )
    sent = session.harness.read_request(session.last_request())
    session.expect("the image's bytes in the body", (PNG,), sent.images)
    if question not in sent.texts:
        raise session.failure(f"the text {question!r} beside the image", sent.texts)


async def usage_decoded(session: Session) -> None:
    """Distinct counts for each kind of token, whole and streamed: decoded as scripted."""
    usage = usage_for(session)
    for mode in Mode:
        answer = ScriptedAnswer("Counted.", usage=usage)
        answered = await session.call(first_request(), mode, render(session, answer, mode))
        got = attrs.evolve(answered.response.usage, cost=None)
        session.expect(f"{mode.value}: the usage", usage, got)


ANSWER_CHECKS = (
    ConformanceCheck(
        "stream_matches_whole",
        "a streamed call's response equals the whole call's, and its deltas add up to it",
        stream_matches_whole,
    ),
    ConformanceCheck(
        "text_deltas_in_order",
        "text deltas arrive while the stream goes on, and add up in order to the text",
        text_deltas_in_order,
    ),
    ConformanceCheck(
        "parallel_tool_calls",
        "parallel tool calls keep their order, names, ids and arguments (whole and streamed)",
        parallel_tool_calls,
    ),
    ConformanceCheck(
        "tool_results_paired",
        "tool results reach the next request paired with their call ids",
        tool_results_paired,
    ),
    ConformanceCheck(
        "reasoning_sent_back",
        "reasoning with an opaque value is decoded and sent back byte-identical",
        reasoning_sent_back,
        needs="reasoning",
    ),
    ConformanceCheck(
        "images_reach_the_body",
        "an image in a user message reaches the request body",
        images_reach_the_body,
        needs="images",
    ),
    ConformanceCheck(
        "usage_decoded",
        "usage is decoded: input, output, and cache reads and reasoning where declared",
        usage_decoded,
    ),
)

"""The AG-UI encoder on real runs (a ScriptedModel driving a loop): every frame it writes is an
AG-UI 1.0 event as ag-ui-protocol's models define it (no unknown field), in the order the
protocol asks; whole streams are read by @ag-ui/client's own HttpAgent (its SSE parser, event
verifier and reducer) in Node, and what it builds is checked."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest
from attrs import frozen

from benchmarks import agui_stream as agui_benchmark
from reactloop import Approve, ReActLoop, tool
from reactloop._core import (
    Event,
    HoldKind,
    ModelRetrying,
    PendingCall,
    ReasoningPart,
    RunFinished,
    TextStreamed,
    ToolCallStreamed,
    Usage,
)
from reactloop._errors import ErrorCode
from reactloop._output import FINAL_TOOL
from reactloop._serve._agui import (
    APPROVAL_SCHEMA,
    EXTERNAL_SCHEMA,
    AgUiEncoder,
    interrupt,
    token_usage,
)
from reactloop._serve._contracts import StreamContext
from reactloop.approval import ExternalResult
from reactloop.errors import AuthenticationError
from reactloop.stores import MemoryStore
from reactloop.testing import FakeTool, ScriptedModel, ScriptItem, call, reply
from tests.serve.agui_frames import context, encode_all, payloads, split
from tests.serve.node import run_node

pytestmark = pytest.mark.anyio

HANG = 30.0


@tool
def look_up(city: str) -> str:
    """Today's weather in a city."""
    return f"{city}: sunny"


@tool(requires_approval=True)
def transfer(to: str, amount: int) -> str:
    """Send money."""
    return f"sent {amount} to {to}"


locate = FakeTool("locate", external=True)
"""Where the user is (run in the browser)."""


async def events_of(loop: ReActLoop[Any], text: str, run_id: str = "run-1") -> list[Event]:
    """Every event of a new run of `loop`."""
    with anyio.fail_after(HANG):
        async with loop.stream(text, run_id=run_id, session_id="thread-1") as stream:
            return [event async for event in stream]


async def resumed_events(loop: ReActLoop[Any], run_id: str, decisions: Any) -> list[Event]:
    """Every event of the paused run `run_id`, resumed with `decisions`."""
    with anyio.fail_after(HANG):
        async with loop.resume_stream(run_id, decisions=decisions) as stream:
            return [event async for event in stream]


def types(data: bytes) -> list[str]:
    return [payload["type"] for payload in payloads(data)]


def paused_loop() -> ReActLoop[Any]:
    script: list[ScriptItem] = [
        reply("Paying.", call("transfer", to="ann", amount=5), call("locate")),
        "Done.",
    ]
    return ReActLoop(ScriptedModel(script), tools=[transfer, locate], store=MemoryStore())


async def test_a_tool_using_run_streams_its_text_call_result_and_output() -> None:
    loop = ReActLoop(
        ScriptedModel([reply("Checking.", call("look_up", city="Paris")), "Sunny."]),
        tools=[look_up],
    )
    data = encode_all(AgUiEncoder(context()), await events_of(loop, "Weather?"))
    frames = payloads(data)
    assert [f["type"] for f in frames if f["type"] != "STATE_SNAPSHOT"] == [
        "RUN_STARTED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        *["TOOL_CALL_ARGS"] * sum(1 for f in frames if f["type"] == "TOOL_CALL_ARGS"),
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    by_type = {f["type"]: f for f in frames}
    assert by_type["RUN_STARTED"] == {
        "type": "RUN_STARTED",
        "threadId": "thread-1",
        "runId": "run-1",
    }
    start = next(f for f in frames if f["type"] == "TOOL_CALL_START")
    first_text = next(f for f in frames if f["type"] == "TEXT_MESSAGE_START")
    assert start["parentMessageId"] == first_text["messageId"]  # one assistant message
    arguments = "".join(f["delta"] for f in frames if f["type"] == "TOOL_CALL_ARGS")
    assert arguments == '{"city":"Paris"}'
    result = by_type["TOOL_CALL_RESULT"]
    assert (result["toolCallId"], result["content"]) == (start["toolCallId"], "Paris: sunny")
    assert by_type["RUN_FINISHED"]["outcome"] == {"type": "success"}
    assert by_type["RUN_FINISHED"]["result"] == "Sunny."


async def test_each_shown_event_carries_its_id_on_its_last_frame() -> None:
    script: list[ScriptItem] = [reply("Hi there.", call("look_up", city="Oslo")), "ok"]
    events = await events_of(ReActLoop(ScriptedModel(script), tools=[look_up]), "hi")
    encoder = AgUiEncoder(context())
    shown = 0
    for seq, event in enumerate(events, start=1):
        frames = split(encoder.encode(event, f"e-{seq}"))
        if frames:
            shown += 1
            assert [frame_id for frame_id, _ in frames[:-1]] == [None] * (len(frames) - 1)
            assert frames[-1][0] == f"e-{seq}"
    assert 0 < shown < len(events)  # phase ends show nothing, and carry no id


async def test_a_paused_run_ends_with_one_interrupt_per_held_call() -> None:
    data = encode_all(AgUiEncoder(context()), await events_of(paused_loop(), "Pay Ann"))
    frames = payloads(data)
    finished = frames[-1]
    assert finished["type"] == "RUN_FINISHED"
    approval, external = finished["outcome"]["interrupts"]
    assert finished["outcome"]["type"] == "interrupt"
    assert approval["id"] == approval["toolCallId"]
    assert (approval["reason"], approval["responseSchema"]) == ("tool_call", APPROVAL_SCHEMA)
    assert (
        approval["message"] == '\'transfer\' requires approval: transfer({"to":"ann","amount":5})'
    )
    assert (external["reason"], external["responseSchema"]) == (
        "reactloop:external_tool",
        EXTERNAL_SCHEMA,
    )
    started = {f["toolCallId"] for f in frames if f["type"] == "TOOL_CALL_START"}
    ended = {f["toolCallId"] for f in frames if f["type"] == "TOOL_CALL_END"}
    assert started == ended == {approval["id"], external["id"]}
    state = frames[-2]
    assert state["type"] == "STATE_SNAPSHOT"  # the state a resume needs, before the interrupt
    assert state["snapshot"]["status"] == "awaiting_approval"
    assert [p["callId"] for p in state["snapshot"]["pending"]] == [approval["id"], external["id"]]


async def test_a_resumed_stream_answers_held_calls_with_their_results_only() -> None:
    loop = paused_loop()
    first = await events_of(loop, "Pay Ann")
    held = first[-1].result.pending if isinstance(first[-1], RunFinished) else ()
    decisions = {held[0].call_id: Approve(), held[1].call_id: ExternalResult({"city": "Oslo"})}
    later = await resumed_events(loop, "run-1", decisions)
    resumed = StreamContext(
        run_id="run-1", session_id="thread-1", client_run_id="run-2", continued=True
    )
    frames = payloads(encode_all(AgUiEncoder(resumed), later))
    assert frames[0] == {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-2"}
    assert not [
        f for f in frames if f["type"].startswith("TOOL_CALL_") and f["type"] != "TOOL_CALL_RESULT"
    ]
    results = {f["toolCallId"]: f["content"] for f in frames if f["type"] == "TOOL_CALL_RESULT"}
    assert results == {held[0].call_id: "sent 5 to ann", held[1].call_id: '{"city":"Oslo"}'}
    assert all(f["messageId"].startswith("run-2-") for f in frames if "messageId" in f)
    assert frames[-1]["outcome"] == {"type": "success"}


async def test_reasoning_is_a_message_of_its_own_and_never_carries_a_signature() -> None:
    thought = ReasoningPart("Consider the weather.", signature="SIGNATURE-SECRET")
    loop = ReActLoop(ScriptedModel([reply("Sunny.", reasoning=thought)]))
    data = encode_all(AgUiEncoder(context()), await events_of(loop, "Weather?"))
    assert b"SIGNATURE-SECRET" not in data
    frames = payloads(data)
    reasoning = [f for f in frames if f["type"].startswith("REASONING")]
    assert [f["type"] for f in reasoning][:2] == ["REASONING_START", "REASONING_MESSAGE_START"]
    assert [f["type"] for f in reasoning][-2:] == ["REASONING_MESSAGE_END", "REASONING_END"]
    text = "".join(f["delta"] for f in reasoning if f["type"] == "REASONING_MESSAGE_CONTENT")
    assert text == "Consider the weather."
    said = next(f for f in frames if f["type"] == "TEXT_MESSAGE_START")
    assert said["messageId"] != reasoning[0]["messageId"]


async def test_a_failed_run_ends_with_run_error_and_no_run_finished() -> None:
    loop = ReActLoop(ScriptedModel([AuthenticationError("the key was refused")]))
    frames = payloads(encode_all(AgUiEncoder(context()), await events_of(loop, "hi")))
    assert frames[-1] == {
        "type": "RUN_ERROR",
        "message": "the key was refused",
        "code": str(ErrorCode.AUTHENTICATION),
    }
    assert "RUN_FINISHED" not in [f["type"] for f in frames]
    assert [f["type"] for f in frames[-3:-1]] == ["STEP_FINISHED", "STATE_SNAPSHOT"]
    assert frames[-2]["snapshot"]["status"] == "error"


async def test_an_interrupted_run_ends_with_the_cancelled_outcome() -> None:
    loop = ReActLoop(
        ScriptedModel([reply("Checking.", call("look_up", city="Oslo")), "ok"]), tools=[look_up]
    )
    events: list[Event] = []
    with anyio.fail_after(HANG):
        async with loop.stream("hi", run_id="run-1") as stream:
            async for event in stream:
                events.append(event)
                if isinstance(event, TextStreamed):
                    stream.interrupt()
    frames = payloads(encode_all(AgUiEncoder(context()), events))
    assert frames[-1]["type"] == "RUN_FINISHED"
    assert frames[-1]["outcome"] == {"type": "cancelled"}
    assert "result" not in frames[-1]


async def test_the_same_events_into_a_fresh_encoder_give_the_same_frames() -> None:
    events = await events_of(paused_loop(), "Pay Ann")
    assert encode_all(AgUiEncoder(context()), events) == encode_all(AgUiEncoder(context()), events)


async def test_calls_the_stream_never_streamed_are_shown_whole() -> None:
    """A replayed run (whole calls, no pieces) still shows each call's start, arguments, end."""
    events = await events_of(paused_loop(), "Pay Ann")
    whole = [event for event in events if not isinstance(event, ToolCallStreamed)]
    frames = payloads(encode_all(AgUiEncoder(context()), whole))
    calls = [f for f in frames if f["type"].startswith("TOOL_CALL_")]
    assert [f["type"] for f in calls] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"] * 2
    assert [f["delta"] for f in calls if f["type"] == "TOOL_CALL_ARGS"] == [
        '{"to":"ann","amount":5}',
        "{}",
    ]


async def test_a_retried_model_call_writes_a_new_message() -> None:
    loop = ReActLoop(ScriptedModel(["Hello there."]))
    events = await events_of(loop, "hi")
    first_text = next(n for n, event in enumerate(events) if isinstance(event, TextStreamed))
    retry = ModelRetrying(attempt=1, code=ErrorCode.RATE_LIMITED, delay=0.0, retries_left=1)
    events.insert(first_text + 1, retry)
    frames = payloads(encode_all(AgUiEncoder(context()), events))
    starts = [f["messageId"] for f in frames if f["type"] == "TEXT_MESSAGE_START"]
    ends = [f["messageId"] for f in frames if f["type"] == "TEXT_MESSAGE_END"]
    assert starts == ends and len(set(starts)) == 2


async def test_a_failure_frame_is_run_error_and_nothing_follows_it() -> None:
    encoder = AgUiEncoder(context())
    events = await events_of(ReActLoop(ScriptedModel(["Hello."])), "hi")
    encoder.opening()
    encoder.encode(events[0], "e-1")
    failure = payloads(encoder.failure("the server failed", "internal_error"))
    assert failure == [
        {"type": "RUN_ERROR", "message": "the server failed", "code": "internal_error"}
    ]
    assert [encoder.encode(event, None) for event in events[1:]] == [b""] * (len(events) - 1)


def test_usage_keeps_its_accounting_in_agui_token_usage() -> None:
    usage = Usage(
        input_tokens=100,
        output_tokens=40,
        cache_read_tokens=30,
        cache_write_tokens=10,
        reasoning_tokens=25,
    )
    assert token_usage(usage) == {
        "inputTokens": 100,
        "outputTokens": 40,
        "totalTokens": 140,
        "reasoningTokens": 25,
        "cachedInputTokens": 30,
        "cacheWriteInputTokens": 10,
    }


def test_a_held_call_with_a_deadline_says_when_it_expires() -> None:
    held = PendingCall("call_9", "locate", {}, "runs elsewhere", HoldKind.EXTERNAL, 1_800_000_000.0)
    found = interrupt(held)
    assert found["expiresAt"] == "2027-01-15T08:00:00+00:00"
    assert found["metadata"] == {"reactloop": {"tool": "locate", "kind": "external"}}


# --- the real client --------------------------------------------------------------------------


async def test_the_agui_client_reads_an_approval_round_trip_into_its_messages() -> None:
    loop = paused_loop()
    first = await events_of(loop, "Pay Ann")
    held = first[-1].result.pending if isinstance(first[-1], RunFinished) else ()
    decisions = {held[0].call_id: Approve(), held[1].call_id: ExternalResult("Oslo")}
    later = await resumed_events(loop, "run-1", decisions)
    resumed = StreamContext(
        run_id="run-1", session_id="thread-1", client_run_id="run-2", continued=True
    )
    answers = [
        {"interruptId": held[0].call_id, "status": "resolved", "payload": {"approved": True}},
        {"interruptId": held[1].call_id, "status": "resolved", "payload": {"result": "Oslo"}},
    ]
    seen = await run_node(
        "agui_read.mjs",
        {
            "threadId": "thread-1",
            "messages": [{"id": "u-1", "role": "user", "content": "Pay Ann"}],
            "runs": [
                {"runId": "run-1", "sse": encode_all(AgUiEncoder(context()), first).decode()},
                {
                    "runId": "run-2",
                    "sse": encode_all(AgUiEncoder(resumed), later).decode(),
                    "resume": answers,
                },
            ],
        },
    )
    paused, done = seen["runs"]
    assert "failed" not in paused and "failed" not in done
    assert paused["outcome"] == "interrupt"
    assert [i["id"] for i in paused["interrupts"]] == [call.call_id for call in held]
    assert done["outcome"] == "success" and done["result"] == "Done."
    assert done["pendingInterrupts"] == []
    user, assistant, *results, final = seen["messages"]
    assert user["content"] == "Pay Ann"
    assert assistant["content"] == "Paying."
    assert [c["function"]["name"] for c in assistant["toolCalls"]] == ["transfer", "locate"]
    assert {r["toolCallId"]: r["content"] for r in results} == {
        held[0].call_id: "sent 5 to ann",
        held[1].call_id: "Oslo",
    }
    assert final == {"id": final["id"], "role": "assistant", "content": "Done."}
    assert seen["state"]["status"] == "completed" and seen["state"]["pending"] == []


async def test_a_continuation_restates_the_run_and_reopens_what_was_open() -> None:
    """A client that reconnects mid-message gets RUN_STARTED and the open step and message
    again, then the rest: @ag-ui/client's verifier accepts it and the message is whole."""
    events = await events_of(ReActLoop(ScriptedModel(["Hello there, friend."])), "hi")
    cut = 1 + next(n for n, event in enumerate(events) if isinstance(event, TextStreamed))
    before = encode_all(AgUiEncoder(context()), events[:cut])
    again = AgUiEncoder(context())
    for seq, event in enumerate(events[:cut], start=1):
        again.encode(event, f"e-{seq}")  # the catch-up: frames discarded
    rest = again.opening() + b"".join(
        again.encode(event, f"e-{seq}") for seq, event in enumerate(events[cut:], start=cut + 1)
    )
    assert types(rest)[:3] == ["RUN_STARTED", "STEP_STARTED", "TEXT_MESSAGE_START"]
    first_half = before.decode()
    seen = await run_node(
        "agui_read.mjs",
        {
            "threadId": "thread-1",
            "runs": [
                {"runId": "run-1", "sse": first_half},  # the dropped response, cut mid-message
                {"runId": "run-1", "sse": rest.decode()},
            ],
        },
    )
    assert "failed" not in seen["runs"][1]
    assert seen["runs"][1]["outcome"] == "success"
    [message] = seen["messages"]
    assert message["content"] == "Hello there, friend."


def test_the_encoding_benchmark_reports_its_figures() -> None:
    figures = agui_benchmark.measure(steps=1, repeats=1)
    assert set(figures) == {"whole run", "a text delta", "a tool result"}
    assert all(value > 0 for value in figures.values())


@frozen
class Forecast:
    city: str
    degrees: int


async def test_a_structured_answer_is_the_result_not_a_call_left_to_answer() -> None:
    model = ScriptedModel([call(FINAL_TOOL, city="Paris", degrees=21)])
    events = await events_of(ReActLoop(model).with_output(Forecast), "Weather?")
    data = encode_all(AgUiEncoder(context()), events)
    assert not [f for f in payloads(data) if f["type"].startswith("TOOL_CALL")]
    seen = await run_node(
        "agui_read.mjs",
        {"threadId": "thread-1", "runs": [{"runId": "run-1", "sse": data.decode()}]},
    )
    [run] = seen["runs"]
    assert run["outcome"] == "success" and run["result"] == {"city": "Paris", "degrees": 21}
    assert run["pendingToolCallIds"] == []


async def test_interleaved_pieces_of_two_calls_each_reach_their_own_call() -> None:
    script: list[ScriptItem] = [
        [call("look_up", city="Paris"), call("look_up", city="Rome")],
        "Both sunny.",
    ]
    events = await events_of(ReActLoop(ScriptedModel(script), tools=[look_up]), "Weather?")
    pieces = [n for n, event in enumerate(events) if isinstance(event, ToolCallStreamed)]
    streamed = [e for e in events if isinstance(e, ToolCallStreamed)]
    starts = [e for e in streamed if e.call_id is not None]
    first, second = ([e for e in streamed if e.call_id is None and e.index == i] for i in (0, 1))
    alternating = [piece for pair in zip(first, second, strict=False) for piece in pair]
    alternating += first[len(second) :] + second[len(first) :]
    mixed = [*events[: pieces[0]], *starts, *alternating, *events[pieces[-1] + 1 :]]
    data = encode_all(AgUiEncoder(context()), mixed)
    seen = await run_node(
        "agui_read.mjs",
        {"threadId": "thread-1", "runs": [{"runId": "run-1", "sse": data.decode()}]},
    )
    assert "failed" not in seen["runs"][0]
    calls = seen["messages"][0]["toolCalls"]
    by_name = sorted(orjson.loads(c["function"]["arguments"])["city"] for c in calls)
    assert by_name == ["Paris", "Rome"]

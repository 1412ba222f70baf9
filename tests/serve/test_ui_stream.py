"""The AI SDK UI message stream encoder: a run's events as the chunks `useChat` reads (the
chunk types and fields ai 7's `UIMessageChunk` defines), checked on real scripted runs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop import ReActLoop, StopReason
from reactloop._core import (
    ModelRetrying,
    PhaseFinished,
    Proceed,
    ReasoningStreamed,
    RunFailed,
    StepStarted,
    TextStreamed,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallStreamed,
    ToolResult,
)
from reactloop._errors import ErrorCode, ModelError
from reactloop._serve import UI_MESSAGE_STREAM, StreamContext, UIStreamEncoder
from reactloop._serve._ui_stream import DONE
from reactloop.testing import ScriptedModel, call
from tests.helpers.strategies import short_texts
from tests.serve.ui_runs import (
    APPROVE,
    DENY,
    RUN,
    THOUGHT,
    balance,
    broken,
    chunks,
    encode,
    events_of,
    of_type,
    paying_loop,
    result_of,
    resumed_events,
)

pytestmark = pytest.mark.anyio


async def paused_chunks() -> list[dict[str, Any]]:
    return chunks(encode(await events_of(paying_loop(), "Pay Bob 5")))


async def test_a_run_opens_with_start_naming_the_runs_assistant_message() -> None:
    found = await paused_chunks()
    assert found[0] == {"type": "start", "messageId": f"{RUN}-assistant"}


async def test_a_finished_run_ends_with_finish_its_reason_and_usage() -> None:
    loop = ReActLoop(ScriptedModel(["Hello."]))
    found = chunks(encode(await events_of(loop, "Hi")))
    finish = found[-1]
    assert finish["type"] == "finish" and finish["finishReason"] == "stop"
    assert finish["messageMetadata"]["runId"] == RUN
    assert finish["messageMetadata"]["stopReason"] == StopReason.COMPLETED.value
    assert set(finish["messageMetadata"]["usage"]) >= {"inputTokens", "outputTokens"}


async def test_the_stream_ends_with_done() -> None:
    loop = ReActLoop(ScriptedModel(["Hello."]))
    assert encode(await events_of(loop, "Hi")).endswith(b"\n\ndata: [DONE]\n\n")


async def test_text_is_one_part_opened_streamed_and_closed() -> None:
    found = await paused_chunks()
    [start] = of_type(found, "text-start")
    deltas = [c["delta"] for c in of_type(found, "text-delta") if c["id"] == start["id"]]
    assert "".join(deltas) == "Checking first."
    assert of_type(found, "text-end") == [{"type": "text-end", "id": start["id"]}]


async def test_reasoning_is_a_part_of_its_own_closed_before_the_text() -> None:
    found = await paused_chunks()
    [start] = of_type(found, "reasoning-start")
    deltas = [c["delta"] for c in of_type(found, "reasoning-delta")]
    assert "".join(deltas) == THOUGHT
    types = [c["type"] for c in found]
    assert types.index("reasoning-end") < types.index("text-start")
    assert of_type(found, "reasoning-end") == [{"type": "reasoning-end", "id": start["id"]}]


async def test_each_step_is_a_start_step_and_finish_step() -> None:
    loop = ReActLoop(ScriptedModel([call("balance", account="a"), "ok"]), tools=[balance])
    found = chunks(encode(await events_of(loop, "Go")))
    types = [c["type"] for c in found]
    assert types.count("start-step") == types.count("finish-step") == 2
    assert types.index("start-step") < types.index("finish-step")


async def test_a_tool_call_streams_its_input_then_shows_it_whole_then_its_output() -> None:
    found = await paused_chunks()
    [call_id] = [
        c["toolCallId"] for c in of_type(found, "tool-input-start") if c["toolName"] == "balance"
    ]
    mine = [c for c in found if c.get("toolCallId") == call_id]
    types = [c["type"] for c in mine]
    assert types[0] == "tool-input-start" and "tool-input-delta" in types
    available = of_type(mine, "tool-input-available")
    assert available == [
        {
            "type": "tool-input-available",
            "toolCallId": call_id,
            "toolName": "balance",
            "input": {"account": "main"},
        }
    ]
    assert of_type(mine, "tool-output-available")[0]["output"] == "main: 120"


async def test_a_tool_that_fails_gives_its_error_text() -> None:
    loop = ReActLoop(ScriptedModel([call("broken", account="x"), "sorry"]), tools=[broken])
    found = chunks(encode(await events_of(loop, "Go")))
    [error] = of_type(found, "tool-output-error")
    assert "no account x" in error["errorText"]


async def test_a_held_call_gets_an_approval_request_named_by_its_call_id() -> None:
    loop = paying_loop()
    events = await events_of(loop, "Pay Bob 5")
    found = chunks(encode(events))
    [request] = of_type(found, "tool-approval-request")
    [held] = result_of(events).pending
    assert request["approvalId"] == request["toolCallId"] == held.call_id
    assert "requires approval" in request["reason"]
    types = [c["type"] for c in found]
    assert types.index("tool-approval-request") < types.index("finish")
    assert found[-1]["finishReason"] == "tool-calls"


async def continued(decision: Any) -> tuple[list[dict[str, Any]], str]:
    """The continuation stream of the paused run resumed with `decision`, and the held id."""
    loop = paying_loop()
    events = await events_of(loop, "Pay Bob 5")
    result = result_of(events)
    resumed = await resumed_events(loop, result, decision)
    encoder = UIStreamEncoder(StreamContext(run_id=RUN, continued=True))
    return chunks(encode(resumed, encoder)), result.pending[0].call_id


async def test_an_approved_call_continues_in_the_same_message_with_its_output() -> None:
    found, held = await continued(APPROVE)
    assert found[0] == {"type": "start", "messageId": f"{RUN}-assistant"}
    outputs = {c["toolCallId"]: c["output"] for c in of_type(found, "tool-output-available")}
    assert outputs[held] == "sent 5 to bob"


async def test_a_denied_call_comes_back_as_tool_output_denied() -> None:
    found, held = await continued(DENY)
    assert {"type": "tool-output-denied", "toolCallId": held} in found
    assert not [c for c in of_type(found, "tool-output-error") if c["toolCallId"] == held]


async def test_a_continuation_does_not_show_the_step_or_the_calls_the_client_has() -> None:
    found, _ = await continued(APPROVE)
    types = [c["type"] for c in found]
    assert "tool-input-start" not in types and "tool-input-available" not in types
    assert types.index("tool-output-available") < types.index("start-step")  # the next step's


async def test_an_encoder_fed_the_whole_run_shows_the_rest_once() -> None:
    loop = paying_loop()
    first = await events_of(loop, "Pay Bob 5")
    rest = await resumed_events(loop, result_of(first), APPROVE)
    encoder = UIStreamEncoder(StreamContext(run_id=RUN))
    encode(first, encoder, close=False)
    found = chunks(encode(rest, encoder))
    assert of_type(found, "tool-input-available") == []
    assert len(of_type(found, "tool-output-available")) == 1  # the approved call's alone
    assert [c["type"] for c in found].count("start-step") == 1


async def test_the_same_events_give_the_same_bytes() -> None:
    events = await events_of(paying_loop(), "Pay Bob 5")
    assert encode(events) == encode(events)


def test_the_event_id_goes_on_the_last_frame_of_the_event() -> None:
    encoder = UIStreamEncoder(StreamContext(run_id=RUN))
    encoder.encode(StepStarted(1), None)
    body = encoder.encode(TextStreamed("hi"), "e-7")
    frames = body.split(b"\n\n")[:-1]
    assert len(frames) == 2  # text-start, text-delta
    assert not frames[0].startswith(b"id:") and frames[1].startswith(b"id: e-7\ndata: ")


def test_an_event_the_client_has_no_part_for_gives_nothing() -> None:
    encoder = UIStreamEncoder(StreamContext(run_id=RUN))
    assert encoder.encode(PhaseFinished("RunStart", Proceed()), "e-1") == b""


def test_a_retried_model_call_removes_what_the_failed_attempt_streamed() -> None:
    encoder = UIStreamEncoder(StreamContext(run_id=RUN))
    encoder.encode(StepStarted(1), None)
    encoder.encode(TextStreamed("half an ans"), None)
    retry = ModelRetrying(attempt=1, code=ErrorCode.RATE_LIMITED, delay=1.0, retries_left=2)
    assert chunks(encoder.encode(retry, None)) == [{"type": "reset-step"}]
    again = chunks(encoder.encode(TextStreamed("An answer"), None))
    assert [c["type"] for c in again] == ["text-start", "text-delta"]


def test_a_failed_run_sends_an_error_chunk_with_its_code_and_message() -> None:
    encoder = UIStreamEncoder(StreamContext(run_id=RUN))
    found = chunks(encoder.encode(RunFailed(ModelError("the model is down")), None))
    assert found == [{"type": "error", "errorText": f"{ModelError.code}: the model is down"}]


def test_a_failure_closes_the_open_text_and_sends_an_error() -> None:
    encoder = UIStreamEncoder(StreamContext(run_id=RUN))
    encoder.encode(StepStarted(1), None)
    encoder.encode(TextStreamed("Hel"), None)
    found = chunks(encoder.failure("the server stopped", "internal"))
    assert [c["type"] for c in found] == ["text-end", "error"]
    assert found[1]["errorText"] == "internal: the server stopped"


def test_the_response_is_an_sse_stream_marked_as_a_ui_message_stream() -> None:
    encoder = UI_MESSAGE_STREAM.encoder(StreamContext(run_id=RUN))
    assert encoder.media_type == "text/event-stream"
    assert encoder.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert encoder.opening() == b"" and encoder.closing() == DONE


def test_calls_of_a_provider_that_reuses_ids_get_parts_of_their_own() -> None:
    encoder = UIStreamEncoder(StreamContext(run_id=RUN))
    events: list[Any] = [StepStarted(1)]
    for index in (0, 1):
        events.append(ToolCallStreamed(index, "", name="balance", call_id="call_0"))
        events.append(ToolCallStreamed(index, '{"account":"a"}'))
    for fresh in ("u1", "u2"):
        events.append(ToolCallStarted(ToolCall("balance", '{"account":"a"}', fresh, "call_0")))
    events += [
        ToolCallFinished(ToolResult(fresh, "balance", f"r-{fresh}")) for fresh in ("u1", "u2")
    ]
    found = [c for e in events for c in chunks(encoder.encode(e, None))]
    starts = [c["toolCallId"] for c in of_type(found, "tool-input-start")]
    outputs = [c["toolCallId"] for c in of_type(found, "tool-output-available")]
    assert len(set(starts)) == 2 and outputs == starts


pieces = st.lists(st.tuples(st.booleans(), short_texts.filter(bool)), max_size=12)


@given(pieces)
def test_text_and_reasoning_pieces_come_out_whole_in_well_formed_parts(
    streamed: list[tuple[bool, str]],
) -> None:
    encoder = UIStreamEncoder(StreamContext(run_id=RUN))
    events: list[Any] = [StepStarted(1)]
    events += [ReasoningStreamed(t) if thinking else TextStreamed(t) for thinking, t in streamed]
    found = [c for e in events for c in chunks(encoder.encode(e, None))]
    found += chunks(encoder.failure("end", "x"))[:-1]  # closes what is open
    open_ids: set[str] = set()
    texts: dict[str, str] = {"text": "", "reasoning": ""}
    for chunk in found[1:]:
        kind, _, stage = chunk["type"].rpartition("-")
        if stage == "start":
            assert not open_ids
            open_ids.add(chunk["id"])
        elif stage == "delta":
            assert chunk["id"] in open_ids
            texts[kind] += chunk["delta"]
        else:
            open_ids.remove(chunk["id"])
    assert not open_ids
    assert texts["text"] == "".join(t for thinking, t in streamed if not thinking)
    assert texts["reasoning"] == "".join(t for thinking, t in streamed if thinking)

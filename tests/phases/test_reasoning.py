"""ReasoningPhase: request building, hooks, streaming, final-answer and finishing stops."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from reactloop import Event, FinalAnswerMarker, Hook, Limits, Override, StopReason, StopRun, Usage
from reactloop._core._events import ModelRetrying
from reactloop._core._messages import AssistantMessage, Message, ToolCall, UserMessage
from reactloop._core._settings import ModelSettings
from reactloop._errors import ErrorCode, ModelTimeoutError, ProviderUnavailableError
from reactloop._policies._context import ContextWindow
from reactloop._policies._retry import RetryPolicy
from reactloop._policies._tokens import DEFAULT_ESTIMATOR
from reactloop.events import TextStreamed, ToolCallStreamed
from reactloop.models import ModelRequest, ModelResponse, ToolChoice
from reactloop.phases import Finishing, Proceed, ReasoningPhase, Run, StepPlan, Stop
from reactloop.testing import FakeTool, ScriptedModel, call, make_run, reply, run_phase

pytestmark = pytest.mark.anyio


async def test_records_response_and_usage() -> None:
    model = ScriptedModel([reply("hi", usage=Usage(10, 2))])
    run = make_run(model=model)
    assert isinstance(await run_phase(ReasoningPhase(), run), Proceed)
    assert run.state.messages[-1] == model.script[0].message  # type: ignore[union-attr]
    assert run.state.usage == Usage(10, 2)
    assert run.state.current is not None and run.state.current.usage == Usage(10, 2)


async def test_each_run_of_the_phase_asks_the_model_even_in_a_step_that_has_an_answer() -> None:
    model = ScriptedModel(["first", "second"])
    run = make_run(model=model)
    await run_phase(ReasoningPhase(), run)
    await run_phase(ReasoningPhase(), run)  # e.g. a reflection phase sent the step back
    assert len(model.requests) == 2
    assert run.state.current is not None and run.state.current.response is not None
    assert run.state.current.response.message.text == "second"


async def test_request_carries_instructions_tools_and_history() -> None:
    model = ScriptedModel(["ok"])
    run = make_run(model=model, tools=[FakeTool("t")], instructions="Be brief.")
    await run_phase(ReasoningPhase(), run)
    request = model.requests[0]
    assert request.instructions == "Be brief."
    assert [spec.name for spec in request.tools] == ["t"]
    assert request.messages == tuple(run.state.messages[:1])


async def test_finishing_call_offers_no_tools_and_stops() -> None:
    model = ScriptedModel(["final words"])
    run = make_run(model=model, tools=[FakeTool("t")])
    run.state.finishing = Finishing(StopReason.MAX_ITERATIONS, "max_iterations=1")
    decision = await run_phase(ReasoningPhase(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.output) == (StopReason.MAX_ITERATIONS, "final words")
    assert model.requests[0].tools == ()
    assert model.requests[0].tool_choice is ToolChoice.NONE


async def test_final_answer_marker_is_stripped() -> None:
    model = ScriptedModel(["Thinking done. FINAL_ANSWER: 42"])
    run = make_run(model=model, stop_when=FinalAnswerMarker())
    decision = await run_phase(ReasoningPhase(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.output) == (StopReason.FINAL_ANSWER, "42")


async def test_streams_deltas_when_someone_listens() -> None:
    events: list[Event] = []
    model = ScriptedModel([reply("two words", call("t", q="x"))])
    await run_phase(ReasoningPhase(), make_run(model=model, events=events))
    text = "".join(e.text for e in events if isinstance(e, TextStreamed))
    args = "".join(e.arguments_delta for e in events if isinstance(e, ToolCallStreamed))
    assert (text, args) == ("two words", '{"q":"x"}')


async def test_before_reasoning_hook_overrides_the_request() -> None:
    class Shorten(Hook):
        async def before_reasoning(self, run: Run, request: ModelRequest) -> Override[ModelRequest]:
            return Override(ModelRequest(messages=request.messages, instructions="hooked"))

    model = ScriptedModel(["ok"])
    await run_phase(ReasoningPhase(), make_run(model=model, hooks=[Shorten()]))
    assert model.requests[0].instructions == "hooked"


async def test_before_reasoning_stop_skips_the_model_call() -> None:
    class Deny(Hook):
        async def before_reasoning(self, run: Run, request: ModelRequest) -> StopRun:
            return StopRun("budget exhausted")

    model = ScriptedModel([])
    run = make_run(model=model, hooks=[Deny()])
    assert isinstance(await run_phase(ReasoningPhase(), run), Proceed)
    assert model.requests == []
    assert run.pending_stop is not None and run.pending_stop.reason is StopReason.HOOK_STOPPED


async def test_after_reasoning_hook_replaces_the_response() -> None:
    class Redact(Hook):
        async def after_reasoning(
            self, run: Run, response: ModelResponse
        ) -> Override[ModelResponse]:
            return Override(reply("[redacted]"))

    run = make_run(model=ScriptedModel(["secret"]), hooks=[Redact()])
    await run_phase(ReasoningPhase(), run)
    assert run.state.last_text() == "[redacted]"


async def test_prepare_step_changes_one_step() -> None:
    def only_t2(run: Run, plan: StepPlan) -> StepPlan:
        return StepPlan(plan.model, plan.tools[1:], plan.tool_choice, plan.messages[-1:], "step")

    model = ScriptedModel(["ok"])
    run = make_run(model=model, tools=[FakeTool("t1"), FakeTool("t2")], prepare_step=only_t2)
    await run_phase(ReasoningPhase(), run)
    assert [spec.name for spec in model.requests[0].tools] == ["t2"]
    assert model.requests[0].instructions == "step"
    assert list(run.offered_tools()) == ["t2"]


async def test_a_replaced_response_still_counts_the_tokens_the_call_spent() -> None:
    class Redact(Hook):
        async def after_reasoning(
            self, run: Run, response: ModelResponse
        ) -> Override[ModelResponse]:
            return Override(reply("[redacted]"))

    model = ScriptedModel([reply("secret", usage=Usage(40, 8))])
    run = make_run(model=model, hooks=[Redact()])
    await run_phase(ReasoningPhase(), run)
    assert run.state.usage == Usage(40, 8)
    assert run.state.current is not None and run.state.current.usage == Usage(40, 8)


async def test_a_retry_is_announced_with_its_wait_and_the_retries_left() -> None:
    async def sleep(seconds: float) -> None:
        return None

    events: list[Event] = []
    model = ScriptedModel([ProviderUnavailableError("down", status=503), "fine"])
    run = make_run(model=model, events=events, retry=RetryPolicy(jitter=0), sleep=sleep)
    await run_phase(ReasoningPhase(), run)
    retries = [e for e in events if isinstance(e, ModelRetrying)]
    assert retries == [ModelRetrying(1, ErrorCode.PROVIDER_UNAVAILABLE, 0.5, 1)]


async def test_tool_call_deltas_carry_the_calls_index_name_and_id() -> None:
    events: list[Event] = []
    first, second = ToolCall("a", "{}", "id-a"), ToolCall("b", "{}", "id-b")
    model = ScriptedModel([reply("", first, second)])
    await run_phase(ReasoningPhase(), make_run(model=model, events=events))
    starts = [
        (e.index, e.name, e.call_id)
        for e in events
        if isinstance(e, ToolCallStreamed) and e.name is not None
    ]
    assert starts == [(0, "a", "id-a"), (1, "b", "id-b")]


async def test_a_model_timeout_still_sends_the_request() -> None:
    model = ScriptedModel(["hi"])
    run = make_run(model=model, limits=Limits(model_timeout=60))
    await run_phase(ReasoningPhase(), run)
    assert model.requests[0].messages == tuple(run.state.messages[:1])


class Hanging(ScriptedModel):
    async def request(self, request: ModelRequest) -> ModelResponse:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_model_call_over_its_timeout_says_so() -> None:
    run = make_run(model=Hanging([]), limits=Limits(model_timeout=0.001), retry=RetryPolicy.never())
    with pytest.raises(ModelTimeoutError) as caught:
        await run_phase(ReasoningPhase(), run)
    assert caught.value.message == "model call exceeded its model_timeout of 0.001 s"


async def test_a_final_answer_stop_says_which_marker() -> None:
    model = ScriptedModel(["FINAL_ANSWER: 42"])
    run = make_run(model=model, stop_when=FinalAnswerMarker())
    decision = await run_phase(ReasoningPhase(), run)
    assert isinstance(decision, Stop) and decision.detail == "marker 'FINAL_ANSWER:'"


async def test_a_finishing_call_that_gives_a_final_answer_ends_with_that_answer() -> None:
    model = ScriptedModel(["thinking FINAL_ANSWER: 42"])
    run = make_run(model=model, stop_when=FinalAnswerMarker())
    run.state.finishing = Finishing(StopReason.MAX_ITERATIONS, "max_iterations=1")
    decision = await run_phase(ReasoningPhase(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.output) == (StopReason.MAX_ITERATIONS, "42")


async def test_the_request_carries_the_loops_settings_and_offers_its_tools() -> None:
    settings = ModelSettings(temperature=0.2)
    model = ScriptedModel(["hi"])
    run = make_run(model=model, tools=[FakeTool("t")], settings=settings)
    await run_phase(ReasoningPhase(), run)
    request = model.requests[0]
    assert (request.settings, request.tool_choice) == (settings, ToolChoice.AUTO)


async def test_prepare_step_is_given_the_run() -> None:
    seen: list[Run] = []

    def prepare(run: Run, plan: StepPlan) -> StepPlan:
        seen.append(run)
        return plan

    run = make_run(model=ScriptedModel(["hi"]), prepare_step=prepare)
    await run_phase(ReasoningPhase(), run)
    assert seen == [run]


OLD_TURN: list[Message] = [UserMessage("one " * 40), AssistantMessage("first " * 40)]


@pytest.mark.parametrize("extra", ["instructions", "tools"])
async def test_the_window_leaves_room_for_the_instructions_and_tools(extra: str) -> None:
    model = ScriptedModel(["hi"])
    messages = [*OLD_TURN, UserMessage("now")]
    spent = sum(DEFAULT_ESTIMATOR.count_message(m) for m in messages)
    options: dict[str, Any] = {"instructions": "be brief " * 10}
    if extra == "tools":
        options = {"tools": [FakeTool("t")]}
    run = make_run(model=model, messages=messages, **options)
    run.window = ContextWindow(spent + 5, 0).tracker()
    await run_phase(ReasoningPhase(), run)
    assert model.requests[0].messages == (UserMessage("now"),)


async def test_a_hook_stop_after_reasoning_wins_over_a_final_answer() -> None:
    class Halt(Hook):
        async def after_reasoning(self, run: Run, response: ModelResponse) -> StopRun:
            return StopRun("halt")

    model = ScriptedModel(["FINAL_ANSWER: 42"])
    run = make_run(model=model, hooks=[Halt()], stop_when=FinalAnswerMarker())
    assert isinstance(await run_phase(ReasoningPhase(), run), Proceed)
    assert run.pending_stop is not None and run.pending_stop.detail == "halt"

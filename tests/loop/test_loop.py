"""ReActLoop end to end: run, stream, composition, caps, concurrency, cancellation on early exit."""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Literal

import anyio
import pytest

from reactloop import (
    AssistantMessage,
    CapPolicy,
    ConfigurationError,
    ContextWindow,
    Event,
    FinalAnswerMarker,
    Limits,
    Message,
    ReActLoop,
    RunContext,
    StopReason,
    ToolMessage,
    Usage,
    UserMessage,
    tool,
)
from reactloop.errors import (
    AuthenticationError,
    ContextTooLongError,
    ErrorCode,
    ModelTimeoutError,
    ProviderUnavailableError,
    RateLimitedError,
    RunTimeoutError,
    ScriptExhaustedError,
)
from reactloop.events import (
    ModelRetrying,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextStreamed,
    ToolCallFinished,
    ToolCallStarted,
)
from reactloop.messages import RepairKind
from reactloop.models import ModelRequest
from reactloop.phases import NextIteration, PhaseDecision, Proceed, Run, RunLimiter, default_phases
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio


@tool
async def get_weather(city: str, units: Literal["c", "f"] = "c") -> str:
    """Current weather for a city.

    Args:
        city: City name.
        units: Temperature units.
    """
    return f"{city}: 21°{units.upper()}"


def weather_model() -> ScriptedModel:
    return ScriptedModel(
        [
            reply("", call("get_weather", city="Paris"), usage=Usage(10, 5)),
            reply("Sunny, 21°C.", usage=Usage(20, 4)),
        ]
    )


async def test_run_returns_output_steps_usage_and_tools_used() -> None:
    model = weather_model()
    result = await ReActLoop(model, tools=[get_weather], instructions="Travel.").run("Weather?")
    model.assert_complete()
    assert (result.output, result.stop_reason) == ("Sunny, 21°C.", StopReason.COMPLETED)
    assert result.usage == Usage(30, 9)
    assert result.tools_used == ("get_weather",)
    assert [len(step.tool_results) for step in result.steps] == [1, 0]
    assert isinstance(result.messages[2], ToolMessage) and result.messages[2].text == "Paris: 21°C"


async def test_stream_yields_typed_events_ending_with_the_result() -> None:
    loop = ReActLoop(weather_model(), tools=[get_weather])
    async with loop.stream("Weather?") as events:
        seen: list[Event] = [event async for event in events]
    kinds = {type(event) for event in seen}
    assert {
        RunStarted,
        StepStarted,
        TextStreamed,
        ToolCallStarted,
        ToolCallFinished,
        StepFinished,
    } <= kinds
    assert isinstance(seen[0], RunStarted) and isinstance(seen[-1], RunFinished)
    assert seen[-1].result.output == "Sunny, 21°C."


async def test_stream_and_run_produce_the_same_transcript() -> None:
    ran = await ReActLoop(weather_model(), tools=[get_weather]).run("Weather?")
    async with ReActLoop(weather_model(), tools=[get_weather]).stream("Weather?") as events:
        finished = [e async for e in events if isinstance(e, RunFinished)]
    streamed = finished[0].result
    assert [type(m) for m in ran.messages] == [type(m) for m in streamed.messages]
    assert ran.output == streamed.output and ran.usage == streamed.usage


async def test_breaking_out_of_the_stream_cancels_the_run() -> None:
    blocker = FakeTool("block", gate=anyio.Event())
    loop = ReActLoop(
        ScriptedModel([reply("", call("block"))]), tools=[blocker], limits=Limits(tool_timeout=None)
    )
    with anyio.fail_after(5):
        async with loop.stream("go") as events:
            async for event in events:
                if isinstance(event, ToolCallStarted):
                    break
    assert blocker.running == 0 and len(blocker.calls) == 1


async def test_iteration_cap_makes_one_final_call_without_tools() -> None:
    model = FunctionModel(lambda r: reply("", call("t")) if r.tools else reply("best effort"))
    result = await ReActLoop(model, tools=[FakeTool("t")], max_iterations=3).run("loop forever")
    assert (result.stop_reason, result.output) == (StopReason.MAX_ITERATIONS, "best effort")
    assert len(result.steps) == 4 and model.requests[-1].tools == ()


async def test_iteration_cap_can_stop_at_once() -> None:
    model = FunctionModel(lambda r: reply("thinking", call("t")))
    loop = ReActLoop(
        model, tools=[FakeTool("t")], max_iterations=2, limits=Limits(on_cap=CapPolicy.STOP_NOW)
    )
    result = await loop.run("go")
    assert result.stop_reason is StopReason.MAX_ITERATIONS and len(model.requests) == 2


async def test_tool_call_cap_removes_tools_then_answers() -> None:
    model = FunctionModel(lambda r: reply("", call("t"), call("t")) if r.tools else reply("done"))
    fake = FakeTool("t")
    result = await ReActLoop(model, tools=[fake], limits=Limits(max_tool_calls=3)).run("go")
    assert len(fake.calls) == 3
    assert (result.stop_reason, result.output) == (StopReason.MAX_TOOL_CALLS, "done")


async def test_stop_conditions_compose_with_or() -> None:
    model = ScriptedModel([reply("", call("t")), "FINAL_ANSWER: yes"])
    condition = FinalAnswerMarker() | FinalAnswerMarker("ANSWER>")
    result = await ReActLoop(model, tools=[FakeTool("t")], stop_when=condition).run("go")
    assert (result.stop_reason, result.output) == (StopReason.FINAL_ANSWER, "yes")


async def test_unanswered_calls_get_results_when_the_run_stops() -> None:
    model = FunctionModel(lambda r: reply("", call("t")))
    result = await ReActLoop(model, tools=[FakeTool("t")], max_iterations=1).run("go")
    calls = {c.id for m in result.messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    answered = {m.call_id for m in result.messages if isinstance(m, ToolMessage)}
    assert calls == answered


async def test_model_error_ends_the_run_with_a_typed_error() -> None:
    result = await ReActLoop(ScriptedModel([])).run("hi")
    assert result.stop_reason is StopReason.ERROR
    assert isinstance(result.error, ScriptExhaustedError) and not result.succeeded


async def test_instructions_function_is_evaluated_per_run() -> None:
    model = ScriptedModel(["a", "b"])
    loop = ReActLoop(model, instructions=lambda ctx: f"user={ctx.user_id}")
    await loop.run("x", user_id="ann")
    await loop.run("x", user_id="bob")
    assert [r.instructions for r in model.requests] == ["user=ann", "user=bob"]


async def test_tool_receives_the_run_context_with_deps() -> None:
    @tool
    async def whoami(ctx: RunContext[dict[str, str]]) -> str:
        """Who is asking."""
        return f"{ctx.deps['name']}/{ctx.session_id}"

    model = ScriptedModel([reply("", call("whoami")), "ok"])
    result = await ReActLoop(model, tools=[whoami]).run("x", deps={"name": "ann"}, session_id="s1")
    tool_message = result.messages[2]
    assert isinstance(tool_message, ToolMessage)
    assert tool_message.text == "ann/s1"


async def test_history_precedes_the_new_input() -> None:
    model = ScriptedModel(["ok"])
    await ReActLoop(model).run("second", history=[UserMessage("first"), reply("reply").message])
    assert [m.text for m in model.requests[0].messages] == ["first", "reply", "second"]


async def test_many_runs_share_one_loop_concurrently() -> None:
    def echo(request: ModelRequest) -> str:
        last = request.messages[-1]
        return f"echo {last.text}" if isinstance(last, UserMessage) else "?"

    loop = ReActLoop(FunctionModel(echo))
    outputs: dict[int, str | None] = {}

    async def one(i: int) -> None:
        outputs[i] = (await loop.run(str(i))).output

    async with anyio.create_task_group() as tasks:
        for i in range(50):
            tasks.start_soon(one, i)
    assert outputs == {i: f"echo {i}" for i in range(50)}


async def test_inserted_phase_can_request_another_pass() -> None:
    class Twice:
        async def __call__(self, run: Run) -> PhaseDecision:
            if run.state.iteration == 1:
                return NextIteration()
            return Proceed()

    model = ScriptedModel(["draft", "final"])
    phases = [*default_phases()[:3], Twice(), *default_phases()[3:]]
    result = await ReActLoop(model, phases=phases).run("go")
    assert result.output == "final" and len(result.steps) == 2


def test_duplicate_tool_names_are_rejected() -> None:
    with pytest.raises(ConfigurationError, match="unique"):
        ReActLoop(ScriptedModel([]), tools=[FakeTool("t"), FakeTool("t")])


def test_a_non_model_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="Model contract"):
        ReActLoop(object())  # type: ignore[call-overload]


async def test_repetition_nudges_then_stops_the_run() -> None:
    model = FunctionModel(lambda request: reply("", call("t", q="same")))
    result = await ReActLoop(model, tools=[FakeTool("t")], max_iterations=20).run("go")
    assert result.stop_reason is StopReason.REPETITION and len(result.steps) == 5
    assert "[note:" in result.steps[2].tool_results[0].content


async def test_run_timeout_ends_with_its_own_reason() -> None:
    blocker = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([reply("", call("block"))])
    result = await ReActLoop(
        model, tools=[blocker], limits=Limits(tool_timeout=None, run_timeout=0.1)
    ).run("go")
    assert result.stop_reason is StopReason.RUN_TIMEOUT
    assert isinstance(result.error, RunTimeoutError) and len(result.messages) == 3


async def test_model_timeout_is_a_typed_error() -> None:
    async def stall(request: ModelRequest) -> str:
        await anyio.Event().wait()
        return "never"

    async def no_wait(seconds: float) -> None:
        return None

    result = await ReActLoop(
        FunctionModel(stall), limits=Limits(model_timeout=0.001), sleep=no_wait
    ).run("go")
    assert isinstance(result.error, ModelTimeoutError) and result.error.code is ErrorCode.TIMEOUT
    assert result.error.attempts == 3


async def test_strict_mode_raises_the_error() -> None:
    with pytest.raises(ScriptExhaustedError):
        await ReActLoop(ScriptedModel([]), strict=True).run("go")


async def test_transient_model_errors_are_retried_with_injected_sleep() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    model = ScriptedModel([RateLimitedError("slow down", retry_after=1.5), "fine"])
    result = await ReActLoop(model, sleep=sleep).run("go")
    assert (result.output, waits) == ("fine", [1.5])


async def test_retries_are_announced_in_the_stream() -> None:
    async def sleep(seconds: float) -> None:
        return None

    model = ScriptedModel([ProviderUnavailableError("down", status=503), "fine"])
    async with ReActLoop(model, sleep=sleep).stream("go") as events:
        retries = [e async for e in events if isinstance(e, ModelRetrying)]
    assert [(r.attempt, r.code) for r in retries] == [(1, ErrorCode.PROVIDER_UNAVAILABLE)]


async def test_authentication_errors_are_not_retried() -> None:
    model = ScriptedModel([AuthenticationError("bad key", status=401), "never"])
    result = await ReActLoop(model).run("go")
    assert isinstance(result.error, AuthenticationError) and model.remaining == 1


async def test_failed_run_carries_a_user_facing_message() -> None:
    error = RateLimitedError("429 from upstream", quota_exhausted=True)
    result = await ReActLoop(ScriptedModel([error])).run("go")
    assert result.error is error
    assert result.user_message is not None and "429" not in result.user_message


async def test_concurrent_runs_are_limited() -> None:
    gate = anyio.Event()
    waiter = FakeTool("wait", gate=gate)
    model = FunctionModel(
        lambda r: reply("", call("wait")) if len(r.messages) == 1 else reply("done")
    )
    loop = ReActLoop(model, tools=[waiter], limits=Limits(max_concurrent_runs=2, tool_timeout=None))
    async with anyio.create_task_group() as tasks:
        for _ in range(4):
            tasks.start_soon(loop.run, "go")
        while len(waiter.calls) < 2:
            await anyio.lowlevel.checkpoint()
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert waiter.peak_running == 2 and len(waiter.calls) == 2
        gate.set()
    assert len(waiter.calls) == 4


def test_limit_options_are_exclusive() -> None:
    with pytest.raises(ConfigurationError, match="not both"):
        ReActLoop(
            ScriptedModel([]), limits=Limits(max_concurrent_runs=2, run_limiter=RunLimiter(2))
        )


async def consume_with_bug() -> None:
    async with ReActLoop(ScriptedModel(["hi"])).stream("go") as events:
        async for _ in events:
            raise KeyError("consumer bug")


async def test_an_error_in_the_stream_body_is_raised_unwrapped() -> None:
    with pytest.raises(KeyError):
        await consume_with_bug()


async def test_loop_closes_a_model_it_created_from_a_string() -> None:
    async with ReActLoop("openai-compatible:m@http://127.0.0.1:9/v1") as loop:
        client = loop.config.model._channel.client  # type: ignore[attr-defined]
    assert client.is_closed


def long_history(turns: int) -> list[Message]:
    history: list[Message] = []
    for i in range(turns):
        history += [UserMessage(f"question {i} " + "words " * 50), reply(f"answer {i}").message]
    return history


async def test_context_window_trims_requests_but_keeps_the_transcript() -> None:
    model = ScriptedModel(["ok"])
    loop = ReActLoop(model, context_window=ContextWindow(max_tokens=600, reserved_output=100))
    result = await loop.run("latest question", history=long_history(20))
    sent = model.requests[0].messages
    assert len(sent) < len(result.messages) - 1
    assert sent[-1] == UserMessage("latest question") and sent == tuple(
        result.messages[-len(sent) - 1 : -1]
    )


async def test_input_that_cannot_fit_fails_before_any_request() -> None:
    model = ScriptedModel(["never"])
    loop = ReActLoop(model, context_window=ContextWindow(max_tokens=200, reserved_output=100))
    result = await loop.run("word " * 2_000)
    assert isinstance(result.error, ContextTooLongError) and model.requests == []


async def test_stored_history_with_an_open_call_is_repaired() -> None:
    crashed: list[Message] = [UserMessage("earlier"), reply("", call("t", a=1)).message]
    model = ScriptedModel(["ok"])
    result = await ReActLoop(model, tools=[FakeTool("t")]).run("again", history=crashed)
    repaired = model.requests[0].messages[2]
    assert (
        isinstance(repaired, ToolMessage) and repaired.is_error and "interrupted" in repaired.text
    )
    assert [note.kind for note in result.repairs] == [RepairKind.INTERRUPTED_CALL]


class Abort(BaseException):
    """Not an `Exception`, like KeyboardInterrupt: tools do not catch it, the run does not end."""


@tool
async def explode() -> str:
    """Raises `Abort`."""
    raise Abort


def parallel_tools_one_aborting() -> ReActLoop:
    model = ScriptedModel([reply("", call("step"), call("explode"), call("step"))])
    return ReActLoop(model, tools=[FakeTool("step"), explode])


async def run_through(entry: str, loop: ReActLoop) -> None:
    if entry == "run":
        await loop.run("go")
    elif entry == "start":
        async with loop.start("go") as handle:
            await handle.result()
    else:
        async with loop.stream("go") as events:
            async for _ in events:
                pass


@pytest.mark.parametrize("entry", ["run", "start", "stream"])
async def test_a_lone_error_from_a_parallel_tool_escapes_bare(entry: str) -> None:
    with pytest.raises(Abort) as raised:
        await run_through(entry, parallel_tools_one_aborting())
    assert type(raised.value) is Abort


def test_the_orchestrator_stays_thin() -> None:
    """A new capability is a phase, a hook, a contract or a store: not a branch in the loop.
    (Read from the module it is written in: the class reports its public module, `reactloop`.)"""
    written = sys.modules["reactloop._loop._loop"]
    tree = ast.parse(inspect.getsource(written))
    [node] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ReActLoop"]
    assert ReActLoop.__module__ == "reactloop"
    assert (node.end_lineno or 0) - node.lineno + 1 < 150

"""ToolPhase: completion, concurrency, ordering, error results, caps, hooks, timeouts."""

from __future__ import annotations

from typing import Any

import anyio
import attrs
import pytest

from reactloop import (
    Event,
    Hook,
    Limits,
    Override,
    Reject,
    StopReason,
    StopRun,
    ToolCall,
    ToolCalled,
    tool,
)
from reactloop._core._state import RunContext
from reactloop._errors import (
    ReactLoopError,
    ToolArgumentsError,
    ToolExecutionError,
    ToolRefusedError,
    ToolTimeoutError,
    UnknownToolError,
)
from reactloop.errors import ErrorCode
from reactloop.events import ToolCallFinished, ToolCallStarted
from reactloop.phases import Proceed, Run, Stop, ToolPhase, ToolResult
from reactloop.testing import FakeClock, FakeTool, call, make_run, reply, run_phase

pytestmark = pytest.mark.anyio


def run_with(*calls: ToolCall, text: str = "", **kwargs: Any) -> Run:
    run = make_run(**kwargs)
    run.state.record_response(reply(text, *calls))
    return run


def results(run: Run) -> list[ToolResult]:
    assert run.state.current is not None
    return run.state.current.tool_results


async def test_text_answer_completes_the_run() -> None:
    decision = await run_phase(ToolPhase(), run_with(text="done"))
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.output) == (StopReason.COMPLETED, "done")


async def test_results_follow_the_models_order() -> None:
    a, b = FakeTool("a", result="A"), FakeTool("b", result="B")
    run = run_with(call("b"), call("a"), tools=[a, b])
    assert isinstance(await run_phase(ToolPhase(), run), Proceed)
    assert [r.content for r in results(run)] == ["B", "A"]
    assert run.state.tools_used == ["b", "a"]


async def test_calls_of_one_step_run_concurrently() -> None:
    gate = anyio.Event()
    slow = FakeTool("slow", gate=gate)
    opener = FakeTool("opener")

    class OpenGate(Hook):
        async def after_tool_call(self, run: Run, c: ToolCall, result: ToolResult) -> None:
            gate.set()

    run = run_with(
        call("slow"), call("slow"), call("opener"), tools=[slow, opener], hooks=[OpenGate()]
    )
    with anyio.fail_after(5):
        await run_phase(ToolPhase(), run)
    assert slow.peak_running == 2


async def test_concurrency_cap_is_respected() -> None:
    fake = FakeTool("t")
    run = run_with(*(call("t") for _ in range(5)), tools=[fake], limits=Limits(max_concurrency=2))
    await run_phase(ToolPhase(), run)
    assert fake.peak_running <= 2 and len(fake.calls) == 5


async def test_exclusive_tool_runs_alone() -> None:
    shared, alone = FakeTool("shared"), FakeTool("alone", exclusive=True)
    run = run_with(call("shared"), call("alone"), call("shared"), tools=[shared, alone])
    await run_phase(ToolPhase(), run)
    assert shared.peak_running == 1 and alone.peak_running == 1


async def test_unknown_tool_names_the_available_ones() -> None:
    run = run_with(call("hallucinated"), tools=[FakeTool("real")])
    await run_phase(ToolPhase(), run)
    [result] = results(run)
    assert result.is_error and "available tools are real" in result.content
    assert run.state.tools_used == []


async def test_invalid_arguments_become_an_error_result() -> None:
    @tool
    def square(x: int) -> int:
        """Square it."""
        return x * x

    run = run_with(call("square", x="seven"), tools=[square])
    await run_phase(ToolPhase(), run)
    [result] = results(run)
    assert result.is_error and "expected integer" in result.content


async def test_tool_exception_becomes_an_error_result() -> None:
    run = run_with(call("t"), tools=[FakeTool("t", raises=ValueError("bad city"))])
    await run_phase(ToolPhase(), run)
    [result] = results(run)
    assert result.is_error and "ValueError: bad city" in result.content
    assert result.error_code is ErrorCode.TOOL_ERROR


async def test_timeout_becomes_an_error_result() -> None:
    stuck = FakeTool("stuck", gate=anyio.Event(), timeout=0.001)
    run = run_with(call("stuck"), tools=[stuck])
    await run_phase(ToolPhase(), run)
    [result] = results(run)
    assert result.is_error and result.error_code is ErrorCode.TIMEOUT


async def test_run_wide_default_timeout_applies() -> None:
    run = run_with(
        call("stuck"),
        tools=[FakeTool("stuck", gate=anyio.Event())],
        limits=Limits(tool_timeout=0.001),
    )
    await run_phase(ToolPhase(), run)
    assert "timed out" in results(run)[0].content


async def test_non_string_results_are_json() -> None:
    run = run_with(call("t"), tools=[FakeTool("t", result={"temp": 21, "ok": True})])
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == '{"temp":21,"ok":true}'


async def test_oversized_results_are_cut_with_a_marker() -> None:
    run = run_with(
        call("t"), tools=[FakeTool("t", result="x" * 50)], limits=Limits(max_result_chars=10)
    )
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == "x" * 10 + "\n[truncated: 40 of 50 characters cut]"


async def test_calls_over_the_cap_get_an_error_instead_of_running() -> None:
    fake = FakeTool("t")
    run = run_with(call("t"), call("t"), call("t"), tools=[fake], limits=Limits(max_tool_calls=2))
    await run_phase(ToolPhase(), run)
    assert len(fake.calls) == 2
    assert [r.is_error for r in results(run)] == [False, False, True]
    assert run.state.tool_calls_made == 2


async def test_hook_rejects_one_call_while_others_run() -> None:
    class NoDelete(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Reject | None:
            return Reject("deleting is not allowed") if c.name == "delete" else None

    delete, read = FakeTool("delete"), FakeTool("read")
    run = run_with(call("delete"), call("read"), tools=[delete, read], hooks=[NoDelete()])
    await run_phase(ToolPhase(), run)
    assert delete.calls == [] and len(read.calls) == 1
    assert "deleting is not allowed" in results(run)[0].content


async def test_hook_changes_arguments() -> None:
    class Clamp(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Override[ToolCall]:
            return Override(ToolCall.of(c.name, {"limit": 5}, id=c.id))

    fake = FakeTool("t")
    await run_phase(ToolPhase(), run_with(call("t", limit=999), tools=[fake], hooks=[Clamp()]))
    assert fake.calls == [{"limit": 5}]


async def test_hook_stop_runs_nothing_and_keeps_pairs() -> None:
    class Halt(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> StopRun | None:
            return StopRun("kill switch") if c.name == "b" else None

    a, b = FakeTool("a"), FakeTool("b")
    run = run_with(call("a"), call("b"), tools=[a, b], hooks=[Halt()])
    assert isinstance(await run_phase(ToolPhase(), run), Proceed)
    assert a.calls == [] and b.calls == []
    assert all(r.is_error for r in results(run)) and len(results(run)) == 2
    assert run.pending_stop is not None and run.pending_stop.detail == "kill switch"


async def test_after_tool_hook_replaces_the_result() -> None:
    class Mask(Hook):
        async def after_tool_call(
            self, run: Run, c: ToolCall, r: ToolResult
        ) -> Override[ToolResult]:
            return Override(ToolResult(r.call_id, r.name, "***"))

    run = run_with(call("t"), tools=[FakeTool("t", result="secret")], hooks=[Mask()])
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == "***"


async def test_tool_called_condition_stops_with_its_result() -> None:
    run = run_with(
        call("answer"), tools=[FakeTool("answer", result="Paris")], stop_when=ToolCalled({"answer"})
    )
    decision = await run_phase(ToolPhase(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.output) == (StopReason.TOOL_CALLED, "Paris")


async def test_result_events_report_ok_and_error() -> None:
    events: list[Event] = []
    run = run_with(call("good"), call("nope"), tools=[FakeTool("good")], events=events)
    await run_phase(ToolPhase(), run)
    oks = [e.ok for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(oks) == [False, True]


async def test_repeated_call_gets_a_nudge_in_its_result() -> None:
    run = run_with(call("t", q="same"), tools=[FakeTool("t")])
    run.state.note_call(("t", '{"q":"same"}'))
    run.state.note_call(("t", '{"q":"same"}'))
    await run_phase(ToolPhase(), run)
    assert "called 3 times in a row" in results(run)[0].content


async def test_different_arguments_reset_the_streak() -> None:
    run = run_with(call("t", q="new"), tools=[FakeTool("t")])
    run.state.note_call(("t", '{"q":"same"}'))
    run.state.note_call(("t", '{"q":"same"}'))
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == "ok" and run.state.repeat_count == 1


class ErrorLog(Hook):
    def __init__(self) -> None:
        self.errors: list[ReactLoopError] = []

    async def on_error(self, run: Run, error: ReactLoopError) -> None:
        self.errors.append(error)


class RejectAll(Hook):
    async def before_tool_call(self, run: Run, c: ToolCall) -> Reject:
        return Reject("not today")


def _failures() -> dict[str, tuple[ToolCall, dict[str, Any], type[ReactLoopError]]]:
    stuck = FakeTool("t", gate=anyio.Event(), timeout=0.001)
    return {
        "unknown": (call("ghost"), {}, UnknownToolError),
        "bad-arguments": (ToolCall("t", "{not json"), {}, ToolArgumentsError),
        "rejected": (call("t"), {"hooks": [RejectAll()]}, ToolRefusedError),
        "over-the-cap": (call("t"), {"limits": Limits(max_tool_calls=1)}, ToolRefusedError),
        "raised": (
            call("t"),
            {"tools": [FakeTool("t", raises=ValueError("x"))]},
            ToolExecutionError,
        ),
        "timed-out": (call("t"), {"tools": [stuck]}, ToolTimeoutError),
    }


@pytest.mark.parametrize(
    "case", ["unknown", "bad-arguments", "rejected", "over-the-cap", "raised", "timed-out"]
)
async def test_on_error_hooks_hear_every_call_that_failed_or_was_refused(case: str) -> None:
    made, options, kind = _failures()[case]
    log = ErrorLog()
    options = {"tools": [FakeTool("t")], **options}
    options["hooks"] = [log, *options.get("hooks", [])]
    run = run_with(made, **options)
    if "limits" in options:
        run.state.tool_calls_made = 1
    await run_phase(ToolPhase(), run)
    [result] = results(run)
    assert result.is_error
    assert [type(error) for error in log.errors] == [kind]
    assert log.errors[0].message == result.content


async def test_successful_calls_do_not_reach_on_error_hooks() -> None:
    log = ErrorLog()
    await run_phase(ToolPhase(), run_with(call("t"), tools=[FakeTool("t")], hooks=[log]))
    assert log.errors == []


async def test_tool_called_does_not_stop_after_a_different_tool() -> None:
    run = run_with(call("search"), tools=[FakeTool("search")], stop_when=ToolCalled({"answer"}))
    assert isinstance(await run_phase(ToolPhase(), run), Proceed)


async def test_overridden_arguments_are_validated_against_the_schema() -> None:
    @tool
    def lookup(limit: int) -> str:
        """Look up.

        Args:
            limit: How many.
        """
        return "ran"

    class Loosen(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Override[ToolCall]:
            return Override(c.with_arguments({"limit": "many"}))

    events: list[Event] = []
    run = run_with(call("lookup", limit=3), tools=[lookup], hooks=[Loosen()], events=events)
    await run_phase(ToolPhase(), run)
    (result,) = results(run)
    assert result.is_error and "invalid arguments for tool 'lookup'" in result.content
    started = [e.call for e in events if isinstance(e, ToolCallStarted)]
    assert [c.arguments for c in started] == ['{"limit":"many"}']


@pytest.mark.parametrize(
    "case", ["unknown", "bad arguments", "over the cap", "rejected", "stopping"]
)
async def test_a_refused_call_has_its_started_event_before_its_result(case: str) -> None:
    class Refuse(Hook):
        async def before_tool_call(self, run: Run, c: ToolCall) -> Reject | StopRun:
            return Reject("no") if case == "rejected" else StopRun("halt")

    cases: dict[str, dict[str, Any]] = {
        "unknown": {"tools": []},
        "bad arguments": {"tools": [FakeTool("t")]},
        "over the cap": {"tools": [FakeTool("t")], "limits": Limits(max_tool_calls=1)},
        "rejected": {"tools": [FakeTool("t")], "hooks": [Refuse()]},
        "stopping": {"tools": [FakeTool("t")], "hooks": [Refuse()]},
    }
    options = cases[case]
    events: list[Event] = []
    arguments = "[1]" if case == "bad arguments" else "{}"
    run = run_with(
        ToolCall("t", arguments, "c1"), ToolCall("t", arguments, "c2"), events=events, **options
    )
    run.state.tool_calls_made = 1 if case == "over the cap" else 0
    await run_phase(ToolPhase(), run)
    kinds = [(type(e).__name__, call_id(e)) for e in events]
    assert kinds == [
        ("ToolCallStarted", "c1"),
        ("ToolCallFinished", "c1"),
        ("ToolCallStarted", "c2"),
        ("ToolCallFinished", "c2"),
    ]
    assert all(r.is_error for r in results(run))


def call_id(event: Event) -> str:
    if isinstance(event, ToolCallStarted):
        return event.call.id
    assert isinstance(event, ToolCallFinished)
    return event.result.call_id


class SloppyTool(FakeTool):
    """A custom tool whose `parse_arguments` breaks its contract."""

    def parse_arguments(self, arguments: str) -> Any:
        if arguments == "raise":
            raise ValueError("cannot parse")
        return ["not", "a", "dict"]


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [("raise", "raised ValueError: cannot parse"), ("{}", "returned list, not a dict")],
)
async def test_a_broken_parse_arguments_becomes_an_error_result(arguments: str, shown: str) -> None:
    sloppy = SloppyTool("t")
    run = run_with(ToolCall("t", arguments), tools=[sloppy])
    assert isinstance(await run_phase(ToolPhase(), run), Proceed)
    (result,) = results(run)
    assert result.is_error and shown in result.content and sloppy.calls == []
    assert result.error_code is ErrorCode.TOOL_ERROR


# --- what error results say, how long calls took, what on-error hooks get -------------------


class Slow(FakeTool):
    """A fake tool that takes `seconds` on the run's fake clock."""

    def __init__(self, name: str, clock: FakeClock, seconds: float, **options: Any) -> None:
        super().__init__(name, **options)
        self.clock, self.seconds = clock, seconds

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        self.clock.advance(self.seconds)
        return await super().invoke(arguments, context)


@pytest.mark.parametrize("raises", [None, ValueError("x")], ids=["ok", "raised"])
async def test_a_result_carries_how_long_its_call_took(raises: Exception | None) -> None:
    clock = FakeClock(now=100.0)
    run = run_with(call("t"), tools=[Slow("t", clock, 2.5, raises=raises)], clock=clock)
    await run_phase(ToolPhase(), run)
    [result] = results(run)
    assert (result.is_error, result.duration) == (raises is not None, 2.5)


class Unshowable(FakeTool):
    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        return object()


@pytest.mark.parametrize(
    ("tool_", "content"),
    [
        (FakeTool("t", raises=ValueError("bad city")), "tool 't' raised ValueError: bad city"),
        (SloppyTool("t"), "tool 't' raised TypeError: parse_arguments returned list, not a dict"),
        (
            Unshowable("t"),
            "tool 't' raised TypeError: its result cannot be shown: Type is not JSON serializable: "
            "object",
        ),
    ],
    ids=["raised", "parse", "unshowable"],
)
async def test_an_error_result_names_the_tool_and_what_went_wrong(
    tool_: FakeTool, content: str
) -> None:
    run = run_with(call("t"), tools=[tool_])
    await run_phase(ToolPhase(), run)
    assert [(r.is_error, r.content) for r in results(run)] == [(True, content)]


async def test_a_timeout_result_names_the_tool_and_its_limit() -> None:
    stuck = FakeTool("stuck", gate=anyio.Event(), timeout=0.001)
    run = run_with(call("stuck"), tools=[stuck])
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == "tool 'stuck' timed out after 0.001 s (its timeout)"


@pytest.mark.parametrize("arguments", ["raise", "{}"], ids=["invoke", "parse_arguments"])
async def test_on_error_hooks_get_the_original_exception_as_the_cause(arguments: str) -> None:
    log = ErrorLog()
    failing = SloppyTool("t") if arguments == "raise" else FakeTool("t", raises=KeyError("k"))
    run = run_with(ToolCall("t", arguments), tools=[failing], hooks=[log])
    await run_phase(ToolPhase(), run)
    [error] = log.errors
    cause = error.__cause__
    assert isinstance(cause, ValueError if arguments == "raise" else KeyError)


async def test_on_error_hooks_of_a_refused_call_get_the_run() -> None:
    seen: list[Run] = []

    class Watch(Hook):
        async def on_error(self, run: Run, error: ReactLoopError) -> None:
            seen.append(run)

    run = run_with(call("ghost"), tools=[FakeTool("t")], hooks=[Watch()])
    await run_phase(ToolPhase(), run)
    assert seen == [run]


@attrs.frozen
class Forecast:
    city: str
    degrees: int


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Forecast("Paris", 18), '{"city":"Paris","degrees":18}'),
        ({1: "one"}, '{"1":"one"}'),
        ({"b", "a"}, '["a","b"]'),
    ],
    ids=["attrs", "int-keys", "set"],
)
async def test_a_result_is_shown_as_json(value: object, text: str) -> None:
    run = run_with(call("t"), tools=[FakeTool("t", result=value)])
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == text


async def test_a_result_exactly_at_the_limit_is_kept_whole() -> None:
    run = run_with(
        call("t"), tools=[FakeTool("t", result="x" * 20)], limits=Limits(max_result_chars=20)
    )
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == "x" * 20


async def test_a_step_without_a_response_yet_proceeds() -> None:
    assert isinstance(await run_phase(ToolPhase(), make_run()), Proceed)


async def test_an_interrupt_requested_during_the_tools_stops_after_them() -> None:
    run = run_with(call("t"), tools=[FakeTool("t")])
    run.request_interrupt("bye")
    decision = await run_phase(ToolPhase(), run)
    assert isinstance(decision, Stop)
    assert (decision.reason, decision.output) == (StopReason.INTERRUPTED, "bye")
    assert [r.content for r in results(run)] == ["ok"]


async def test_a_tool_called_stop_says_which_tool() -> None:
    run = run_with(call("answer"), tools=[FakeTool("answer")], stop_when=ToolCalled({"answer"}))
    decision = await run_phase(ToolPhase(), run)
    assert isinstance(decision, Stop) and decision.detail == "tool 'answer' was called"


async def test_a_nudge_tells_the_model_the_result_will_not_change() -> None:
    run = run_with(call("t", q="same"), tools=[FakeTool("t")])
    run.state.note_call(("t", '{"q":"same"}'))
    run.state.note_call(("t", '{"q":"same"}'))
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == (
        "ok\n[note: 't' was called 3 times in a row with the same arguments; the result will "
        "not change. Try something else or answer.]"
    )


class StopOnSecond(Hook):
    """Lets the first call through and stops the run at the second."""

    async def before_tool_call(self, run: Run, c: ToolCall) -> StopRun | None:
        return StopRun("enough") if c.id == "c2" else None


REFUSALS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "unknown": ({"tools": []}, ["unknown tool 't': the available tools are (none)"] * 2),
    "rejected": (
        {"hooks": [RejectAll()]},
        ["tool call 't' was not run: rejected: not today"] * 2,
    ),
    "over the cap": (
        {"limits": Limits(max_tool_calls=1)},
        ["tool call 't' was not run: the run's tool-call limit is reached"] * 2,
    ),
    "stopping": (
        {"hooks": [StopOnSecond()]},
        [
            "tool call 't' was not run: run stopping",
            "tool call 't' was not run: the run is stopping",
        ],
    ),
}


@pytest.mark.parametrize("case", REFUSALS)
async def test_a_refused_call_says_which_tool_and_why(case: str) -> None:
    options, contents = REFUSALS[case]
    run = run_with(
        ToolCall("t", "{}", "c1"),
        ToolCall("t", "{}", "c2"),
        **{"tools": [FakeTool("t")], **options},
    )
    run.state.tool_calls_made = 1 if case == "over the cap" else 0
    await run_phase(ToolPhase(), run)
    assert [r.content for r in results(run)] == contents


async def test_a_set_of_mixed_items_is_shown_in_a_stable_order() -> None:
    run = run_with(call("t"), tools=[FakeTool("t", result={1, "a"})])
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == '["a",1]'


async def test_a_refused_call_took_no_time() -> None:
    run = run_with(call("ghost"), tools=[FakeTool("t")])
    await run_phase(ToolPhase(), run)
    assert results(run)[0].duration == 0.0


async def test_a_raising_parse_arguments_is_reported_under_the_tools_name() -> None:
    run = run_with(ToolCall("t", "raise"), tools=[SloppyTool("t")])
    await run_phase(ToolPhase(), run)
    assert results(run)[0].content == "tool 't' raised ValueError: cannot parse"


async def test_a_refused_call_cut_between_its_two_events_is_owed_its_result_event() -> None:
    nowhere = call("nowhere")  # an unknown tool: refused, never run
    run = run_with(nowhere)
    with anyio.CancelScope() as scope:

        async def cut_after_started(event: Event) -> None:
            if isinstance(event, ToolCallStarted):
                scope.cancel()
                await anyio.lowlevel.checkpoint()

        run.sink = cut_after_started
        await run_phase(ToolPhase(), run)
    assert scope.cancelled_caught
    assert run.call_outcomes == {nowhere.id: None}  # owed: the run's end gives its result event

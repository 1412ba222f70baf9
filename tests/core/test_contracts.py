"""User code that breaks its run-time contract ends the run with `stop_reason=error` and a
`ContractError` naming the culprit, whether the run is awaited or streamed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from reactloop import Override, ReActLoop, Reject, RunContext, RunResult, StopReason, StopRun
from reactloop._core._contracts import DeltaSink, StopCondition
from reactloop._core._messages import UserMessage
from reactloop._errors import ContractError, ErrorCode, HookError
from reactloop.events import RunFinished
from reactloop.models import ModelRequest
from reactloop.phases import Proceed, Run, StepPlan, default_phases, default_start_phases
from reactloop.stopping import CheckPoint, StopSignal
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio


class WrongTypeModel:
    """A model whose calls return text instead of a ModelResponse."""

    async def request(self, request: ModelRequest) -> Any:
        return "plain text"

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> Any:
        return "plain text"


class SyncModel:
    """A model whose methods are not async."""

    def request(self, request: ModelRequest) -> Any:
        return reply("hi")

    def stream(self, request: ModelRequest, on_delta: DeltaSink) -> Any:
        return reply("hi")


def returns_none(run: Run, plan: StepPlan) -> Any:
    return None


async def returns_a_dict(run: Run, plan: StepPlan) -> Any:
    return {"messages": plan.messages}


def plan_with_a_model_name(run: Run, plan: StepPlan) -> StepPlan:
    wrong: Any = "gpt-4o"
    return attrs.evolve(plan, model=wrong)


def phase_returning(value: object) -> Callable[[Run], Any]:
    async def returns_junk(run: Run) -> Any:
        return value

    return returns_junk


def sync_phase(run: Run) -> Any:
    return Proceed()


def no_instructions(context: RunContext[Any]) -> Any:
    return None


async def byte_instructions(context: RunContext[Any]) -> Any:
    return b"be brief"


class YesCondition(StopCondition):
    def check(self, run: Run, at: CheckPoint) -> Any:
        return True


class TextAllowance(StopCondition):
    def check(self, run: Run, at: CheckPoint) -> StopSignal | None:
        return None

    def tool_call_allowance(self, run: Run) -> Any:
        return "3"


def guard_returning_false(text: str) -> Any:
    return False


def base() -> dict[str, Any]:
    model = ScriptedModel([reply("", call("t")), "done"])
    return {"model": model, "tools": [FakeTool("t")]}


def case(culprit: str, **changes: Any) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        return {**base(), **changes, "culprit": culprit}

    return build


CASES = {
    "prepare_step returns None": case("prepare_step returns_none", prepare_step=returns_none),
    "prepare_step returns a dict": case("prepare_step returns_a_dict", prepare_step=returns_a_dict),
    "prepare_step plans with a string model": case(
        "prepare_step plan_with_a_model_name", prepare_step=plan_with_a_model_name
    ),
    "phase returns None": case(
        "phase phase_returning.<locals>.returns_junk",
        phases=[*default_phases(), phase_returning(None)],
    ),
    "phase returns a string": case(
        "phase phase_returning.<locals>.returns_junk",
        phases=[phase_returning("proceed"), *default_phases()],
    ),
    "start phase returns True": case(
        "phase phase_returning.<locals>.returns_junk",
        start_phases=[*default_start_phases(), phase_returning(True)],
    ),
    "phase is not async": case("phase sync_phase", phases=[sync_phase, *default_phases()]),
    "model returns text": case("model WrongTypeModel", model=WrongTypeModel()),
    "model is not async": case("model SyncModel", model=SyncModel()),
    "instructions return None": case("instructions no_instructions", instructions=no_instructions),
    "instructions return bytes": case(
        "instructions byte_instructions", instructions=byte_instructions
    ),
    "stop condition returns True": case("stop condition YesCondition", stop_when=YesCondition()),
    "tool-call allowance is text": case("stop condition TextAllowance", stop_when=TextAllowance()),
    "input guard returns False": case(
        "input guard guard_returning_false", input_guards=[guard_returning_false]
    ),
}


def loop_of(options: dict[str, Any]) -> tuple[ReActLoop, str]:
    options = dict(options)
    culprit = options.pop("culprit")
    return ReActLoop(options.pop("model"), **options), culprit


def assert_contract_broken(result: RunResult, culprit: str) -> None:
    assert result.stop_reason is StopReason.ERROR
    error = result.error
    assert isinstance(error, ContractError) and not isinstance(error, HookError)
    assert error.code is ErrorCode.CONTRACT and error.culprit == culprit
    assert f"{culprit} broke its contract: {error.rule}; got" in error.message
    assert result.stop_detail == error.message and result.user_message


@pytest.mark.parametrize("name", CASES)
async def test_a_broken_contract_ends_an_awaited_run(name: str) -> None:
    loop, culprit = loop_of(CASES[name]())
    assert_contract_broken(await loop.run("go"), culprit)


@pytest.mark.parametrize("name", CASES)
async def test_a_broken_contract_ends_a_streamed_run(name: str) -> None:
    loop, culprit = loop_of(CASES[name]())
    async with loop.stream("go") as events:
        finished = [event async for event in events][-1]
    assert isinstance(finished, RunFinished)
    assert_contract_broken(finished.result, culprit)


def test_the_error_names_the_value_it_got() -> None:
    error = ContractError("phase P", "a phase returns a decision", None)
    assert error.message == "phase P broke its contract: a phase returns a decision; got None"
    assert (error.culprit, error.rule, error.value) == (
        "phase P",
        "a phase returns a decision",
        None,
    )


@pytest.mark.parametrize("decision", [StopRun("halt"), Reject("no"), Override(None)])
async def test_a_hook_decision_from_a_phase_names_the_phase_decision(decision: object) -> None:
    loop, _ = loop_of(case("phase", phases=[phase_returning(decision), *default_phases()])())
    result = await loop.run("go")
    assert isinstance(result.error, ContractError)
    assert "is a hook's decision; a phase ends the run with Stop" in result.error.rule


def test_a_huge_value_is_cut_in_the_message() -> None:
    error = ContractError("model M", "returns a ModelResponse", "x" * 10_000)
    assert len(error.message) < 400 and "(str)" in error.message


async def test_well_behaved_code_meets_every_contract() -> None:
    async def plan_as_is(run: Run, plan: StepPlan) -> StepPlan:
        return plan

    def guard(text: str) -> str | None:
        return None

    loop = ReActLoop(
        **base(), prepare_step=plan_as_is, input_guards=[guard], instructions=lambda c: "hi"
    )
    result = await loop.run("go")
    assert (result.stop_reason, result.output) == (StopReason.COMPLETED, "done")


async def test_a_model_response_is_still_accepted_from_a_stream() -> None:
    model = ScriptedModel(["fine"])
    async with ReActLoop(model).stream("go") as events:
        finished = [event async for event in events][-1]
    assert isinstance(finished, RunFinished) and finished.result.output == "fine"


STEP_PLAN = "prepare_step returns a StepPlan (e.g. attrs.evolve(plan, ...))"
DECISION = "a phase returns a decision: Proceed, NextIteration or Stop"
RULES: dict[str, tuple[str, object]] = {
    "prepare_step returns None": (STEP_PLAN, None),
    "prepare_step returns a dict": (STEP_PLAN, {"messages": (UserMessage("go"),)}),
    "prepare_step plans with a string model": ("the plan's model implements Model", "gpt-4o"),
    "phase returns None": (DECISION, None),
    "phase returns a string": (DECISION, "proceed"),
    "start phase returns True": (DECISION, True),
    "phase is not async": (
        "a phase is async: `async def __call__(self, run)` or an async function of the run",
        Proceed(),
    ),
    "model returns text": ("Model.{method} returns a ModelResponse", "plain text"),
    "model is not async": ("Model.{method} is async: it returns an awaitable", reply("hi")),
    "instructions return None": ("an instructions function returns a str", None),
    "instructions return bytes": ("an instructions function returns a str", b"be brief"),
    "stop condition returns True": ("StopCondition.check returns a StopSignal or None", True),
    "tool-call allowance is text": (
        "StopCondition.tool_call_allowance returns an int or None",
        "3",
    ),
    "input guard returns False": (
        "an input guard returns None to accept, or a reason (str) to reject",
        False,
    ),
}


async def result_of(loop: ReActLoop, streamed: bool) -> RunResult:
    if not streamed:
        return await loop.run("go")
    async with loop.stream("go") as events:
        finished = [event async for event in events][-1]
    assert isinstance(finished, RunFinished)
    return finished.result


@pytest.mark.parametrize("streamed", [False, True], ids=["awaited", "streamed"])
@pytest.mark.parametrize("name", CASES)
async def test_a_broken_contract_names_the_rule_and_the_value(name: str, streamed: bool) -> None:
    loop, _ = loop_of(CASES[name]())
    error = (await result_of(loop, streamed)).error
    rule, value = RULES[name]
    assert isinstance(error, ContractError)
    assert error.rule == rule.format(method="stream" if streamed else "request")
    assert error.value == value

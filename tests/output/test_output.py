"""Structured output: the final answer becomes a typed value (validated, repaired, checked by the
user's validators) on each strategy, also when a cap forces the last call, and it is stored."""

from __future__ import annotations

from typing import Any, Literal, assert_type

import attrs
import orjson
import pytest

from reactloop._core._contracts import Hook
from reactloop._core._decisions import PROCEED, StopReason, StopRun
from reactloop._core._messages import (
    AssistantMessage,
    ForcedTool,
    ModelRequest,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._core._settings import ResponseFormatKind
from reactloop._core._state import RunContext
from reactloop._durable._stores import MemoryStore
from reactloop._errors import ConfigurationError, ErrorCode
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._output._spec import FINAL_TOOL, OutputRetry, OutputStrategy, OutputValidationError
from reactloop._phases.output import OutputPhase
from reactloop.output import OutputOptions
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel, call, make_run, run_phase

pytestmark = pytest.mark.anyio


@attrs.frozen
class Invoice:
    customer: str
    total: float
    paid: bool = False


def final(**arguments: Any) -> ToolCall:
    return call(FINAL_TOOL, **arguments)


async def test_the_final_answer_tool_gives_a_typed_value() -> None:
    model = ScriptedModel([final(customer="Ann", total=12.5)])
    loop = ReActLoop(model, output_type=Invoice)
    result = await loop.run("bill Ann")
    assert result.output == Invoice("Ann", 12.5) and result.stop_reason is StopReason.COMPLETED
    [tool] = model.requests[0].tools
    assert tool.name == FINAL_TOOL and tool.parameters["required"] == ["customer", "total"]


async def test_tools_first_then_the_final_answer() -> None:
    lookup = FakeTool("lookup", result="Ann owes 12.5")
    model = ScriptedModel([call("lookup", who="Ann"), final(customer="Ann", total=12.5)])
    result = await ReActLoop(model, tools=[lookup], output_type=Invoice).run("bill Ann")
    assert lookup.calls == [{"who": "Ann"}] and result.output == Invoice("Ann", 12.5)


async def test_an_invalid_answer_goes_back_naming_what_was_wrong_then_a_valid_one_ends() -> None:
    model = ScriptedModel([final(customer="Ann", total="lots"), final(customer="Ann", total=3)])
    result = await ReActLoop(model, output_type=Invoice).run("bill Ann")
    assert result.output == Invoice("Ann", 3.0)
    [error] = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert error.is_error and "total" in error.text and "number" in error.text


async def test_after_the_retries_the_run_fails_with_the_last_raw_answer() -> None:
    bad = final(customer="Ann")
    model = ScriptedModel([bad, bad, bad])
    result = await ReActLoop(model, output_type=Invoice, output=OutputOptions(retries=2)).run(
        "bill"
    )
    assert isinstance(result.error, OutputValidationError) and result.output is None
    assert result.error.raw == bad.arguments and result.error.attempts == 3
    assert "total" in result.error.problem and len(model.requests) == 3


async def test_a_text_answer_on_the_tool_strategy_is_asked_to_call_the_tool() -> None:
    model = ScriptedModel(["Ann owes 12.5", final(customer="Ann", total=12.5)])
    result = await ReActLoop(model, output_type=Invoice).run("bill")
    assert result.output == Invoice("Ann", 12.5)
    assert isinstance(model.requests[1].messages[-1], UserMessage)
    assert FINAL_TOOL in model.requests[1].messages[-1].text


async def test_validators_change_the_value_or_send_it_back() -> None:
    seen: list[str] = []

    def positive(value: Invoice) -> Invoice:
        if value.total <= 0:
            raise OutputRetry("the total must be positive")
        return attrs.evolve(value, customer=value.customer.upper())

    async def with_context(value: Invoice, context: RunContext[Any]) -> Invoice:
        seen.append(context.run_id)
        return value

    model = ScriptedModel([final(customer="ann", total=-1), final(customer="ann", total=2)])
    loop = ReActLoop(
        model, output_type=Invoice, output=OutputOptions(validators=[positive, with_context])
    )
    result = await loop.run("bill")
    assert result.output == Invoice("ANN", 2.0) and seen == [result.run_id]
    [error] = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert "the total must be positive" in error.text


async def test_the_prompted_strategy_puts_the_schema_in_the_instructions() -> None:
    model = ScriptedModel(['```json\n{"customer": "Ann", "total": 1}\n```'])
    loop = ReActLoop(model, instructions="Be brief.", output_type=Invoice,
                     output=OutputOptions(strategy=OutputStrategy.PROMPTED))  # fmt: skip
    result = await loop.run("bill")
    assert result.output == Invoice("Ann", 1.0)
    instructions = model.requests[0].instructions or ""
    assert instructions.startswith("Be brief.") and '"customer"' in instructions
    assert model.requests[0].tools == ()


async def test_the_native_strategy_asks_for_a_strict_json_schema_response() -> None:
    model = ScriptedModel(['{"result": ["a", "b"]}'])
    loop = ReActLoop(
        model, output_type=list[str], output=OutputOptions(strategy=OutputStrategy.NATIVE)
    )
    result = await loop.run("list")
    assert result.output == ["a", "b"]
    fmt = model.requests[0].settings.response_format
    assert fmt is not None and fmt.kind is ResponseFormatKind.JSON_SCHEMA and fmt.strict
    assert fmt.schema is not None and fmt.schema["required"] == ["result"]


@pytest.mark.parametrize(
    ("output_type", "answer", "expected"),
    [
        (int, 42, 42),
        (list[str], ["a"], ["a"]),
        (Literal["yes", "no"], "no", "no"),
        (Invoice | None, None, None),
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}, {"a": 1}),
    ],
    ids=["int", "list", "literal", "optional-class", "raw-schema"],
)
async def test_every_kind_of_output_type(output_type: Any, answer: Any, expected: Any) -> None:
    object_schema = isinstance(output_type, dict)
    arguments = answer if object_schema else {"result": answer}
    model = ScriptedModel([ToolCall(FINAL_TOOL, orjson.dumps(arguments).decode())])
    result = await ReActLoop(model, output_type=output_type).run("go")
    assert result.error is None and result.output == expected


async def test_a_cap_still_ends_in_a_structured_answer() -> None:
    lookup = FakeTool("lookup")
    requests: list[ModelRequest] = []

    def answer(request: ModelRequest) -> Any:
        requests.append(request)
        if request.tool_choice == ForcedTool(FINAL_TOOL):
            return final(customer="Ann", total=1)
        return call("lookup")

    loop = ReActLoop(FunctionModel(answer), tools=[lookup], output_type=Invoice, max_iterations=2)
    result = await loop.run("go")
    assert result.output == Invoice("Ann", 1.0)
    assert result.stop_reason is StopReason.MAX_ITERATIONS
    assert [t.name for t in requests[-1].tools] == [FINAL_TOOL]


async def test_a_stored_structured_run_resumes_to_its_typed_value() -> None:
    store = MemoryStore()
    loop = ReActLoop(ScriptedModel([final(customer="Ann", total=2)]), output_type=Invoice,
                     store=store)  # fmt: skip
    result = await loop.run("bill")
    again = await loop.resume(result.run_id)
    assert again.output == Invoice("Ann", 2.0)
    stored = await store.load(result.run_id)
    assert stored.ended is not None and stored.ended.output is None
    assert orjson.loads(stored.ended.output_json or "") == {"customer": "Ann", "total": 2.0}


def test_output_options_without_an_output_type_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"OutputOptions\.retries"):
        ReActLoop(ScriptedModel([]), output=OutputOptions(retries=3))


def test_a_tool_named_like_the_final_answer_tool_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=FINAL_TOOL):
        ReActLoop(ScriptedModel([]), tools=[FakeTool(FINAL_TOOL)], output_type=Invoice)


async def test_with_output_overrides_the_output_for_its_runs_only() -> None:
    lookup = FakeTool("lookup")
    model = ScriptedModel(["plain text", final(customer="Ann", total=1), "text again"])
    loop = ReActLoop(model, tools=[lookup])
    invoicing = loop.with_output(Invoice, output=OutputOptions(retries=0))
    assert_type(invoicing, ReActLoop[Invoice])
    assert (await loop.run("a")).output == "plain text"
    typed = await invoicing.run("b")
    assert_type(typed.output, Invoice | None)
    assert typed.output == Invoice("Ann", 1.0) and invoicing.config.output is not None
    assert invoicing.config.output.retries == 0 and invoicing.config.tools["lookup"] is lookup
    assert (await loop.run("c")).output == "text again" and FINAL_TOOL not in loop.config.tools


@pytest.mark.parametrize(
    ("output_type", "options", "option"),
    [(None, {}, "output_type"), (Invoice, {"max_iterations": 3}, "max_iterations"),
     (Invoice, {"output_retrys": 1}, "output_retrys")],
)  # fmt: skip
def test_with_output_checks_what_it_is_given(
    output_type: Any, options: dict[str, Any], option: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        ReActLoop(ScriptedModel([])).with_output(output_type, **options)
    assert caught.value.option == option


def pairs(result: Any) -> dict[str, ToolMessage]:
    """The transcript's tool results by call id, after checking every call has exactly one."""
    calls = [c.id for m in result.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answers = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert sorted(calls) == sorted(m.call_id for m in answers)
    return {m.call_id: m for m in answers}


async def test_the_final_call_is_answered_and_the_calls_beside_it_are_not_run() -> None:
    lookup = FakeTool("lookup")
    beside = call("lookup", who="Ann")
    answer = final(customer="Ann", total=1)
    model = ScriptedModel([[beside, answer]])
    result = await ReActLoop(model, tools=[lookup], output_type=Invoice).run("bill")
    by_id = pairs(result)
    assert by_id[answer.id].text == "final answer accepted" and not by_id[answer.id].is_error
    assert (by_id[answer.id].name, by_id[beside.id].name) == (FINAL_TOOL, "lookup")
    assert by_id[beside.id].is_error and "not run" in by_id[beside.id].text
    assert lookup.calls == [] and result.output == Invoice("Ann", 1.0)
    final_results = {r.call_id: r for r in result.steps[-1].tool_results}
    assert final_results[beside.id].error_code is ErrorCode.TOOL_ERROR


async def test_a_rejected_final_call_is_an_error_result_paired_with_it() -> None:
    lookup = FakeTool("lookup")
    bad, good = final(customer="Ann"), final(customer="Ann", total=2)
    beside = call("lookup")
    model = ScriptedModel([[bad, beside], good])
    result = await ReActLoop(model, tools=[lookup], output_type=Invoice).run("bill")
    by_id = pairs(result)
    assert by_id[bad.id].is_error and "missing required" in by_id[bad.id].text
    assert (by_id[bad.id].name, by_id[beside.id].name) == (FINAL_TOOL, "lookup")
    assert "required format: " in by_id[bad.id].text  # a top-level problem: no path
    assert by_id[beside.id].is_error and "not run" in by_id[beside.id].text
    step = {r.call_id: r for r in result.steps[0].tool_results}
    assert step[bad.id].error_code is ErrorCode.TOOL_ERROR
    assert result.output == Invoice("Ann", 2.0)


async def test_a_wrong_field_is_named_with_its_path() -> None:
    model = ScriptedModel([final(customer="Ann", total="lots"), final(customer="Ann", total=1)])
    result = await ReActLoop(model, output_type=Invoice).run("bill")
    error = next(m for m in model.requests[1].messages if isinstance(m, ToolMessage))
    assert " at " in error.text and "total" in error.text
    assert result.output == Invoice("Ann", 1.0)


async def test_the_run_ends_as_an_error_once_the_retries_are_spent() -> None:
    model = ScriptedModel([final(customer="Ann")])
    result = await ReActLoop(model, output_type=Invoice, output=OutputOptions(retries=0)).run(
        "bill"
    )
    assert result.stop_reason is StopReason.ERROR and "did not match" in result.stop_detail


@pytest.mark.parametrize(
    ("strategy", "answers", "expected"),
    [
        (OutputStrategy.TOOL, ["no tool", final(customer="A", total=1)], "Finish by calling"),
        (OutputStrategy.PROMPTED, ["not json", '{"customer": "A", "total": 1}'], "JSON only"),
    ],
)
async def test_the_retry_message_says_how_to_answer(
    strategy: OutputStrategy, answers: list[Any], expected: str
) -> None:
    model = ScriptedModel(answers)
    await ReActLoop(model, output_type=Invoice, output=OutputOptions(strategy=strategy)).run("bill")
    retry = model.requests[1].messages[-1]
    assert isinstance(retry, UserMessage) and expected in retry.text
    if strategy is OutputStrategy.TOOL:
        assert retry.text == f"Finish by calling the `{FINAL_TOOL}` tool with your final answer."


async def test_a_capped_structured_run_keeps_the_caps_detail() -> None:
    def answer(request: ModelRequest) -> Any:
        forced = request.tool_choice == ForcedTool(FINAL_TOOL)
        return final(customer="Ann", total=1) if forced else call("lookup")

    loop = ReActLoop(FunctionModel(answer), tools=[FakeTool("lookup")], output_type=Invoice,
                     max_iterations=1)  # fmt: skip
    result = await loop.run("go")
    assert result.stop_reason is StopReason.MAX_ITERATIONS and "1" in result.stop_detail


async def test_a_hook_stopping_before_the_model_call_ends_a_structured_run_cleanly() -> None:
    class Halt(Hook):
        async def before_reasoning(self, run: Run, request: ModelRequest) -> StopRun:
            return StopRun("not now")

    model = ScriptedModel([])
    result = await ReActLoop(model, output_type=Invoice, hooks=[Halt()]).run("bill")
    assert result.stop_reason is StopReason.HOOK_STOPPED and result.output is None
    assert result.error is None and model.requests == []


async def test_a_text_answer_left_unfixed_keeps_its_text_as_the_raw_answer() -> None:
    model = ScriptedModel(["Ann owes 12.5"])
    result = await ReActLoop(model, output_type=Invoice, output=OutputOptions(retries=0)).run(
        "bill"
    )
    assert isinstance(result.error, OutputValidationError)
    assert result.error.raw == "Ann owes 12.5" and FINAL_TOOL in result.error.problem


async def test_tools_first_then_a_prompted_answer() -> None:
    lookup = FakeTool("lookup", result="12.5")
    model = ScriptedModel([call("lookup"), '{"customer": "Ann", "total": 12.5}'])
    loop = ReActLoop(model, tools=[lookup], output_type=Invoice,
                     output=OutputOptions(strategy=OutputStrategy.PROMPTED))  # fmt: skip
    result = await loop.run("bill")
    assert lookup.calls == [{}] and result.output == Invoice("Ann", 12.5)


async def test_a_model_calling_tools_on_the_capped_native_call_ends_without_them() -> None:
    lookup = FakeTool("lookup")
    loop = ReActLoop(FunctionModel(lambda request: call("lookup")), tools=[lookup],
                     output_type=Invoice, output=OutputOptions(strategy=OutputStrategy.NATIVE),
                     max_iterations=1)  # fmt: skip
    result = await loop.run("bill")
    assert isinstance(result.error, OutputValidationError) and len(lookup.calls) == 1


async def test_the_output_phase_passes_a_step_without_a_response() -> None:
    run = make_run(output_type=Invoice, open_step=True)
    assert await run_phase(OutputPhase(), run) == PROCEED


def _last_text(request: ModelRequest) -> str:
    """What the last message of a request said to the model (a tool result or a user message)."""
    last = request.messages[-1]
    assert isinstance(last, ToolMessage | UserMessage)
    return str(last.text)


RAW_INVOICE = {
    "type": "object",
    "properties": {
        "customer": {"type": "string"},
        "total": {"type": "number"},
        "paid": {"type": "boolean"},
    },
    "required": ["customer", "total"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("output_type", [Invoice, RAW_INVOICE])
@pytest.mark.parametrize("strategy", [OutputStrategy.TOOL, OutputStrategy.PROMPTED])
async def test_every_mismatch_is_reported_at_once_to_the_model_and_in_the_error(
    output_type: Any, strategy: OutputStrategy
) -> None:
    wrong = {"customer": 1, "total": "lots", "paid": "yes", "extra": 0}
    answer: Any = (
        final(**wrong) if strategy is OutputStrategy.TOOL else orjson.dumps(wrong).decode()
    )
    model = ScriptedModel([answer, answer])
    loop: Any = ReActLoop(
        model, output_type=output_type, output=OutputOptions(strategy=strategy, retries=1)
    )
    result = await loop.run("bill")
    told = _last_text(model.requests[1])
    error = result.error
    assert isinstance(error, OutputValidationError)
    for text in (told, error.problem):
        assert "in 4 places" in text
        for name in ("extra", "customer: expected string", "total: expected number", "paid"):
            assert name in text


async def test_every_wrong_item_of_a_list_is_named() -> None:
    model = ScriptedModel([final(result=[1, "a", 2, "b"]), final(result=[1])])
    result = await ReActLoop(model, output_type=list[int]).run("numbers")
    told = _last_text(model.requests[1])
    assert "result[1]: expected integer" in told and "result[3]: expected integer" in told
    assert result.output == [1]

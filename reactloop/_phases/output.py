"""`OutputPhase`: turn the model's final answer into the run's typed output, or send it back.

It sits before `ToolPhase`. A step whose response calls the final-answer tool (TOOL strategy) or
answers in text (NATIVE, PROMPTED) is the final answer: it is parsed and validated, and the run
completes with the value; an answer that does not validate goes back to the model, saying what
was wrong, up to `output_retries` times, and then the run ends with `OutputValidationError`.
Steps that call the user's tools go on to `ToolPhase` as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attrs import frozen

from reactloop._core import (
    PROCEED,
    AssistantMessage,
    NextIteration,
    PhaseDecision,
    Stop,
    StopReason,
    ToolCall,
    ToolResult,
    UserMessage,
)
from reactloop._errors import ErrorCode
from reactloop._output import FINAL_TOOL, Output, OutputRetry, OutputStrategy, OutputValidationError
from reactloop._schema import Invalid

if TYPE_CHECKING:
    from reactloop._loop import Run

ACCEPTED = "final answer accepted"
NOT_RUN = "not run: the final answer ended the run"
CALL_THE_TOOL = f"Finish by calling the `{FINAL_TOOL}` tool with your final answer."


class OutputPhase:
    """Checks the final answer against the loop's `output_type` (does nothing without one)."""

    def __repr__(self) -> str:
        """`Name()`: a phase has no settings, so a sequence prints readably."""
        return f"{type(self).__name__}()"

    async def __call__(self, run: Run) -> PhaseDecision:
        """Complete with the typed value, ask again, or let the step's tools run."""
        output, draft = run.config.output, run.state.current
        if output is None or draft is None or draft.response is None:
            return PROCEED
        message = draft.response.message
        finishing = run.state.finishing is not None
        if output.strategy is OutputStrategy.TOOL:
            final = next((c for c in message.tool_calls if c.name == FINAL_TOOL), None)
            if final is not None:
                return await _checked(run, output, Answer(final.arguments, message, final))
            if message.tool_calls and not finishing:
                return PROCEED
            return _rejected(run, output, Answer(message.text, message), CALL_THE_TOOL)
        if message.tool_calls and not finishing:
            return PROCEED
        return await _checked(run, output, Answer(message.text, message))


@frozen
class Answer:
    """A final answer as it came: its raw JSON, the message, the final-answer call if any."""

    raw: str
    message: AssistantMessage
    final: ToolCall | None = None


async def _checked(run: Run, output: Output, answer: Answer) -> PhaseDecision:
    """The answer parsed, converted and validated: the run's end, or a retry."""
    wrapped = output.strategy is not OutputStrategy.PROMPTED
    try:
        value = await output.validate(output.parse(answer.raw, wrapped), run.context)
    except Invalid as problem:
        return _rejected(run, output, answer, _say(problem))
    except OutputRetry as retry:
        return _rejected(run, output, answer, retry.message)
    final = answer.final
    if final is not None:
        _answer_calls(run, answer.message, final, ToolResult(final.id, final.name, ACCEPTED))
    finishing = run.state.finishing
    if finishing is not None:
        return Stop(finishing.reason, finishing.detail, output=value)
    return Stop(StopReason.COMPLETED, output=value)


def _rejected(run: Run, output: Output, answer: Answer, problem: str) -> PhaseDecision:
    """Send the answer back with what was wrong, or end the run when no try is left (or the
    run is finishing after a cap: its last call had to be the answer)."""
    state = run.state
    state.output_attempts += 1
    final = answer.final
    if final is not None:
        error = ToolResult(final.id, final.name, problem, True, ErrorCode.TOOL_ERROR)
        _answer_calls(run, answer.message, final, error)
    if state.output_attempts > output.retries or state.finishing is not None:
        failed = OutputValidationError(problem, answer.raw, state.output_attempts)
        return Stop(StopReason.ERROR, failed.message, error=failed)
    if final is None:
        state.messages.append(UserMessage(_retry_prompt(output, problem)))
    return NextIteration()


def _answer_calls(run: Run, message: AssistantMessage, final: ToolCall, result: ToolResult) -> None:
    """Give the final-answer call its result, and every other call of the step a "not run"
    result, so that no call is left unpaired."""
    results: list[Any] = [
        result
        if call.id == final.id
        else ToolResult(call.id, call.name, NOT_RUN, True, ErrorCode.TOOL_ERROR)
        for call in message.tool_calls
    ]
    run.state.record_tool_results(results)


def _say(problem: Invalid) -> str:
    """Every mismatch found, so that the model can fix them all in one more try."""
    if len(problem.errors) == 1:
        where = f" at {problem.path}" if problem.path else ""
        return f"the answer does not match the required format{where}: {problem.problem}"
    found = "; ".join(f"{path or 'top level'}: {what}" for path, what in problem.errors)
    return f"the answer does not match the required format in {len(problem.errors)} places: {found}"


def _retry_prompt(output: Output, problem: str) -> str:
    if output.strategy is OutputStrategy.TOOL:
        return CALL_THE_TOOL  # a text answer: the only answer sent back by a message here
    return f"Your answer could not be used: {problem}. Answer again with the JSON only."

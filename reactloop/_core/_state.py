"""The run's plain data: state, step records, tool results, the tool-facing context and the result.

`RunState` holds only messages, steps and counters (no clients, locks or callables), so that it can
be serialized, checkpointed and resumed; everything live belongs to `Run` (see `_run.py`).
"""

from __future__ import annotations

import hashlib
import logging
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import orjson
from attrs import Factory, define, evolve, field, frozen

from reactloop._core._approvals import Decision, PendingCall
from reactloop._core._decisions import StopReason
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    unique_calls,
)
from reactloop._core._parts import ContentPart
from reactloop._core._repair import RepairKind, RepairNote
from reactloop._errors import ContractError, ErrorCode, ReactLoopError
from reactloop._unicode import note, repaired, repaired_record

DepsT = TypeVar("DepsT")
if TYPE_CHECKING:  # a default (PEP 696) for type checkers; typing_extensions ships with them
    from typing_extensions import TypeVar as DefaultedTypeVar

    OutputT = DefaultedTypeVar("OutputT", default=str)
else:
    OutputT = typing.TypeVar("OutputT")
_NO_USAGE = Usage()
logger = logging.getLogger("reactloop")
NO_USAGE = _NO_USAGE
"""The zero usage a `ToolResult` has by default (compared by identity on the hot path)."""


@frozen
class RunContext(Generic[DepsT]):
    """What a tool (or instructions function) may know about its run; hidden from tool schemas.

    In a tool's context `call_id` is the call's id (unique within the run, journaled, so the same
    on every resume) and `idempotency_key` names the call for APIs that take one.
    """

    run_id: str
    deps: DepsT
    user_id: str | None = None
    session_id: str | None = None
    call_id: str | None = None

    def for_call(self, call_id: str) -> RunContext[DepsT]:
        """This context as one tool call sees it."""
        return RunContext(self.run_id, self.deps, self.user_id, self.session_id, call_id)

    @property
    def idempotency_key(self) -> str:
        """`reactloop-` and 32 hex digits of SHA-256 over the run id and the call id: one key
        per call, the same on every resume and worker takeover of the run, and different for
        every other call, so an API that takes an idempotency key applies the call at most once.
        """
        if self.call_id is None:
            rule = "read in a tool call's context (the key names one call)"
            raise ContractError("RunContext.idempotency_key", rule, None, got="no call")
        named = orjson.dumps([self.run_id, self.call_id])
        return f"reactloop-{hashlib.sha256(named).hexdigest()[:32]}"


@frozen
class ToolResult:
    """The outcome of one tool call: its content as the model reads it, and whether it failed.

    `content` is its text; a tool that returned images, documents or audio has them in `parts`
    (all its parts in order, text included), which the model reads instead.

    A call of an agent tool (`loop.as_tool()`) ran a sub-run: `usage` is what it spent (counted
    in this run's usage too), `sub_run_id` its run id (stored, so its transcript can be loaded
    from the store), and `sub_run` its whole result (in memory only: None once read back from a
    store).
    """

    call_id: str
    name: str
    content: str
    is_error: bool = False
    error_code: ErrorCode | None = None
    duration: float = 0.0
    usage: Usage = _NO_USAGE
    sub_run_id: str | None = None
    sub_run: RunResult[Any] | None = field(default=None, eq=False, repr=False)
    parts: tuple[ContentPart, ...] = ()

    def to_message(self) -> ToolMessage:
        """The transcript message for this result."""
        if self.parts:
            return ToolMessage(self.call_id, self.name, is_error=self.is_error, parts=self.parts)
        return ToolMessage(self.call_id, self.name, self.content, self.is_error)


@frozen
class Step:
    """One iteration's record: the model response, tool results, usage and duration.

    `prefix_breaks` says why the step's request did not extend the previous request (a prompt
    cache then misses from there): "trimmed" (the context window dropped a chunk),
    "instructions", "tools" or "messages" (rewritten by `prepare_step`, a hook or a phase);
    empty when it did.
    """

    index: int
    response: ModelResponse | None
    tool_results: tuple[ToolResult, ...]
    usage: Usage
    started_at: float
    duration: float
    prefix_breaks: tuple[str, ...] = ()

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls the model asked for in this step."""
        return () if self.response is None else self.response.message.tool_calls


@frozen
class Recovered:
    """What a resumed step already did before its run stopped: results saved by the journal
    (never run again) and calls that started without a saved result."""

    results: Mapping[str, ToolResult]
    started: frozenset[str]


@define
class StepDraft:
    """The step in progress; frozen into a `Step` when the iteration ends.

    `recovered` is set on a step rebuilt from a store's journal (a resumed run): its response is
    already in the transcript, and its phases skip the work the journal holds.
    """

    index: int
    started_at: float
    response: ModelResponse | None = None
    tool_results: list[ToolResult] = Factory(list)
    usage: Usage = _NO_USAGE
    recovered: Recovered | None = None
    prefix_breaks: tuple[str, ...] = ()


@frozen
class Finishing:
    """A cap was reached: the next model call is made without tools and then the run stops."""

    reason: StopReason
    detail: str


def _call_of(message: Message) -> tuple[str, str]:
    """The call id and tool name a tool result answers (empty for other messages)."""
    if isinstance(message, ToolMessage):
        return message.call_id, message.name
    return "", ""


@define
class RunState:
    """Messages, steps and counters of one run: plain data only.

    `phase_data` is where a custom phase keeps its own data (JSON values: str, int, float, bool,
    None, lists and dicts with string keys); with a store, it is saved at phase boundaries and
    restored on resume.

    `usage` is the run's total: the sum of the steps' usage plus `setup_usage` (tokens spent
    before the first step, by start phases).
    """

    run_id: str
    messages: list[Message]
    instructions: str | None = None
    steps: list[Step] = Factory(list)
    iteration: int = 0
    tool_calls_made: int = 0
    usage: Usage = Usage()
    setup_usage: Usage = Usage()
    started_at: float = 0.0
    finishing: Finishing | None = None
    current: StepDraft | None = None
    tools_used: list[str] = Factory(list)
    last_call_key: tuple[str, str] | None = None
    repeat_count: int = 0
    repairs: list[RepairNote] = Factory(list)
    phase_data: dict[str, Any] = Factory(dict)
    resume_step: StepDraft | None = None
    pending: list[PendingCall] = Factory(list)  # held calls: the run pauses at the step's end
    decisions: dict[str, Decision] = Factory(dict)  # given for held calls, by call id
    decided_on: dict[str, dict[str, Any]] = Factory(dict)  # the arguments shown, by call id
    standing: dict[str, Decision] = Factory(dict)  # "always" decisions, by tool name
    output_attempts: int = 0  # final answers that did not validate (structured output)
    call_ids: dict[str, None] = Factory(dict)  # ids of the calls in `messages[:ids_read]`
    ids_read: int = 0  # how many messages `call_ids` covers (read on, not again, per response)
    # Results `repaired_result` gave since the last batch, by id (held, so no id is reused):
    # `record_tool_results` does not walk them again.
    repaired_results: dict[int, ToolResult] = Factory(dict)

    def open_step(self, now: float) -> StepDraft:
        """Start the next iteration's step record (the rebuilt step first, in a resumed run)."""
        if self.resume_step is not None:
            self.current, self.resume_step = self.resume_step, None
            return self.current
        self.iteration += 1
        self.current = StepDraft(self.iteration, now)
        return self.current

    def close_step(self, now: float) -> Step | None:
        """Freeze the current step into `steps`; None when none was open or nothing happened
        (no response, no tool result, no usage)."""
        draft = self.current
        self.current = None
        if draft is None or (
            draft.response is None and not draft.tool_results and draft.usage == _NO_USAGE
        ):
            return None
        step = Step(
            draft.index,
            draft.response,
            tuple(draft.tool_results),
            draft.usage,
            draft.started_at,
            now - draft.started_at,
            draft.prefix_breaks,
        )
        self.steps.append(step)
        return step

    def record_response(self, response: ModelResponse, usage: Usage | None = None) -> ModelResponse:
        """Append the model's answer to the transcript and to the current step, its calls' ids
        made unique within the run first, and return it as recorded; `usage` is what the call
        spent when it differs from the response's (a hook replaced the response). Text that is
        not valid Unicode is repaired first, and noted (adr/0022)."""
        response, count = repaired_record(response)
        if count:
            self.note_repair(count, len(self.messages))
        if response.message.tool_calls:
            message = unique_calls(response.message, self._used_call_ids())
            if message is not response.message:
                response = evolve(response, message=message)
            self.ids_read += 1  # this message's ids are in `call_ids` now
        self.messages.append(response.message)
        if self.current is not None:
            self.current.response = response
        self.record_usage(response.usage if usage is None else usage)
        return response

    def _used_call_ids(self) -> dict[str, None]:
        """The ids of every call in the transcript, read incrementally (a transcript that
        shrank is read again whole)."""
        if self.ids_read > len(self.messages):
            self.call_ids, self.ids_read = {}, 0
        for message in self.messages[self.ids_read :]:
            if isinstance(message, AssistantMessage):
                self.call_ids.update(dict.fromkeys(call.id for call in message.tool_calls))
        self.ids_read = len(self.messages)
        return self.call_ids

    def record_usage(self, usage: Usage) -> None:
        """Count tokens spent in this run: in the open step, or (before the first step, e.g. by a
        planning start phase) in `setup_usage`. Phases that call a model themselves use this, so
        that the steps and `setup_usage` always add up to `usage`."""
        self.usage = self.usage + usage
        draft = self.current
        if draft is None:
            self.setup_usage = self.setup_usage + usage
        else:
            draft.usage = usage if draft.usage is _NO_USAGE else draft.usage + usage

    def record_tool_results(self, results: list[ToolResult]) -> None:
        """Append one batch of tool results, in the model's order, to transcript and step; text
        that is not valid Unicode (e.g. from a hook's result) is repaired and noted."""
        already, self.repaired_results = self.repaired_results, {}
        for position, result in enumerate(results):
            if already.get(id(result)) is not result:
                results[position] = self.repaired_result(result, len(self.messages) + position)
        self.messages.extend(result.to_message() for result in results)
        if self.current is not None:
            self.current.tool_results.extend(results)

    def repair_input(self) -> str:
        """Repair the caller's text as a run starts (instructions, history, the user's message,
        which comes last: returned), noting each repair (adr/0022)."""
        if self.instructions is not None:
            self.instructions, count = repaired(self.instructions)
            if count:
                self.note_repair(count, -1)
        for index, message in enumerate(self.messages):
            self.messages[index], count = repaired_record(message)
            if count:
                self.note_repair(count, index, *_call_of(message))
        last = self.messages[-1]
        return last.text if isinstance(last, UserMessage) else ""

    def repaired_result(self, result: ToolResult, index: int) -> ToolResult:
        """`result` with text that is not valid Unicode repaired, saying so in its content (the
        model reads it) and in a note (`index`: its message's place in the transcript)."""
        fixed, count = repaired_record(result)
        if count:
            fixed = evolve(fixed, content=fixed.content + note(count))
            self.note_repair(count, index, result.call_id, result.name)
        self.repaired_results[id(fixed)] = fixed
        return fixed

    def note_repair(self, count: int, index: int, call_id: str = "", tool_name: str = "") -> None:
        """Note that `count` characters that were not valid Unicode were replaced."""
        repair = RepairNote(RepairKind.INVALID_UNICODE, call_id, tool_name, index)
        self.repairs.append(repair)
        logger.warning("%s (%d characters)", repair.describe(), count)

    def note_call(self, key: tuple[str, str]) -> int:
        """Count consecutive identical calls (same tool, same arguments); return the streak."""
        if key == self.last_call_key:
            self.repeat_count += 1
        else:
            self.last_call_key, self.repeat_count = key, 1
        return self.repeat_count

    def note_tool_used(self, name: str) -> None:
        """Remember that a tool actually ran (first use order, no repeats)."""
        if name not in self.tools_used:
            self.tools_used.append(name)

    def open_tool_calls(self) -> list[ToolCall]:
        """Calls of the last assistant message that have no result in the transcript yet."""
        answered: set[str] = set()
        for message in reversed(self.messages):
            if isinstance(message, ToolMessage):
                answered.add(message.call_id)
            elif isinstance(message, AssistantMessage):
                return [call for call in message.tool_calls if call.id not in answered]
        return []

    def settle_open_calls(
        self, why: str, outcomes: Mapping[str, ToolResult | None] | None = None
    ) -> list[ToolResult]:
        """Give every unanswered call a result, in the model's order, so no pair breaks: the one
        it already had in `outcomes` (it ran or was refused before the run stopped), else an error
        saying it was cut short (in `outcomes` as None: it was running) or did not run."""
        outcomes = {} if outcomes is None else outcomes
        results = [
            outcomes.get(call.id)
            or ToolResult(
                call.id,
                call.name,
                f"{'cut short' if call.id in outcomes else 'not run'}: {why}",
                True,
                ErrorCode.TOOL_ERROR,
            )
            for call in self.open_tool_calls()
        ]
        if results:
            self.record_tool_results(results)
        return results

    def last_text(self) -> str | None:
        """The text of the last assistant message that has any."""
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage) and message.text:
                return message.text
        return None


@frozen(eq=False)
class RunResult(Generic[OutputT]):
    """What a run produced and why it ended; `error` is set when it failed.

    `output` is the final answer: text, or with `output_type` the validated value of that type
    (`RunResult[Invoice]`). A paused run (`StopReason.AWAITING_APPROVAL`) lists its held calls in
    `pending`; without a store, `state` is the signed token to resume it with
    (`loop.resume(state=...)`).

    `usage` is the sum of the steps' usage and `setup_usage` (tokens spent before the first step,
    e.g. by a planning start phase): every token is counted in exactly one of them.
    """

    run_id: str
    output: OutputT | None
    stop_reason: StopReason
    stop_detail: str
    messages: tuple[Message, ...]
    steps: tuple[Step, ...]
    usage: Usage
    tools_used: tuple[str, ...]
    duration: float
    error: ReactLoopError | None = None
    user_message: str | None = None
    repairs: tuple[RepairNote, ...] = ()
    setup_usage: Usage = Usage()
    pending: tuple[PendingCall, ...] = ()
    state: str | None = None
    phase_data: dict[str, Any] = field(factory=dict)  # phases' own data, as the run ended
    instructions: str | None = None  # the instructions as the run last used them

    @property
    def paused(self) -> bool:
        """True when the run waits for decisions on `pending` calls (resume it with them)."""
        return self.stop_reason is StopReason.AWAITING_APPROVAL

    @property
    def succeeded(self) -> bool:
        """True when the run ended without an error."""
        return self.error is None

    @property
    def cache_breaks(self) -> int:
        """How many steps sent a request that did not extend the previous one (each says why
        in `Step.prefix_breaks`): the points where a prompt cache stops matching."""
        return sum(1 for step in self.steps if step.prefix_breaks)

    @property
    def sub_runs(self) -> dict[str, RunResult[Any]]:
        """The results of the sub-runs its agent tools ran (kept apart from this transcript), by
        the id of the tool call that ran each, in order."""
        return {
            result.call_id: result.sub_run
            for step in self.steps
            for result in step.tool_results
            if result.sub_run is not None
        }

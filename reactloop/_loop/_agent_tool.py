"""`loop.as_tool()`: a whole loop offered as one tool of another loop (an agent as a tool).

A call runs a sub-run of the loop on the task the model wrote. The sub-run keeps its own
transcript (its result rides on the call's `ToolResult`; with a store it is a stored run of its
own, linked to the call), its usage counts in the parent's, its events reach a streamed parent
nested under the call, and interrupting the parent interrupts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs
import orjson
from attrs import frozen

from reactloop._core import (
    AgentCall,
    Event,
    NestedEvent,
    RunContext,
    RunResult,
    StopReason,
    SubRunLinked,
    ToolCall,
    ToolSpec,
    unwrap_single_error,
)
from reactloop._durable import Journal
from reactloop._errors import AgentDepthError, AgentRunError, ToolArgumentsError
from reactloop._loop._lifecycle import Departure, start_run
from reactloop._schema import Invalid, compile_object
from reactloop._tools import CALLING, READS_CALLING, SubRunOutcome, jsonable, nested, path_of
from reactloop._validate import integer, optional_number, text, tool_name

if TYPE_CHECKING:
    from reactloop._loop._run import EventSink, LoopConfig, Run

DEFAULT_MAX_DEPTH = 3
"""How many runs deep agent tools may nest by default (a sub-run of a sub-run of a sub-run)."""
INPUT = "input"
_SCHEMA, _CONVERT = compile_object(
    {INPUT: (str, attrs.NOTHING)},
    {INPUT: "The task for the agent, in full: it sees nothing else of this conversation."},
)
_NO_ANSWER = frozenset(
    {StopReason.INTERRUPTED, StopReason.STREAM_CLOSED, StopReason.AWAITING_APPROVAL}
)


class DrivenLoop(Protocol):
    """What an agent tool needs of a loop: its configuration and the way to drive a run."""

    config: LoopConfig

    async def drive(self, run: Run, departure: Departure | None = None) -> RunResult[Any]:
        """Execute a prepared run to its end."""
        ...


@frozen(eq=False)
class AgentTool:
    """A `Tool` that runs `loop` on the task it is given (`{"input": "..."}`) and answers with the
    sub-run's output: its text, or the JSON of its typed output. A failed sub-run, or one that
    ended without an answer, gives an error result saying why (`AgentRunError`); one that would
    nest deeper than `max_depth` runs is not started (`AgentDepthError`).
    """

    loop: DrivenLoop
    name: str
    description: str
    max_depth: int = DEFAULT_MAX_DEPTH
    timeout: float | None = None
    exclusive: bool = False
    spec: ToolSpec = attrs.field(init=False)

    @spec.default
    def _spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, _SCHEMA)

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """`{"input": "<the task>"}` and nothing else; a `ToolArgumentsError` otherwise."""
        try:
            value = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            raise ToolArgumentsError(self.name, [f"arguments are not valid JSON ({exc})"]) from None
        try:
            return _CONVERT(value, "")
        except Invalid as exc:
            raise ToolArgumentsError(self.name, [str(exc)]) from None

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> SubRunOutcome:
        """Run the sub-run to its end (under the calling run, when a loop calls it)."""
        calling = CALLING.get()
        depth = 1 if calling is None else len(path_of(calling[0])) + 1
        if depth > self.max_depth:
            return SubRunOutcome("", AgentDepthError(self.name, depth, self.max_depth))
        parent = None if calling is None else calling[0]
        deps = {"deps": context.deps, "user_id": context.user_id}
        sub = await start_run(self._config(parent), arguments[INPUT], context=deps)
        sub.interruptible = True  # its parent's interrupt reaches it from another task
        with sub.journal, unwrap_single_error():
            if calling is None:
                result = await self.loop.drive(sub)
            else:
                result = await self._under(calling[0], calling[1], sub)
        return outcome_of(self.name, result)

    async def _under(self, parent: Run, call: ToolCall, sub: Run) -> RunResult[Any]:
        """Drive `sub` as the sub-run of `parent`'s `call`: linked in the store, its events
        nested in the parent's stream, interrupted with the parent."""
        link = AgentCall(self.name, call.id, sub.state.run_id)
        if isinstance(sub.journal, Journal):
            linked = SubRunLinked(parent.state.run_id, call.id, self.name)
            await sub.journal.store.append(sub.state.run_id, [linked])
        if parent.listening:
            sub.sink = nested_sink(parent, link)
        with nested(parent, sub, (*path_of(parent), link)):
            try:
                return await self.loop.drive(sub)
            except BaseException:  # cut off (a timeout, the parent ending): its tokens count
                parent.state.record_usage(sub.state.usage)
                raise

    def _config(self, parent: Run | None) -> LoopConfig:
        """The loop's configuration; without a store of its own, the parent's store."""
        config = self.loop.config
        if config.store is None and parent is not None and parent.config.store is not None:
            return attrs.evolve(config, store=parent.config.store, owns_store=False)
        return config


def nested_sink(parent: Run, link: AgentCall) -> EventSink:
    """A sub-run's event sink: each event goes to the parent's stream, its path extended."""

    async def sink(event: Event) -> None:
        if isinstance(event, NestedEvent):
            await parent.emit(NestedEvent((link, *event.path), event.event))
        else:
            await parent.emit(NestedEvent((link,), event))

    return sink


def outcome_of(name: str, result: RunResult[Any]) -> SubRunOutcome:
    """The call's outcome: the sub-run's answer, or why it has none; its usage either way."""
    why = _failure(result)
    if why is not None:
        return SubRunOutcome("", AgentRunError(name, result.run_id, why), result.usage, result)
    output = result.output
    if isinstance(output, str):
        return SubRunOutcome(output, None, result.usage, result)
    try:
        answer = orjson.dumps(output, default=jsonable).decode()
    except TypeError as exc:
        error = AgentRunError(name, result.run_id, f"its output cannot be shown as JSON: {exc}")
        return SubRunOutcome("", error, result.usage, result)
    return SubRunOutcome(answer, None, result.usage, result)


def _failure(result: RunResult[Any]) -> str | None:
    """Why the sub-run has no answer to give, or None when it has one."""
    if result.error is not None:
        return result.error.message
    if result.output is None or result.stop_reason in _NO_ANSWER:
        detail = f": {result.stop_detail}" if result.stop_detail else ""
        return f"it ended without an answer ({result.stop_reason.value}{detail})"
    return None


def agent_tool(
    loop: DrivenLoop, *, name: object, description: object, max_depth: object, timeout: object
) -> AgentTool:
    """An `AgentTool` for `loop`, its options checked (`ConfigurationError` naming the option)."""
    return AgentTool(
        loop,
        tool_name("as_tool.name", name),
        text("as_tool.description", description),
        integer("as_tool.max_depth", max_depth),
        optional_number("as_tool.timeout", timeout),
    )


READS_CALLING.add(AgentTool)  # its invoke finds the calling run and call in `CALLING`

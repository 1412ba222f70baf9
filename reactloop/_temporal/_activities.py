"""The activities of one loop, run on a worker: a model call and a tool call (ADR-0033).

They run the *original* loop's model and tools, with `deps` built on the worker for each call
(never in the workflow's history). A provider's refusal (`ModelError`) fails the model activity
for good, carrying the error, so the workflow's loop decides whether to retry; a tool's exception
is a tool result, so a tool activity fails only when its worker does. Both heartbeat while they
work, so a lost worker is known within the heartbeat timeout.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import orjson
from temporalio import activity
from temporalio.exceptions import ApplicationError

from reactloop._core import ModelDelta, RunContext, Tool
from reactloop._errors import ModelError, ToolsetError, UnknownToolError
from reactloop._temporal._contracts import (
    ModelAnswer,
    ModelCall,
    RunInfo,
    ToolInput,
    ToolOutcome,
    model_activity,
    tool_activity,
    toolsets_activity,
)
from reactloop._temporal._errors import PayloadTooLargeError
from reactloop._temporal._options import ActivityOptions, Backend
from reactloop._temporal._payloads import (
    decode,
    decode_request,
    encode,
    encode_deltas,
    encode_error,
    encode_parts,
    encode_response,
)
from reactloop._temporal._toolsets import ListingRequest, listing_of, toolset_tool
from reactloop._tools import parts_of, render

if TYPE_CHECKING:
    from reactloop._loop import ReActLoop

T = TypeVar("T")

MODEL_ERROR = "reactloop.ModelError"
"""The `ApplicationError` type of a model activity failed by the provider (its details: the
encoded `ModelError`)."""

UNKNOWN_TOOL = "reactloop.UnknownToolError"
"""The `ApplicationError` type of a tool activity asked for a tool this worker's loop lacks."""

DepsFactory = Callable[[RunInfo], Any]
_UNCUT = 2**62  # no limit: the workflow's loop cuts a result to its max_result_chars


def loop_activities(
    loop: ReActLoop[Any], name: str, deps_factory: DepsFactory | None, options: ActivityOptions
) -> list[Callable[..., Any]]:
    """The activities a worker registers for the loop named `name`: its model call and its
    tool call, both taking and returning `bytes` (`_payloads`)."""

    limit = options.max_payload_bytes

    @activity.defn(name=model_activity(name))
    async def call_model(data: bytes) -> bytes:
        every = None if activity.info().is_local else options.model.heartbeat  # none locally
        answer = await _heartbeating(every, partial(_model_call, loop, data))
        if len(answer) > limit:
            too_large = PayloadTooLargeError("a model answer", len(answer), limit=limit)
            raise model_failure(ModelError(too_large.message))
        return answer

    @activity.defn(name=tool_activity(name))
    async def call_tool(data: bytes) -> bytes:
        given = decode(data, ToolInput)
        try:
            async with _tool_named(loop, given.tool) as tool:
                chosen = options.for_tool(tool)
                backend = chosen.backend if given.tool in loop.config.tools else "asyncio"
                work = partial(_tool_call, tool, given, deps_factory, backend)
                return within(encode(await _heartbeating(chosen.heartbeat, work)), limit, given)
        except ToolsetError as error:  # its server unreachable: the call's error, as locally
            return encode(ToolOutcome(error_type=type(error).__name__, error_message=str(error)))

    if loop.config.toolsets is None:
        return [call_model, call_tool]

    @activity.defn(name=toolsets_activity(name))
    async def list_toolsets(data: bytes) -> bytes:
        decode(data, ListingRequest)
        work = partial(listing_of, loop)
        return encode(await _heartbeating(options.default_tool.heartbeat, work))

    return [call_model, call_tool, list_toolsets]


async def _model_call(loop: ReActLoop[Any], data: bytes) -> bytes:
    """One model call of the loop's own model: its answer and the deltas streamed before it;
    a `ModelError` fails the activity for good, carrying the error."""
    call = decode(data, ModelCall)
    request = decode_request(call.request)
    model = loop.config.model
    deltas: list[ModelDelta] = []

    async def on_delta(delta: ModelDelta) -> None:
        deltas.append(delta)
        if not activity.info().is_local:  # a local activity cannot heartbeat
            activity.heartbeat()  # the SDK sends at most one per interval: cheap per delta

    try:
        if call.stream:
            response = await model.stream(request, on_delta)
        else:
            response = await model.request(request)
    except ModelError as error:
        raise model_failure(error) from None
    answer = ModelAnswer(encode_response(response), encode_deltas(deltas))
    return encode(answer)


def model_failure(error: ModelError) -> ApplicationError:
    """The activity failure that carries `error` to the workflow; never retried by Temporal
    (the loop's RetryPolicy and FallbackModel decide, as in a local run)."""
    return ApplicationError(
        error.message, encode_error(error), type=MODEL_ERROR, non_retryable=True
    )


def within(outcome: bytes, limit: int, given: ToolInput) -> bytes:
    """The encoded tool outcome, or, over `limit` bytes, the call's error result naming the
    limit and the size (the run goes on; the model reads why the result is missing)."""
    if len(outcome) <= limit:
        return outcome
    what = f"the result of tool {given.tool!r}"
    too_large = PayloadTooLargeError(what, len(outcome), given.run_id, limit)
    return encode(ToolOutcome(error_type=type(too_large).__name__, error_message=too_large.message))


@asynccontextmanager
async def _tool_named(loop: ReActLoop[Any], name: str) -> AsyncIterator[Tool]:
    """The loop's tool `name` for one call: one of its own, else one its toolsets list now
    (on the worker's open connection, else on one held for the block)."""
    tool = loop.config.tools.get(name)
    if tool is not None:
        yield tool
        return
    async with toolset_tool(loop, name) as listed:
        if listed is None:
            unknown = UnknownToolError(name, sorted(loop.config.tools))
            raise ApplicationError(unknown.message, type=UNKNOWN_TOOL, non_retryable=True)
        yield listed


async def _tool_call(
    tool: Tool, given: ToolInput, deps_factory: DepsFactory | None, backend: Backend
) -> ToolOutcome:
    """Run the tool with `deps` built for this call; its exception (or the deps factory's)
    is its outcome."""
    info = RunInfo(given.loop, given.run_id, given.user_id, given.session_id)
    arguments = orjson.loads(given.arguments)
    try:  # deps that cannot be built: the call failed, as a tool's own error would
        deps = await _deps(deps_factory, info)
        context = RunContext(given.run_id, deps, given.user_id, given.session_id, given.call_id)
        value = await _invoke(tool, arguments, context, backend)
    except Exception as exc:
        return ToolOutcome(error_type=type(exc).__name__, error_message=str(exc))
    return outcome_of(value)


async def _deps(deps_factory: DepsFactory | None, info: RunInfo) -> Any:
    """The deps of one call: `deps_factory(info)`, awaited when it is async; None without one."""
    if deps_factory is None:
        return None
    deps = deps_factory(info)
    return await deps if inspect.isawaitable(deps) else deps


async def _invoke(
    tool: Tool, arguments: dict[str, Any], context: RunContext[Any], backend: Backend
) -> object:
    """The tool's value, on the worker's event loop, or under `trio.run` in a worker thread."""
    if backend == "asyncio":
        return await tool.invoke(arguments, context)
    trio = importlib.import_module("trio")  # only a worker that runs trio tools needs it

    def in_trio() -> object:
        return trio.run(tool.invoke, arguments, context)

    return await anyio.to_thread.run_sync(in_trio, abandon_on_cancel=True)


def outcome_of(value: object) -> ToolOutcome:
    """A tool's value as the workflow gets it: the text a local run would show (uncut: the
    loop cuts it), or its content parts when it returned images, documents or audio; a value
    that cannot be shown is a TypeError outcome, as a local run reports it."""
    if type(value) is str:
        return ToolOutcome(value=value)
    try:
        parts = parts_of(value)
        if parts is not None:
            return ToolOutcome(parts=encode_parts(parts))
        return ToolOutcome(value=render(value, _UNCUT))
    except (TypeError, orjson.JSONEncodeError) as exc:
        return ToolOutcome(
            error_type="TypeError", error_message=f"its result cannot be shown: {exc}"
        )


async def _heartbeating(every: float | None, work: Callable[[], Awaitable[T]]) -> T:
    """`work()`, heartbeating three times per `every` seconds (the heartbeat timeout) while
    it runs; without a timeout, just `work()`."""
    if every is None:
        return await work()
    done: list[T] = []
    failed: list[Exception] = []  # raised as it is, not in an exception group
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_beat, every / 3)
        try:
            done.append(await work())
        except Exception as exc:
            failed.append(exc)
        tasks.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return done[0]


async def _beat(interval: float) -> None:
    while True:
        activity.heartbeat()
        await anyio.sleep(interval)

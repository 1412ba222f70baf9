"""The loop a workflow drives: a clone of the user's loop whose model and tools are activity
proxies, with the workflow's clock and a fresh in-memory store (ADR-0033).

Everything else (phases, hooks, policies, stop conditions, the approval gate, output checks)
is the user's, unmodified, and runs as workflow code: deterministic, because its time comes
from the workflow and its model answers, call ids and tool results from the activities'
recorded results.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import anyio
import attrs
import orjson
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, FailureError
from temporalio.exceptions import TimeoutError as ActivityTimeoutError

from reactloop._core import (
    CallInterrupted,
    DeltaSink,
    ModelRequest,
    ModelResponse,
    RunContext,
    Tool,
    ToolSpec,
)
from reactloop._durable import MemoryStore
from reactloop._errors import ModelError, ProviderUnavailableError
from reactloop._loop import ReActLoop
from reactloop._temporal._activities import MODEL_ERROR
from reactloop._temporal._contracts import (
    ModelAnswer,
    ModelCall,
    ToolInput,
    ToolOutcome,
    model_activity,
    tool_activity,
)
from reactloop._temporal._options import ActivityOptions, ModelActivity, ToolActivity
from reactloop._temporal._payloads import (
    decode,
    decode_deltas,
    decode_error,
    decode_parts,
    decode_response,
    encode,
    encode_request,
)
from reactloop._temporal._toolsets import Calls, listed_toolsets
from reactloop._tools import LoopToolsets

_MODEL_TRAITS = frozenset(
    {
        "provider",
        "model",
        "price_key",
        "price_keys",
        "supports_native_output",
        "supports_forced_tool_choice",
        "takes_forced_tool_choice",
        "strict_output_schema",
    }
)
"""What the loop reads of its model while it runs (pricing, output): the real model's."""


def _seconds(value: float | None) -> timedelta | None:
    return None if value is None else timedelta(seconds=value)


async def executed(activity: str, data: bytes, *, local: bool = False, **options: Any) -> bytes:
    """The activity's result (run as a local activity if `local`), awaited so that a cancel
    scope (a tool's or model's timeout, an interrupt) ends the wait at once: the activity is
    asked to cancel and left to settle. The SDK's own await shields itself while the cancel is
    delivered, and anyio's scope, redelivering its cancel each turn of the loop, would spin the
    workflow task past its deadlock limit."""
    start = workflow.start_local_activity if local else workflow.start_activity
    handle = start(activity, data, result_type=bytes, **options)
    settled = anyio.Event()
    handle.add_done_callback(lambda _: settled.set())
    try:
        await settled.wait()
    except BaseException:
        handle.cancel()
        handle.add_done_callback(_retrieved)
        raise
    result: bytes = handle.result()
    return result


def _retrieved(handle: Any) -> None:
    """Read a cancelled activity's outcome, so that its failure is not logged as unretrieved."""
    if not handle.cancelled():
        handle.exception()


class ActivityModel:
    """The loop's model in a workflow: each call is the loop's model activity; the deltas the
    real model streamed are replayed to `on_delta` when the answer arrives, and a `ModelError`
    the real model raised is raised here, the same class with the same fields."""

    def __init__(self, real: object, name: str, options: ModelActivity) -> None:
        self._real = real
        self._name = name
        self._options = options

    def __getattr__(self, attribute: str) -> Any:
        if attribute in _MODEL_TRAITS:
            return getattr(self._real, attribute)
        raise AttributeError(attribute)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One model call by the model activity."""
        return await self._call(request, None)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """One streamed model call by the model activity; deltas come with its answer."""
        return await self._call(request, on_delta)

    async def _call(self, request: ModelRequest, on_delta: DeltaSink | None) -> ModelResponse:
        run_id = workflow.info().workflow_id
        call = ModelCall(self._name, run_id, encode_request(request), on_delta is not None)
        options = self._options
        try:
            data = await executed(
                model_activity(self._name), encode(call), **_model_options(options)
            )
        except (ActivityError, ApplicationError, ActivityTimeoutError) as failure:  # local: bare
            raise model_error_of(failure, options.attempts) from None
        answer = decode(data, ModelAnswer)
        if on_delta is not None:
            for delta in decode_deltas(answer.deltas):
                await on_delta(delta)
        return decode_response(answer.response)


def _model_options(options: ModelActivity) -> dict[str, Any]:
    """How the model activity is started: as a local activity (no heartbeat, the workflow's
    own worker), or a regular one."""
    common: dict[str, Any] = {
        "start_to_close_timeout": timedelta(seconds=options.start_to_close),
        "retry_policy": RetryPolicy(maximum_attempts=options.attempts),
        "summary": "model call",
    }
    if options.local:
        return {**common, "local": True}
    heartbeat = _seconds(options.heartbeat)
    return {**common, "heartbeat_timeout": heartbeat, "task_queue": options.task_queue}


def model_error_of(failure: FailureError, attempts: int) -> ModelError:
    """The model error a failed model activity stands for: the one the real model raised, or,
    when the worker failed every attempt, a retryable `ProviderUnavailableError` saying so. A
    regular activity's failure wraps its cause; a local activity's is the cause itself."""
    cause = failure.cause if isinstance(failure, ActivityError) else failure
    if isinstance(cause, ApplicationError) and cause.type == MODEL_ERROR and cause.details:
        detail = cause.details[0]
        if isinstance(detail, bytes):
            return decode_error(detail)
    why = cause if cause is not None else failure
    return ProviderUnavailableError(
        f"the model activity failed on the worker {attempts} time(s) in a row "
        f"(not a provider's answer): {why}"
    )


class ActivityTool:
    """One of the loop's tools in a workflow: the same name, spec, timeout, exclusivity,
    argument checks and approval traits, each call run by the loop's tool activity, which
    is told the run's session (`session_id`: a session's turn runs with its transcript as
    history, so the workflow's own run has none)."""

    def __init__(
        self, real: Tool, name: str, options: ToolActivity, session_id: str | None = None
    ) -> None:
        self._real = real
        self._name = name
        self._options = options
        self._session_id = session_id
        self.attempts = options.attempts_for(real)

    def __getattr__(self, attribute: str) -> Any:  # idempotent, requires_approval, external
        return getattr(self._real, attribute)

    @property
    def name(self) -> str:
        """The real tool's name."""
        return self._real.name

    @property
    def spec(self) -> ToolSpec:
        """The real tool's spec."""
        return self._real.spec

    @property
    def timeout(self) -> float | None:
        """The real tool's timeout (the loop enforces it in the workflow)."""
        return self._real.timeout

    @property
    def exclusive(self) -> bool:
        """Whether the real tool runs alone."""
        return self._real.exclusive

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """The real tool's checks of the model's arguments (pure: run in the workflow)."""
        return self._real.parse_arguments(arguments)

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """The call, run by the tool activity: the tool's value, or its exception raised again
        (the same class name and message); a call lost with its worker is `CallInterrupted`."""
        given = ToolInput(
            self._name,
            self.name,
            orjson.dumps(arguments),
            context.run_id,
            context.call_id or "",
            context.user_id,
            context.session_id or self._session_id,
        )
        try:
            data = await executed(
                tool_activity(self._name),
                encode(given),
                **self._activity_options(),
            )
        except ActivityError as failure:
            raise _lost(failure) from None
        return _value_of(decode(data, ToolOutcome))

    def _activity_options(self) -> dict[str, Any]:
        options = self._options
        start_to_close = options.start_to_close
        if self.timeout is not None:  # the loop's limit cancels it first
            start_to_close = max(start_to_close, self.timeout + 30.0)
        return {
            "start_to_close_timeout": timedelta(seconds=start_to_close),
            "heartbeat_timeout": timedelta(seconds=options.heartbeat),
            "retry_policy": RetryPolicy(maximum_attempts=self.attempts),
            "task_queue": options.task_queue,
            "summary": f"tool {self.name}",
        }


_ERRORS: dict[str, type[Exception]] = {}


def remote_error(type_name: str, message: str) -> Exception:
    """An exception of a class named `type_name` (made once per name) with `message`: the
    error result reads as the local run's ("tool 'x' raised KeyError: ...")."""
    kind = _ERRORS.get(type_name)
    if kind is None:
        kind = _ERRORS[type_name] = type(type_name, (Exception,), {"__module__": __name__})
    return kind(message)


def _value_of(outcome: ToolOutcome) -> object:
    if outcome.error_type is not None:
        raise remote_error(outcome.error_type, outcome.error_message or "")
    if outcome.parts is not None:
        return decode_parts(outcome.parts)
    return outcome.value


def _lost(failure: ActivityError) -> Exception:
    """What a failed tool activity means: the tool the worker lacks as an error, else a call
    cut off with its worker (every allowed attempt failed or timed out)."""
    cause = failure.cause
    if isinstance(cause, ApplicationError) and cause.non_retryable:
        return remote_error((cause.type or "ApplicationError").rpartition(".")[2], cause.message)
    return CallInterrupted(str(cause if cause is not None else failure))


def _proxied_tools(
    config_tools: Mapping[str, Tool], name: str, options: ActivityOptions, session: str | None
) -> dict[str, Tool]:
    return {
        key: ActivityTool(tool, name, options.for_tool(tool), session)
        for key, tool in config_tools.items()
    }


def _listed(
    host: LoopToolsets | None, name: str, options: ActivityOptions, session: str | None
) -> LoopToolsets | None:
    """The loop's toolsets as the workflow sees them: listed by the toolsets activity, each
    listed tool an `ActivityTool` (its calls the tool activity's, as the loop's own tools)."""
    if host is None:
        return None

    def wrap(tool: Tool) -> Tool:
        return ActivityTool(tool, name, options.for_tool(tool), session)

    return listed_toolsets(host, name, Calls(executed, wrap), options.default_tool)


def workflow_loop(
    loop: ReActLoop[Any], name: str, options: ActivityOptions, session_id: str | None = None
) -> ReActLoop[Any]:
    """A clone of `loop` for one workflow run: model and tools are activity proxies, the clock
    and the approval's wall clock are the workflow's, the store a fresh `MemoryStore` (its
    records derive from activity results and workflow time, so replay rebuilds it), retries
    without random jitter, and no tracing or run limiter (those belong to the worker side).
    A session's turn passes `session_id`: its tools' activities are told it."""
    config = loop.config
    tools = _proxied_tools(config.tools, name, options, session_id)
    clone: ReActLoop[Any] = object.__new__(ReActLoop)
    clone.__dict__.update(loop.__dict__, _owns_model=False)
    clone.config = attrs.evolve(
        config,
        model=ActivityModel(config.model, name, options.model),
        tools=tools,
        tool_list=tuple(tools.values()),
        toolsets=_listed(config.toolsets, name, options, session_id),
        holds_calls=config.holds_calls or config.toolsets is not None,  # it has a store here
        store=MemoryStore(),
        owns_store=False,
        clock=workflow.time,
        approval=attrs.evolve(config.approval, wall_clock=workflow.time),
        retry=attrs.evolve(config.retry, jitter=0.0),
        tracing=None,
        run_limiter=None,
    )
    return clone

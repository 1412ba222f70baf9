"""OpenTelemetry GenAI spans and metrics for a loop's runs (imported only when telemetry is on).

The span model: one `invoke_agent` span per run (INTERNAL: the agent runs in process),
one `chat` span per model-call attempt (CLIENT: a retry shows as a second span), one
`execute_tool` span per tool call (INTERNAL; parallel calls are siblings), and optionally one
span per phase. Each opens as the current span, so whatever runs inside (a sub-agent's run, a sync
tool in a worker thread) joins the same trace through context propagation.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio
import attrs
from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from reactloop._core import (
    DeltaSink,
    Model,
    ModelRequest,
    ModelResponse,
    Phase,
    PhaseDecision,
    StepDraft,
    Usage,
    not_async,
)
from reactloop._errors import ReactLoopError
from reactloop._telemetry import _semconv as sc
from reactloop._telemetry._content import input_messages, output_messages, system_instructions
from reactloop._telemetry._settings import Telemetry, WrappedPhase
from reactloop._version import __version__

if TYPE_CHECKING:
    from reactloop._core import RunResult, StepPlan, ToolResult
    from reactloop._loop import Run
    from reactloop._phases import Admitted

Attributes = dict[str, Any]
SCOPE = "reactloop"


CANCELLED = "cancelled"  # error.type of an operation cut short (a timeout, a cancelled run)


COST = "reactloop.usage.cost"
"""The dollars a run (the agent span) or a step (its reasoning phase's span) cost, when known."""


def error_type(error: BaseException) -> str:
    """`error.type`: a reactloop error's stable code, `cancelled` for a cancellation, else the
    exception's class name."""
    if isinstance(error, ReactLoopError):
        return str(error.code.value)
    if isinstance(error, anyio.get_cancelled_exc_class()):
        return CANCELLED
    return type(error).__qualname__


def marked_failure(error: BaseException) -> bool:
    """Whether an exception leaving a span marks it failed: errors and cancellations (a model
    call cut by its timeout), not the interpreter's exits (KeyboardInterrupt, SystemExit)."""
    return isinstance(error, Exception | anyio.get_cancelled_exc_class())


def model_identity(model: object) -> tuple[str, str | None]:
    """The provider name and requested model name a model object declares (`provider`,
    `model`) in the conventions' spelling (`sc.WELL_KNOWN_PROVIDERS`), with their fallback
    `_OTHER` for a provider it does not name."""
    provider = getattr(model, "provider", None)
    name = getattr(model, "model", None)
    return (
        sc.WELL_KNOWN_PROVIDERS.get(provider, provider)
        if isinstance(provider, str) and provider
        else sc.OTHER,
        name if isinstance(name, str) and name else None,
    )


class Tracing:
    """A loop's tracer and instruments, and the spans it opens; built once per loop."""

    def __init__(self, telemetry: Telemetry, tracer: trace.Tracer, meter: metrics.Meter) -> None:
        self.telemetry = telemetry
        self.tracer = tracer
        self.content = telemetry.record_content
        self.agent_name = telemetry.agent_name
        self.token_usage = meter.create_histogram(
            sc.GEN_AI_CLIENT_TOKEN_USAGE,
            unit=sc.TOKEN_USAGE_UNIT,
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=list(sc.TOKEN_USAGE_BUCKETS),
        )
        self.duration = meter.create_histogram(
            sc.GEN_AI_CLIENT_OPERATION_DURATION,
            unit=sc.DURATION_UNIT,
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=list(sc.DURATION_BUCKETS),
        )

    @classmethod
    def of(cls, telemetry: Telemetry) -> Tracing:
        """The tracing for `telemetry`'s providers (None: the global ones)."""
        tracer = trace.get_tracer(SCOPE, __version__, telemetry.tracer_provider)
        meter = metrics.get_meter(SCOPE, __version__, telemetry.meter_provider)
        return cls(telemetry, tracer, meter)

    @contextmanager
    def span(self, name: str, kind: SpanKind, attributes: Attributes) -> Iterator[Span]:
        """A span, current while the block runs; an error or a cancellation leaving it marks it
        failed (`error.type`)."""
        span = self.tracer.start_span(name, kind=kind, attributes=attributes)
        with trace.use_span(
            span, end_on_exit=True, record_exception=False, set_status_on_exception=False
        ):
            try:
                yield span
            except BaseException as error:
                if marked_failure(error):
                    self.failed(span, error_type(error), error)
                raise

    def failed(self, span: Span, kind: str, error: BaseException | None = None) -> None:
        """Mark `span` failed with `error.type`; the message (it may quote content) only when
        content is recorded."""
        span.set_attribute(sc.ERROR_TYPE, kind)
        detail = str(error) if self.content and error is not None else kind
        span.set_status(Status(StatusCode.ERROR, detail))
        if self.content and error is not None:
            span.record_exception(error)

    # -- the run ---------------------------------------------------------------------------

    def agent_attributes(self, run: Run) -> Attributes:
        provider, model = model_identity(run.config.model)
        attributes: Attributes = {
            sc.GEN_AI_OPERATION_NAME: sc.OPERATION_INVOKE_AGENT,
            sc.GEN_AI_PROVIDER_NAME: provider,
            "reactloop.run.id": run.state.run_id,
        }
        if model is not None:
            attributes[sc.GEN_AI_REQUEST_MODEL] = model
        if self.agent_name is not None:
            attributes[sc.GEN_AI_AGENT_NAME] = self.agent_name
        if run.context.session_id is not None:  # the session is the conversation
            attributes[sc.GEN_AI_CONVERSATION_ID] = run.context.session_id
        if self.content:
            attributes[sc.GEN_AI_INPUT_MESSAGES] = input_messages(run.state.messages)
        return attributes

    async def invoke_agent(
        self, run: Run, drive: Callable[[], Awaitable[RunResult[Any]]]
    ) -> RunResult[Any]:
        """Run `drive` (the whole run) inside its `invoke_agent` span."""
        name = sc.OPERATION_INVOKE_AGENT
        if self.agent_name is not None:
            name = f"{name} {self.agent_name}"
        with self.span(name, SpanKind.INTERNAL, self.agent_attributes(run)) as span:
            result = await drive()
            self.run_finished(span, result)
            return result

    def run_finished(self, span: Span, result: RunResult[Any]) -> None:
        usage = result.usage + result.setup_usage
        span.set_attribute(sc.GEN_AI_USAGE_INPUT_TOKENS, usage.input_tokens)
        span.set_attribute(sc.GEN_AI_USAGE_OUTPUT_TOKENS, usage.output_tokens)
        span.set_attribute("reactloop.stop_reason", str(result.stop_reason.value))
        span.set_attribute("reactloop.steps", len(result.steps))
        if result.cache_breaks:
            span.set_attribute("reactloop.cache_breaks", result.cache_breaks)
        if result.usage.cost is not None:  # known: the loop has prices for every call
            span.set_attribute(COST, float(result.usage.cost))
        if result.error is not None:
            self.failed(span, error_type(result.error), result.error)
        if self.content and isinstance(result.output, str):
            span.set_attribute(sc.GEN_AI_OUTPUT_MESSAGES, output_messages(result.output, None))

    # -- model calls -----------------------------------------------------------------------

    def model(self, model: Model, fallback: str | None = None) -> Model:
        """`model` with a `chat` span per call (a model already traced is kept as it is);
        `fallback` names it within a `FallbackModel` (the span's `reactloop.fallback.model`)."""
        return model if isinstance(model, TracedModel) else TracedModel(model, self, fallback)

    def prepare_step(self, prepare: Any) -> Any:
        """The loop's `prepare_step`, whose plans' models (perhaps other than the loop's) are
        traced too."""
        if prepare is None:
            return None

        async def traced(run: Run, plan: StepPlan) -> StepPlan:
            changed = prepare(run, plan)
            if inspect.isawaitable(changed):
                changed = await changed
            model = getattr(changed, "model", None)
            if isinstance(model, Model) and not isinstance(model, TracedModel):
                changed = attrs.evolve(changed, model=TracedModel(model, self))
            return changed  # type: ignore[no-any-return]

        return traced

    # -- tool calls ------------------------------------------------------------------------

    async def execute_tool(
        self, run: Run, item: Admitted, invoke: Callable[[Run, Admitted], Awaitable[ToolResult]]
    ) -> ToolResult:
        """Run one admitted call inside its `execute_tool` span."""
        tool, call = item.tool, item.call
        attributes: Attributes = {
            sc.GEN_AI_OPERATION_NAME: sc.OPERATION_EXECUTE_TOOL,
            sc.GEN_AI_TOOL_NAME: tool.name,
            sc.GEN_AI_TOOL_CALL_ID: call.id,
            sc.GEN_AI_TOOL_TYPE: sc.TOOL_TYPE_FUNCTION,
        }
        if self.content:
            attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS] = call.arguments
        name = f"{sc.OPERATION_EXECUTE_TOOL} {tool.name}"
        with self.span(name, SpanKind.INTERNAL, attributes) as span:
            result = await invoke(run, item)
            if result.is_error:
                code = result.error_code
                self.failed(span, sc.OTHER if code is None else str(code.value))
            if self.content:
                span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, result.content)
            return result

    # -- phases ----------------------------------------------------------------------------

    def phases(self, phases: Sequence[Phase]) -> tuple[Phase, ...]:
        """`phases` with a span each when phase spans are on; else as they are."""
        if not self.telemetry.phase_spans:
            return tuple(phases)
        return tuple(TracedPhase(phase, self) for phase in phases)


class TracedModel:
    """A model whose every call is a `chat` span, measured by the GenAI client metrics; any
    other attribute is the wrapped model's."""

    def __init__(self, model: Model, tracing: Tracing, fallback: str | None = None) -> None:
        self.inner = model
        self.tracing = tracing
        self.fallback = fallback
        self.provider_name, self.model_name = model_identity(model)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"TracedModel({self.inner!r})"

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The wrapped model's `request`, traced."""
        return await self._traced(request, lambda: self.inner.request(request), stream=False)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """The wrapped model's `stream`, traced."""
        return await self._traced(
            request, lambda: self.inner.stream(request, on_delta), stream=True
        )

    def _metric_attributes(self) -> Attributes:
        attributes: Attributes = {
            sc.GEN_AI_OPERATION_NAME: sc.OPERATION_CHAT,
            sc.GEN_AI_PROVIDER_NAME: self.provider_name,
        }
        if self.model_name is not None:
            attributes[sc.GEN_AI_REQUEST_MODEL] = self.model_name
        return attributes

    async def _traced(
        self, request: ModelRequest, call: Callable[[], Awaitable[ModelResponse]], stream: bool
    ) -> ModelResponse:
        tracing = self.tracing
        measured = self._metric_attributes()
        name = sc.OPERATION_CHAT if self.model_name is None else f"chat {self.model_name}"
        attributes = {**measured, **request_attributes(request, stream)}
        if self.fallback is not None:
            attributes[sc.REACTLOOP_FALLBACK_MODEL] = self.fallback
        if tracing.content:
            attributes.update(request_content(request))
        started = time.perf_counter()
        with tracing.span(name, SpanKind.CLIENT, attributes) as span:
            try:
                response = await call()
            except BaseException as error:
                if marked_failure(error):
                    measured[sc.ERROR_TYPE] = error_type(error)
                    tracing.duration.record(time.perf_counter() - started, measured)
                raise
            self._answered(span, response, measured)
            tracing.duration.record(time.perf_counter() - started, measured)
            return response

    def _answered(self, span: Span, response: object, measured: Attributes) -> None:
        """Record the response on the span and the token usage (by token type)."""
        if not isinstance(response, ModelResponse):
            return  # the reasoning phase reports the broken contract
        if response.model is not None:
            measured[sc.GEN_AI_RESPONSE_MODEL] = response.model
        span.set_attributes(response_attributes(response))
        if self.tracing.content:
            reason = response.finish_reason.value
            span.set_attribute(sc.GEN_AI_OUTPUT_MESSAGES, output_messages(response.message, reason))
        record_usage(self.tracing, response.usage, measured)


def request_attributes(request: ModelRequest, stream: bool) -> Attributes:
    """The request's settings under the conventions' names."""
    settings = request.settings
    attributes: Attributes = {sc.GEN_AI_REQUEST_STREAM: stream}
    if settings.max_output_tokens is not None:
        attributes[sc.GEN_AI_REQUEST_MAX_TOKENS] = settings.max_output_tokens
    if settings.temperature is not None:
        attributes[sc.GEN_AI_REQUEST_TEMPERATURE] = settings.temperature
    return attributes


def request_content(request: ModelRequest) -> Attributes:
    """The request's messages and instructions (recorded only when content is)."""
    attributes: Attributes = {sc.GEN_AI_INPUT_MESSAGES: input_messages(request.messages)}
    if request.instructions:
        attributes[sc.GEN_AI_SYSTEM_INSTRUCTIONS] = system_instructions(request.instructions)
    return attributes


def response_attributes(response: ModelResponse) -> Attributes:
    """The response's model, finish reason, id (when the model gives one) and token usage."""
    usage = response.usage
    attributes: Attributes = {
        sc.GEN_AI_RESPONSE_FINISH_REASONS: (str(response.finish_reason.value),),
        sc.GEN_AI_USAGE_INPUT_TOKENS: usage.input_tokens,
        sc.GEN_AI_USAGE_OUTPUT_TOKENS: usage.output_tokens,
    }
    if response.model is not None:
        attributes[sc.GEN_AI_RESPONSE_MODEL] = response.model
    if response.id is not None:
        attributes[sc.GEN_AI_RESPONSE_ID] = response.id
    if usage.cache_read_tokens:
        attributes[sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        attributes[sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        attributes[sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = usage.reasoning_tokens
    return attributes


def record_usage(tracing: Tracing, usage: Usage, measured: Mapping[str, Any]) -> None:
    """`gen_ai.client.token.usage`: one measurement per token type."""
    for kind, count in (
        (sc.TOKEN_TYPE_INPUT, usage.input_tokens),
        (sc.TOKEN_TYPE_OUTPUT, usage.output_tokens),
    ):
        tracing.token_usage.record(count, {**measured, sc.GEN_AI_TOKEN_TYPE: kind})


class TracedPhase(WrappedPhase):
    """A phase inside a span of its own (`Telemetry(phase_spans=True)`)."""

    def __init__(self, phase: Phase, tracing: Tracing) -> None:
        super().__init__(phase)
        self.tracing = tracing

    async def __call__(self, run: Run) -> PhaseDecision:
        """Run the phase in its span; the decision's kind is recorded on it."""
        name = self.name
        draft = run.state.current
        spent = None if draft is None else draft.usage
        attributes: Attributes = {"reactloop.phase": name}
        breaks = None if draft is None else draft.prefix_breaks
        if draft is not None:
            attributes["reactloop.step"] = draft.index
        with self.tracing.span(f"phase {name}", SpanKind.INTERNAL, attributes) as span:
            pending = self.inner(run)
            if not inspect.isawaitable(pending):
                not_async(self.inner, pending)
            decision = await pending
            span.set_attribute("reactloop.decision", type(decision).__name__)
            if draft is not None and draft.prefix_breaks is not breaks:  # set by this phase
                span.set_attribute("reactloop.step.prefix_breaks", draft.prefix_breaks)
            _step_cost(span, spent, run.state.current)
            return decision


def _step_cost(span: Span, before: Usage | None, after: StepDraft | None) -> None:
    """The step's cost so far on the span of a phase that spent tokens (the reasoning phase),
    when it is known (the loop has prices)."""
    if after is not None and after.usage is not before and after.usage.cost is not None:
        span.set_attribute(COST, float(after.usage.cost))

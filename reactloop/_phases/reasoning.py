"""`ReasoningPhase`: build the step's request, call the model, record and settle its answer."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, assert_never

import anyio
import attrs

from reactloop._core import (
    PROCEED,
    CheckPoint,
    DeltaSink,
    ForcedTool,
    HookPoint,
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelRetrying,
    OutputStreamed,
    PhaseDecision,
    ReasoningDelta,
    ReasoningStreamed,
    StepPlan,
    Stop,
    TextDelta,
    TextStreamed,
    Tool,
    ToolCallDelta,
    ToolCallStreamed,
    ToolChoice,
    Usage,
    session_keyed,
)
from reactloop._durable import NULL_JOURNAL
from reactloop._errors import ContractError, ModelTimeoutError, name_of
from reactloop._output import FINAL_TOOL, NOTHING, PartialAnswers
from reactloop._phases._fallback import ask_fallback
from reactloop._phases._interrupt import Heard, cut_short, interruptible
from reactloop._phases.applier import park_stop
from reactloop._policies import RetryNotice, retry_after
from reactloop._providers import FallbackModel

if TYPE_CHECKING:
    from reactloop._loop import Run


async def plan_step(run: Run) -> StepPlan:
    """The step's model, tools, tool choice and messages, after the loop's `prepare_step`."""
    config, state = run.config, run.state
    plain = run.catalog is None and config.selection is None
    tools = config.tool_list if plain else await step_tools(run)
    choice: ToolChoice | ForcedTool = ToolChoice.AUTO if tools else ToolChoice.NONE
    if state.finishing is not None:
        tools, choice = _finishing_tools(run)
    plan = StepPlan(config.model, tools, choice, tuple(state.messages), state.instructions)
    if config.prepare_step is not None:
        prepared = config.prepare_step(run, plan)
        plan = await prepared if inspect.isawaitable(prepared) else prepared
        _check_plan(config.prepare_step, plan)
    return fit_to_window(run, plan)


async def step_tools(run: Run) -> tuple[Tool, ...]:
    """The tools this step may offer: the loop's, its toolsets' current ones, then those the
    loop's selector and cap keep."""
    config, catalog = run.config, run.catalog
    tools = config.tool_list if catalog is None else await catalog.refresh()
    if config.selection is None:
        return tools
    by_name = config.tools if catalog is None else catalog.by_name
    return await config.selection.choose(run, tools, by_name)


def _finishing_tools(run: Run) -> tuple[tuple[Tool, ...], ToolChoice | ForcedTool]:
    """The last call after a cap offers no tools, or only the final-answer tool, forced, when
    the answer must be a structured output (TOOL strategy)."""
    output = run.config.output
    final = None if output is None else run.config.tools.get(FINAL_TOOL)
    if output is None or final is None:
        return (), ToolChoice.NONE
    return (final,), output.forced


def _check_plan(prepare_step: object, plan: object) -> None:
    """Raise the `ContractError` of a `prepare_step` that returned no usable plan."""
    culprit = f"prepare_step {name_of(prepare_step)}"
    if not isinstance(plan, StepPlan):
        rule = "prepare_step returns a StepPlan (e.g. attrs.evolve(plan, ...))"
        raise ContractError(culprit, rule, plan)
    if not isinstance(plan.model, Model):
        raise ContractError(culprit, "the plan's model implements Model", plan.model)


def fit_to_window(run: Run, plan: StepPlan) -> StepPlan:
    """Trim the plan's messages to the context window (the transcript itself is kept whole)."""
    if run.window is None:
        return plan
    specs = [tool.spec for tool in plan.tools]
    fitted = run.window.fit(plan.messages, plan.instructions, specs)
    return plan if fitted is plan.messages else attrs.evolve(plan, messages=fitted)


def watch_prefix(run: Run, request: ModelRequest) -> None:
    """Note on the step why its request does not extend the previous one, if it does not
    (the run's cache breaks, see `PrefixWatch`)."""
    watch, window = run.prefix, run.window
    if watch is None:
        return
    breaks = watch.observe(request, 0 if window is None else window.drops)
    draft = run.state.current
    if breaks and draft is not None:
        draft.prefix_breaks = breaks


def offered(run: Run, plan: StepPlan) -> Mapping[str, Tool] | None:
    """The step's tools by name; None when they are the loop's own (no copy needed)."""
    if plan.tools is run.config.tool_list:
        return None
    catalog = run.catalog
    if catalog is not None and plan.tools is catalog.tools:
        return catalog.by_name
    return {tool.name: tool for tool in plan.tools}


def build_request(run: Run, plan: StepPlan) -> ModelRequest:
    """The provider-neutral request for a plan."""
    config, catalog = run.config, run.catalog
    if plan.tools is config.tool_list:
        specs = config.tool_specs
    elif catalog is not None and plan.tools is catalog.tools:
        specs = catalog.specs
    else:
        specs = tuple(tool.spec for tool in plan.tools)
    settings = config.request_settings or config.settings
    if settings.cache is not None:  # a session's runs cache under its id (docs/caching.md)
        cache = session_keyed(settings.cache, run.context.session_id)
        settings = settings if cache is settings.cache else attrs.evolve(settings, cache=cache)
    return ModelRequest(
        messages=plan.messages,
        instructions=plan.instructions,
        tools=specs,
        tool_choice=plan.tool_choice,
        settings=settings,
    )


async def call_model(
    run: Run, model: Model, request: ModelRequest, heard: Heard | None = None
) -> ModelResponse:
    """One model call within the loop's `model_timeout`; `heard` collects the streamed text."""
    timeout = run.config.model_timeout
    if timeout is None:
        return await _call_once(run, model, request, heard)
    try:
        with anyio.fail_after(timeout):
            return await _call_once(run, model, request, heard)
    except TimeoutError:
        raise ModelTimeoutError(f"model call exceeded its model_timeout of {timeout:g} s") from None


def _forwarder(run: Run, heard: Heard | None) -> DeltaSink:
    """What a streamed call sends its deltas to: each as its event (and, with a structured
    output, the partial answers its text gives)."""
    answers = None if run.config.output is None else PartialAnswers(run.config.output)

    async def forward(delta: ModelDelta) -> None:
        match delta:
            case TextDelta():
                if heard is not None:
                    heard.add(delta.text)
                await run.emit(TextStreamed(delta.text))
            case ToolCallDelta(index=index, arguments_delta=arguments, name=name, id=call_id):
                await run.emit(ToolCallStreamed(index, arguments, name, call_id))
            case ReasoningDelta():
                await run.emit(ReasoningStreamed(delta.text))
            case _:
                assert_never(delta)
        if answers is not None:
            partial = answers.feed(delta)
            if partial is not NOTHING:
                await run.emit(OutputStreamed(partial))

    return forward


async def _call_once(
    run: Run, model: Model, request: ModelRequest, heard: Heard | None
) -> ModelResponse:
    """Stream when someone listens (forwarding deltas as events), else one plain request."""
    if run.listening:
        forward = _forwarder(run, heard)
        pending = model.stream(request, forward)
    else:
        pending = model.request(request)
    if not inspect.isawaitable(pending):
        raise _model_broke(run, model, "is async: it returns an awaitable", pending)
    response = await pending
    if not isinstance(response, ModelResponse):
        raise _model_broke(run, model, "returns a ModelResponse", response)
    return response


def _model_broke(run: Run, model: Model, rule: str, value: object) -> ContractError:
    method = "stream" if run.listening else "request"
    return ContractError(f"model {type(model).__name__}", f"Model.{method} {rule}", value)


async def announce_retry(run: Run, notice: RetryNotice) -> None:
    """Tell stream consumers that a model call is retried (its deltas so far are void)."""
    if run.listening:
        event = ModelRetrying(notice.attempt, notice.error.code, notice.delay, notice.retries_left)
        await run.emit(event)


class ReasoningPhase:
    """Calls the model once and records its answer.

    Before-reasoning hooks may replace the request or stop; after-reasoning hooks may replace the
    response or stop (a stop is parked for `HookDecisionApplier`). The phase stops the run itself
    when the run is finishing (the last, tool-less call after a cap) or a final-answer condition
    fired. Whether a text-only answer completes the run is `ToolPhase`'s call, so that phases
    placed in between (reflection) can still ask for another pass.
    """

    def __repr__(self) -> str:
        """`Name()`: a phase has no settings, so a sequence prints readably."""
        return f"{type(self).__name__}()"

    async def __call__(self, run: Run) -> PhaseDecision:
        """Call the model; proceed, or stop on finishing or a final answer."""
        draft = run.state.current
        if draft is not None and draft.recovered is not None and draft.response is not None:
            return settle(run, draft.response)  # resumed: the journal holds this response
        hooks = run.config.hooks
        plan = await plan_step(run)
        run.step_tools = offered(run, plan)
        request = build_request(run, plan)
        if hooks.has(HookPoint.BEFORE_REASONING):
            verdict = await hooks.before_reasoning(run, request)
            if park_stop(run, verdict):
                return PROCEED
            request = verdict.value
        watch_prefix(run, request)
        durable = run.journal is not NULL_JOURNAL  # no store: nothing to await per step
        if durable:
            await run.journal.check_lease()  # a worker that lost the run calls no model
        heard = Heard()
        if run.interruptible or run.interrupt is not None:
            response = await interruptible(run, partial(_ask, run, plan.model, request, heard))
        else:  # nothing outside this task can cut the call (see `interruptible`)
            response = await _ask(run, plan.model, request, heard)
        if response is None:
            return cut_short(run, heard.text)
        spent, stopped = response.usage, False
        if run.config.pricing is not None:  # what the call cost, before a hook may replace it
            spent = run.config.pricing.priced(plan.model, response, spent)
        if hooks.has(HookPoint.AFTER_REASONING):
            verdict_after = await hooks.after_reasoning(run, response)
            response = verdict_after.value
            stopped = park_stop(run, verdict_after)
        response = run.state.record_response(response, spent)  # call ids unique in the run
        if durable:
            await journal_response(run, response, spent)
        return PROCEED if stopped else settle(run, response)


async def journal_response(run: Run, response: ModelResponse, spent: Usage) -> None:
    """Commit the step's response now, or hold it for its first call's start when nothing can
    act on it before then (`Run.response_waits`)."""
    if run.response_waits:
        run.journal.hold_response(run.state, response, spent)
    else:
        await run.journal.response(run.state, response, spent)


async def _ask(run: Run, model: Model, request: ModelRequest, heard: Heard) -> ModelResponse:
    """The model's answer, retried per the loop's policy; `heard` holds the text the current
    attempt streamed (what an interrupt keeps). A `FallbackModel` has each of its models
    retried so, in turn (see `ask_fallback`)."""
    if isinstance(model, FallbackModel):
        return await ask_fallback(run, model, partial(_retried, run, request, heard), heard)
    return await _retried(run, request, heard, model)


async def _retried(run: Run, request: ModelRequest, heard: Heard, model: Model) -> ModelResponse:
    """One model's answer, retried per the loop's policy (each retry a `ModelRetrying`). The
    first attempt is made here: what a retry needs is only built when one is needed."""
    try:
        return await call_model(run, model, request, heard)
    except Exception as error:
        failed = error
    return await retry_after(
        run.config.retry,
        partial(call_model, run, model, request, heard),
        failed,
        sleep=run.config.sleep,
        on_retry=partial(_retrying, run, heard),
    )


async def _retrying(run: Run, heard: Heard, notice: RetryNotice) -> None:
    """Before a retry: the text the failed attempt streamed is void."""
    heard.clear()
    await announce_retry(run, notice)


def settle(run: Run, response: ModelResponse) -> PhaseDecision:
    """Stop when finishing or when a final-answer condition fired; else proceed."""
    signal = run.config.stop_when.check(run, CheckPoint.AFTER_REASONING)
    finishing = run.state.finishing
    if finishing is not None and run.config.output is not None:
        return PROCEED  # the last answer must still be the structured output: OutputPhase checks it
    if finishing is not None:
        output = signal.output if signal is not None else response.message.text
        return Stop(finishing.reason, finishing.detail, output=output)
    if signal is not None:
        return Stop(signal.reason, signal.detail, output=signal.output)
    return PROCEED

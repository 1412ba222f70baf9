"""The loop's options (one typed dict, shared by `ReActLoop` and `testing.make_run`) and their
validation into a `LoopConfig`."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack, cast

import anyio
import attrs

from reactloop._approval import (
    DEFAULT_POLICY,
    ENV_VAR,
    MAX_TOKEN_BYTES,
    MIN_TOKEN_BYTES,
    ApprovalPolicy,
    SigningKeys,
    StateKey,
    signing_keys,
)
from reactloop._core import (
    AnyOf,
    Clock,
    Hook,
    HookFailure,
    HookPoint,
    InputGuard,
    Model,
    ModelSettings,
    Phase,
    PrepareStep,
    RunStore,
    StopCondition,
    Tool,
    ToolSelector,
    Toolset,
)
from reactloop._durable import from_url
from reactloop._errors import ConfigurationError
from reactloop._loop._run import Instructions, LoopConfig
from reactloop._output import (
    FINAL_TOOL,
    Output,
    OutputStrategy,
    OutputValidator,
    build_output,
    output_validator,
)
from reactloop._phases import OutputPhase
from reactloop._policies import (
    NON_EMPTY_INPUT,
    CapPolicy,
    ContextWindow,
    HookSet,
    MaxIterations,
    MaxToolCalls,
    RepetitionPolicy,
    RetryPolicy,
    RunLimiter,
    Sleep,
    StopWhen,
)
from reactloop._providers import model_from_string
from reactloop._resolver import DEFAULT_RESOLVER, ErrorMessageResolver
from reactloop._telemetry import Telemetry, telemetry_option, tracing_for
from reactloop._tools import FunctionTool, LoopToolsets, RelevanceSelector, ToolSelection
from reactloop._validate import (
    accepts,
    boolean,
    fail,
    function,
    instance,
    integer,
    member,
    optional_function,
    optional_instance,
    optional_integer,
    optional_number,
    reject_unknown,
    sequence_of,
    text,
)

if TYPE_CHECKING:
    from reactloop._telemetry._otel import Tracing

ToolLike = Tool | Callable[..., Any]


class LoopOptions(TypedDict, total=False):
    """Every option of a loop; all are optional (defaults in `build_config`)."""

    tools: Sequence[ToolLike | Toolset]  # tools, plain functions (wrapped), toolsets (MCP servers)
    tool_selector: ToolSelector | None  # picks each step's tools, best first; default: all of them
    max_tools_per_request: int | None  # at most this many tools offered per step; default no cap
    instructions: Instructions  # system prompt, or a function of the RunContext
    hooks: Sequence[Hook]
    max_iterations: int  # default 10
    max_tool_calls: int | None  # default None (no cap)
    stop_when: StopCondition | None  # extra stop conditions, combined with |
    on_cap: CapPolicy  # default FINAL_CALL: one last model call without tools
    tool_timeout: float | None  # per tool call (a tool's own timeout wins); default None
    max_concurrency: int | None  # tool calls running at once in a step; default unlimited
    max_result_chars: int  # default 20,000; longer tool results are cut with a marker
    input_guards: Sequence[InputGuard]
    prepare_step: PrepareStep | None  # change model, tools, tool choice, messages per step
    settings: ModelSettings
    model_timeout: float | None  # per model call; default None
    run_timeout: float | None  # whole run; default None
    repetition: RepetitionPolicy | None  # default nudge after 3 identical calls, stop after 5
    strict: bool  # raise a failed run's error instead of returning it; default False
    retry: RetryPolicy  # model-call retries; default 2 retries, backoff 0.5 s doubling to 8 s
    sleep: Sleep  # how retries wait; default anyio.sleep (inject one in tests)
    max_concurrent_runs: int | None  # runs of this loop executing at once; default unlimited
    run_limiter: RunLimiter | None  # a limiter shared with other loops (instead of the above)
    error_messages: ErrorMessageResolver  # error -> user-facing sentence (RunResult.user_message)
    context_window: ContextWindow | None  # fit each request to the window; default: no trimming
    clock: Clock | None  # default time.monotonic
    store: RunStore | str | None  # journal runs (resume, sessions): a store or a URL
    approval: ApprovalPolicy | None  # which calls wait for a person, and for how long
    state_key: StateKey  # signs paused runs' state tokens; default: REACTLOOP_STATE_KEY
    max_state_token_bytes: int  # longer state tokens are refused unread; default 1 MiB
    output_strategy: OutputStrategy  # how the model is asked for output_type; default AUTO
    output_retries: int  # more tries after an answer that does not validate; default 2
    output_validators: Sequence[OutputValidator]  # check or change the value; raise OutputRetry
    telemetry: Telemetry | None  # OpenTelemetry GenAI traces and metrics (the otel extra)


_TOOL_ITEM_RULE = "a Tool, a function, or a Toolset (an MCP server)"


def _tool_item(option: str, item: object) -> ToolLike | Toolset:
    if isinstance(item, type):
        raise ConfigurationError.invalid(option, item, _TOOL_ITEM_RULE)
    if isinstance(item, Toolset | Tool) or callable(item):
        return item
    raise ConfigurationError.invalid(option, item, _TOOL_ITEM_RULE)


def _as_tool(item: ToolLike) -> Tool:
    return item if isinstance(item, Tool) else FunctionTool.from_function(item)


def _check_tool(tool: Tool) -> None:
    """A tool object's own settings (a `@tool` function's are checked when it is made)."""
    name = text("tools[].name", tool.name)
    optional_number(f"tools[{name!r}].timeout", tool.timeout)
    boolean(f"tools[{name!r}].exclusive", tool.exclusive)
    for flag in ("idempotent", "requires_approval", "external"):
        boolean(f"tools[{name!r}].{flag}", getattr(tool, flag, False))


def tool_registry(items: Sequence[ToolLike | Toolset]) -> dict[str, Tool]:
    """Tools by name (toolsets left out); plain functions are wrapped with `@tool`; names must
    be unique."""
    registry: dict[str, Tool] = {}
    for item in sequence_of("tools", items, _tool_item, "tools, functions or toolsets"):
        if isinstance(item, Toolset):
            continue
        tool = _as_tool(item)
        _check_tool(tool)
        if tool.name in registry:
            raise ConfigurationError.invalid(
                "tools", tool.name, f"unique tool names ({tool.name!r} appears twice)"
            )
        registry[tool.name] = tool
    return registry


def loop_toolsets(items: Sequence[object]) -> LoopToolsets | None:
    """The toolsets among the loop's tools, each once; None when there are none."""
    toolsets = tuple(item for item in items if isinstance(item, Toolset))
    for index, toolset in enumerate(toolsets):
        if any(other is toolset for other in toolsets[:index]):
            rule = "each toolset given once (the same server object appears twice)"
            raise ConfigurationError.invalid("tools", toolset, rule)
    return LoopToolsets(toolsets) if toolsets else None


def tool_selection(options: Mapping[str, Any]) -> ToolSelection | None:
    """The loop's selector and cap; None when neither is given (every tool, every step). A cap
    alone ranks with `RelevanceSelector` (cutting the list in declared order would drop tools
    for where they were written, not for what the conversation needs)."""
    selector, limit = options.get("tool_selector"), options.get("max_tools_per_request")
    if selector is None and limit is None:
        return None
    return ToolSelection(selector or RelevanceSelector(), limit)


def stop_conditions(
    max_iterations: int, max_tool_calls: int | None, stop_when: StopCondition | None
) -> StopCondition:
    """The loop's caps and the user's conditions as one any-of condition."""
    conditions: list[StopCondition] = [MaxIterations(max_iterations)]
    if max_tool_calls is not None:
        conditions.append(MaxToolCalls(max_tool_calls))
    if stop_when is not None:
        conditions.append(stop_when)
    return AnyOf.of(*conditions)


_STOP_WHEN_RULE = (
    "a StopCondition (combine several with |), a predicate taking the steps"
    " (1 positional argument), or None"
)


def _stop_when(option: str, value: object) -> StopCondition | None:
    """A stop condition; a plain predicate over the steps is wrapped in `StopWhen`."""
    if value is None or isinstance(value, StopCondition):
        return value
    if callable(value) and not isinstance(value, type) and accepts(value, 1):
        return StopWhen(value, getattr(value, "__name__", "predicate"))
    raise ConfigurationError.invalid(option, value, _STOP_WHEN_RULE)


def _instructions(option: str, value: object) -> Instructions:
    if value is None or isinstance(value, str):
        return value
    if callable(value) and not isinstance(value, type) and accepts(value, 1):
        return cast(Instructions, value)
    rule = "a string, a function of the RunContext (1 positional argument), or None"
    raise ConfigurationError.invalid(option, value, rule)


def _hook(option: str, value: object) -> Hook:
    hook = instance(option, value, Hook, "a Hook instance")
    if isinstance(hook.priority, bool) or not isinstance(hook.priority, int):
        raise ConfigurationError.invalid(f"{option}.priority", hook.priority, "an int")
    member(f"{option}.on_raise", hook.on_raise, HookFailure)
    for point in HookPoint:
        method = getattr(type(hook), point.value)
        if method is not getattr(Hook, point.value) and not inspect.iscoroutinefunction(method):
            rule = f"an async method (`async def {point.value}`)"
            bound = getattr(hook, point.value)
            raise ConfigurationError.invalid(f"{option}.{point.value}", bound, rule)
    return hook


def _store(option: str, value: object) -> RunStore | None:
    """A run store, or one made from a URL string (`sqlite:///runs.db`, `postgresql://...`,
    `memory://`)."""
    if value is None or (isinstance(value, RunStore) and not isinstance(value, type)):
        return value
    if isinstance(value, str):
        return from_url(option, value)
    rule = (
        "a RunStore (SqliteStore, PostgresStore, MemoryStore), a store URL such as"
        " 'sqlite:///runs.db', or None"
    )
    raise ConfigurationError.invalid(option, value, rule)


def _guard(option: str, value: object) -> InputGuard:
    return function(option, value, 1)


Check = Callable[[str, object], object]

CHECKS: dict[str, Check] = {
    "tools": lambda o, v: sequence_of(o, v, _tool_item, "tools, functions or toolsets"),
    "tool_selector": lambda o, v: optional_function(o, v, 2),
    "max_tools_per_request": optional_integer,
    "instructions": _instructions,
    "hooks": lambda o, v: sequence_of(o, v, _hook, "Hook instances"),
    "max_iterations": integer,
    "max_tool_calls": optional_integer,
    "stop_when": _stop_when,
    "on_cap": lambda o, v: member(o, v, CapPolicy),
    "tool_timeout": optional_number,
    "max_concurrency": optional_integer,
    "max_result_chars": integer,
    "input_guards": lambda o, v: sequence_of(o, v, _guard, "input guards (functions of the text)"),
    "prepare_step": lambda o, v: optional_function(o, v, 2),
    "settings": lambda o, v: instance(o, v, ModelSettings, "a ModelSettings"),
    "model_timeout": optional_number,
    "run_timeout": optional_number,
    "repetition": lambda o, v: optional_instance(o, v, RepetitionPolicy, "a RepetitionPolicy"),
    "strict": boolean,
    "retry": lambda o, v: instance(o, v, RetryPolicy, "a RetryPolicy"),
    "sleep": lambda o, v: function(o, v, 1),
    "max_concurrent_runs": optional_integer,
    "run_limiter": lambda o, v: optional_instance(o, v, RunLimiter, "a RunLimiter"),
    "error_messages": lambda o, v: function(o, v, 1),
    "context_window": lambda o, v: optional_instance(o, v, ContextWindow, "a ContextWindow"),
    "clock": lambda o, v: optional_function(o, v, 0),
    "store": _store,
    "approval": lambda o, v: optional_instance(o, v, ApprovalPolicy, "an ApprovalPolicy"),
    "state_key": lambda o, v: signing_keys(v) if v is not None else None,
    "max_state_token_bytes": lambda o, v: integer(o, v, minimum=MIN_TOKEN_BYTES),
    "output_strategy": lambda o, v: member(o, v, OutputStrategy),
    "output_retries": lambda o, v: integer(o, v, minimum=0),
    "output_validators": lambda o, v: sequence_of(o, v, output_validator, "functions"),
    "telemetry": telemetry_option,
}
"""One check per option of `LoopOptions`: it raises `ConfigurationError` or returns the value."""

OPTION_NAMES = frozenset(LoopOptions.__optional_keys__ | LoopOptions.__required_keys__)


def check_options(
    owner: str, options: Mapping[str, object], extra: Collection[str] = ()
) -> dict[str, Any]:
    """The options checked and normalized; an unknown name fails with a did-you-mean hint.

    `extra` are the owner's own parameters, offered as suggestions beside the loop options.
    """
    reject_unknown(owner, options, OPTION_NAMES | set(extra))
    return {name: CHECKS[name](name, value) for name, value in options.items()}


def _model(model: object) -> Model:
    if isinstance(model, str):
        return model_from_string(model)
    if not isinstance(model, Model):
        fail("model", model, "a model string or an object implementing the Model contract")
    return model


LOOP_PARAMETERS = ("model", "phases", "start_phases", "output_type")


def _phase(option: str, value: object) -> Phase:
    if isinstance(value, type) or not callable(value) or not accepts(value, 1):
        raise ConfigurationError.invalid(option, value, "a phase (an object called with the run)")
    return cast(Phase, value)


def phase_sequence(
    option: str, phases: Sequence[Phase] | None, default: Callable[[], Sequence[Phase]]
) -> tuple[Phase, ...]:
    """The loop's phases (`phases` or `start_phases`), each checked; None takes the default.

    An empty `phases` is refused: an iteration that does nothing would never end the run.
    """
    if phases is None:
        return tuple(default())
    checked = sequence_of(option, phases, _phase, "phases")
    if option == "phases" and not checked:
        rule = "at least one phase (an empty iteration never ends the run); see default_phases()"
        raise ConfigurationError.invalid(option, phases, rule)
    return checked


def build_config(
    model: Model | str, output_type: object = None, **options: Unpack[LoopOptions]
) -> LoopConfig:
    """Check every option and build the shared, read-only configuration."""
    checked = check_options("ReActLoop", options, LOOP_PARAMETERS)
    model = _model(model)
    stop = stop_conditions(
        checked.get("max_iterations", 10),
        checked.get("max_tool_calls"),
        checked.get("stop_when"),
    )
    tools = tool_registry(checked.get("tools", ()))
    toolsets = loop_toolsets(checked.get("tools", ()))
    output = _output(output_type, model, checked)
    _offer_final_tool(tools, output)
    holds = _holds_calls(checked.get("approval"), [*tools.values(), *_toolsets_of(toolsets)])
    store = checked.get("store")
    keys = checked.get("state_key") or signing_keys(None)  # None: the environment's key
    _can_resume_paused(holds, store, keys)
    # A toolset's tools are known once listed: any of them may need a decision when a paused run
    # can be resumed; a listed one that needs it otherwise is refused then (see `_toolsets`).
    holds = holds or (toolsets is not None and (store is not None or keys is not None))
    tracing = tracing_for(checked.get("telemetry"))
    return LoopConfig(
        model=model if tracing is None else tracing.model(model),
        tools=tools,
        tool_list=tuple(tools.values()),
        tool_specs=tuple(tool.spec for tool in tools.values()),
        instructions=checked.get("instructions"),
        hooks=HookSet.of(checked.get("hooks", ())),
        stop_when=stop,
        on_cap=checked.get("on_cap", CapPolicy.FINAL_CALL),
        tool_timeout=checked.get("tool_timeout"),
        max_concurrency=checked.get("max_concurrency"),
        max_result_chars=checked.get("max_result_chars", 20_000),
        input_guards=(NON_EMPTY_INPUT, *checked.get("input_guards", ())),
        prepare_step=_traced_prepare(tracing, checked.get("prepare_step")),
        settings=checked.get("settings", ModelSettings()),
        clock=checked.get("clock") or time.monotonic,
        model_timeout=checked.get("model_timeout"),
        run_timeout=checked.get("run_timeout"),
        repetition=checked.get("repetition", RepetitionPolicy()),
        strict=checked.get("strict", False),
        retry=checked.get("retry", RetryPolicy()),
        sleep=checked.get("sleep", anyio.sleep),
        run_limiter=_run_limiter(checked),
        error_messages=checked.get("error_messages", DEFAULT_RESOLVER),
        context_window=checked.get("context_window"),
        store=store,
        owns_store=isinstance(options.get("store"), str),
        approval=checked.get("approval") or DEFAULT_POLICY,
        holds_calls=holds,
        state_keys=keys,
        max_state_token_bytes=checked.get("max_state_token_bytes", MAX_TOKEN_BYTES),
        output=output,
        request_settings=_request_settings(output, checked.get("settings", ModelSettings())),
        toolsets=toolsets,
        selection=tool_selection(checked),
        tracing=tracing,
    )


def _traced_prepare(tracing: Tracing | None, prepare: PrepareStep | None) -> PrepareStep | None:
    """`prepare_step`, tracing the models its plans name, when telemetry is on."""
    return prepare if tracing is None else tracing.prepare_step(prepare)


def _toolsets_of(toolsets: LoopToolsets | None) -> tuple[Toolset, ...]:
    return () if toolsets is None else toolsets.toolsets


def _request_settings(output: Output | None, settings: ModelSettings) -> ModelSettings | None:
    """The settings every request carries, computed once: with a NATIVE output's format."""
    return None if output is None else output.settings(settings)


def _offer_final_tool(tools: dict[str, Tool], output: Output | None) -> None:
    """With the TOOL strategy the final-answer tool is one of the loop's tools."""
    final = None if output is None else output.tool
    if final is None:
        return
    if final.name in tools:
        rule = f"a name other than {final.name!r}, which the final-answer tool of output_type uses"
        raise ConfigurationError.invalid("tools", final.name, rule)
    tools[final.name] = final


def config_with_output(
    config: LoopConfig, output_type: object, options: Mapping[str, object]
) -> LoopConfig:
    """The configuration for runs that end with `output_type` (its output options checked);
    the model, tools and store are shared, and stay the original loop's to close."""
    checked = check_options("with_output", options)
    extra = set(checked) - {"output_strategy", "output_retries", "output_validators"}
    if extra:
        name = sorted(extra)[0]
        raise ConfigurationError.invalid(name, checked[name], "an output option")
    if output_type is None:
        raise ConfigurationError.invalid("output_type", None, "a type (or a JSON schema)")
    tools = {name: tool for name, tool in config.tools.items() if name != FINAL_TOOL}
    output = _output(output_type, config.model, checked)
    _offer_final_tool(tools, output)
    return attrs.evolve(
        config,
        tools=tools,
        tool_list=tuple(tools.values()),
        tool_specs=tuple(tool.spec for tool in tools.values()),
        output=output,
        request_settings=_request_settings(output, config.settings),
        owns_store=False,
    )


def check_output_phase(config: LoopConfig, phases: Sequence[Phase]) -> None:
    """A loop with `output_type` needs an `OutputPhase` among its phases to check the answer."""
    if config.output is None or any(isinstance(phase, OutputPhase) for phase in phases):
        return
    rule = "a sequence with OutputPhase() (before ToolPhase) when output_type is given"
    raise ConfigurationError.invalid("phases", phases, rule)


def _output(output_type: object, model: Model, checked: Mapping[str, Any]) -> Output | None:
    """The loop's structured output; its options alone (without `output_type`) are refused."""
    defaults = {
        "output_strategy": OutputStrategy.AUTO,
        "output_retries": 2,
        "output_validators": (),
    }
    if output_type is None:
        extra = [n for n, default in defaults.items() if n in checked and checked[n] != default]
        if extra:
            rule = "given with output_type (it has no effect without one)"
            raise ConfigurationError.invalid(extra[0], checked[extra[0]], rule)
        return None
    return build_output(
        output_type,
        model,
        strategy=checked.get("output_strategy", OutputStrategy.AUTO),
        retries=checked.get("output_retries", 2),
        validators=checked.get("output_validators", ()),
    )


def _can_resume_paused(holds: bool, store: object, keys: SigningKeys | None) -> None:
    """A loop whose runs may pause must be able to resume them: from a store, or from a signed
    state token (which needs a key)."""
    if holds and store is None and keys is None:
        rule = (
            "given when no store is: a run that pauses for approval is resumed from a store or"
            f" from a signed state token (state_key=..., or the {ENV_VAR} environment variable)"
        )
        raise ConfigurationError.invalid("state_key", None, rule)


def _holds_calls(policy: ApprovalPolicy | None, tools: Iterable[Tool | Toolset]) -> bool:
    """Whether any call may be held: a policy decides, or a tool (or a toolset's, such as an
    MCP server's with `requires_approval`) needs approval or is external."""
    if policy is not None and policy.needs_approval is not None:
        return True
    return any(
        getattr(tool, "requires_approval", False) or getattr(tool, "external", False)
        for tool in tools
    )


def _run_limiter(options: Mapping[str, Any]) -> RunLimiter | None:
    limit, shared = options.get("max_concurrent_runs"), options.get("run_limiter")
    if limit is not None and shared is not None:
        raise ConfigurationError(
            "give max_concurrent_runs or run_limiter, not both",
            option="max_concurrent_runs",
            value=limit,
            rule="not given together with run_limiter",
        )
    return RunLimiter(limit) if limit is not None else shared

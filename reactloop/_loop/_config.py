"""The loop's options (one typed dict, shared by `ReActLoop` and `testing.make_run`) and their
validation into a `LoopConfig`."""

from __future__ import annotations

import inspect
import os
import sys
import time
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack, cast

import anyio
import attrs
from attrs import frozen

from reactloop import _providers
from reactloop._approval import (
    DEFAULT_POLICY,
    ENV_VAR,
    MAX_TOKEN_BYTES,
    MIN_TOKEN_BYTES,
    ApprovalOptions,
    ApprovalPolicy,
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
from reactloop._costs import CostOptions, pricing_for
from reactloop._durable import from_url
from reactloop._errors import ConfigurationError
from reactloop._loop._output_config import (
    offer_final_tool,
    request_settings,
)
from reactloop._loop._run import Instructions, LoopConfig
from reactloop._loop._tool_options import (
    ToolLike,
    loop_toolsets,
    tool_item,
    tool_registry,
    tool_selection,
)
from reactloop._output import (
    FINAL_TOOL,
    Output,
    OutputOptions,
    OutputStrategy,
    OutputValidator,
    build_output,
    output_validator,
)
from reactloop._phases import traced_model
from reactloop._policies import (
    NON_EMPTY_INPUT,
    CapPolicy,
    ContextWindow,
    CostBudget,
    HookSet,
    Limits,
    MaxIterations,
    MaxToolCalls,
    RepetitionPolicy,
    RetryPolicy,
    RunLimiter,
    Sleep,
    StopWhen,
)
from reactloop._resolver import DEFAULT_RESOLVER, ErrorMessageResolver
from reactloop._telemetry import Telemetry, telemetry_option, tracing_for
from reactloop._tools import (
    LoopToolsets,
    ToolSelection,
)
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
)

if TYPE_CHECKING:
    from reactloop._telemetry._otel import Tracing


class DeprecatedLoopOptions(TypedDict, total=False):
    """The flat keys that moved into an options group in 0.2 (see `MOVED`); each still works,
    with a `DeprecationWarning` naming its new home, and goes in 0.3 (ADR-0024)."""

    tool_selector: ToolSelector | None  # tool_selection=ToolSelection(selector=...)
    max_tools_per_request: int | None  # tool_selection=ToolSelection(max_tools=...)
    max_tool_calls: int | None  # limits=Limits(max_tool_calls=...)
    on_cap: CapPolicy  # limits=Limits(on_cap=...)
    tool_timeout: float | None  # limits=Limits(tool_timeout=...)
    max_concurrency: int | None  # limits=Limits(max_concurrency=...)
    max_result_chars: int  # limits=Limits(max_result_chars=...)
    model_timeout: float | None  # limits=Limits(model_timeout=...)
    run_timeout: float | None  # limits=Limits(run_timeout=...)
    repetition: RepetitionPolicy | None  # limits=Limits(repetition=...)
    max_concurrent_runs: int | None  # limits=Limits(max_concurrent_runs=...)
    run_limiter: RunLimiter | None  # limits=Limits(run_limiter=...)
    state_key: StateKey  # approval=ApprovalOptions(state_key=...)
    max_state_token_bytes: int  # approval=ApprovalOptions(max_state_token_bytes=...)
    output_strategy: OutputStrategy  # output=OutputOptions(strategy=...)
    output_retries: int  # output=OutputOptions(retries=...)
    output_validators: Sequence[OutputValidator]  # output=OutputOptions(validators=...)


class LoopOptions(DeprecatedLoopOptions, total=False):
    """Every option of a loop; all are optional (defaults in `build_config`). The everyday ones
    are flat; the rest come in options groups, one per package that owns them (ADR-0024)."""

    tools: Sequence[ToolLike | Toolset]  # tools, plain functions (wrapped), toolsets (MCP servers)
    instructions: Instructions  # system prompt, or a function of the RunContext
    hooks: Sequence[Hook]
    max_iterations: int  # default 10
    stop_when: StopCondition | None  # extra stop conditions, combined with |
    input_guards: Sequence[InputGuard]
    prepare_step: PrepareStep | None  # change model, tools, tool choice, messages per step
    settings: ModelSettings
    strict: bool  # raise a failed run's error instead of returning it; default False
    retry: RetryPolicy  # model-call retries; default 2 retries, backoff 0.5 s doubling to 8 s
    sleep: Sleep  # how retries and store leases wait; default anyio.sleep (inject one in tests)
    clock: Clock | None  # default time.monotonic (inject a FakeClock in tests)
    error_messages: ErrorMessageResolver  # error -> user-facing sentence (RunResult.user_message)
    context_window: ContextWindow | None  # fit each request to the window; default: no trimming
    store: RunStore | str | None  # journal runs (resume, sessions): a store or a URL
    telemetry: Telemetry | None  # OpenTelemetry GenAI traces and metrics (the otel extra)
    limits: Limits  # caps, timeouts, concurrency; default Limits()
    tool_selection: ToolSelection | None  # the tools offered each step; default: all of them
    approval: ApprovalOptions | ApprovalPolicy | None  # who approves calls, how tokens are sealed
    output: OutputOptions  # how output_type is asked for and checked; default OutputOptions()
    cost: CostOptions | None  # price table: Usage.cost per step and run, CostBudget; default none


@frozen
class Moved:
    """Where a flat key of 0.1 lives now: `group=Class(field=...)`."""

    group: str
    kind: str
    field: str

    def home(self, value: str = "...") -> str:
        return f"{self.group}={self.kind}({self.field}={value})"


GROUPS: dict[str, tuple[str, dict[str, str]]] = {
    "limits": (
        "Limits",
        {name: name for name in attrs.fields_dict(Limits)},
    ),
    "tool_selection": (
        "ToolSelection",
        {"selector": "tool_selector", "max_tools": "max_tools_per_request"},
    ),
    "approval": (
        "ApprovalOptions",
        {
            "policy": "approval",
            "state_key": "state_key",
            "max_state_token_bytes": "max_state_token_bytes",
        },
    ),
    "output": (
        "OutputOptions",
        {
            "strategy": "output_strategy",
            "retries": "output_retries",
            "validators": "output_validators",
        },
    ),
}
"""Each options group: its class's name, and its fields by the flat key they stand for."""

MOVED: dict[str, Moved] = {
    flat: Moved(group, kind, name)
    for group, (kind, fields) in GROUPS.items()
    for name, flat in fields.items()
    if flat != group
}
"""The deprecated flat keys and their new homes."""

HOMES = {flat: moved.home() for flat, moved in MOVED.items()}
"""How a did-you-mean hint names a deprecated flat key: by its new home."""


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


def _approval(option: str, value: object) -> ApprovalOptions | None:
    """An `ApprovalOptions`; a bare `ApprovalPolicy` is short for `ApprovalOptions(policy=...)`."""
    if value is None or isinstance(value, ApprovalOptions):
        return value
    if isinstance(value, ApprovalPolicy):
        return ApprovalOptions(policy=value)
    return instance(option, value, ApprovalOptions, "an ApprovalOptions or an ApprovalPolicy")


Check = Callable[[str, object], object]

CHECKS: dict[str, Check] = {
    "tools": lambda o, v: sequence_of(o, v, tool_item, "tools, functions or toolsets"),
    "limits": lambda o, v: instance(o, v, Limits, "a Limits"),
    "tool_selection": lambda o, v: optional_instance(o, v, ToolSelection, "a ToolSelection"),
    "output": lambda o, v: instance(o, v, OutputOptions, "an OutputOptions"),
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
    "approval": _approval,
    "state_key": lambda o, v: signing_keys(v) if v is not None else None,
    "max_state_token_bytes": lambda o, v: integer(o, v, minimum=MIN_TOKEN_BYTES),
    "output_strategy": lambda o, v: member(o, v, OutputStrategy),
    "output_retries": lambda o, v: integer(o, v, minimum=0),
    "output_validators": lambda o, v: sequence_of(o, v, output_validator, "functions"),
    "telemetry": telemetry_option,
    "cost": lambda o, v: optional_instance(o, v, CostOptions, "a CostOptions"),
}
"""One check per option of `LoopOptions`: it raises `ConfigurationError` or returns the value."""

OPTION_NAMES = frozenset(LoopOptions.__optional_keys__ | LoopOptions.__required_keys__)


def check_options(
    owner: str, options: Mapping[str, object], extra: Collection[str] = ()
) -> dict[str, Any]:
    """The options checked and normalized, each group spread into the flat keys `LoopConfig` is
    built from; an unknown name fails with a did-you-mean hint, and a flat key that moved into a
    group warns (or fails when its group is given too).

    `extra` are the owner's own parameters, offered as suggestions beside the loop options.
    """
    reject_unknown(owner, options, OPTION_NAMES | set(extra), HOMES)
    checked = {name: CHECKS[name](name, value) for name, value in options.items()}
    for name in sorted(checked.keys() & MOVED.keys()):
        _moved_key(owner, name, options)
    for group in checked.keys() & GROUPS.keys():
        spread = checked.pop(group)
        for field, flat in GROUPS[group][1].items():
            if spread is not None and flat not in checked:  # a flat key beside a bare policy
                checked[flat] = getattr(spread, field)
    return checked


def _moved_key(owner: str, name: str, options: Mapping[str, object]) -> None:
    """Warn about a deprecated flat key, or fail when its group is given as well (a bare
    `approval=ApprovalPolicy(...)` is not the group)."""
    moved = MOVED[name]
    if isinstance(options.get(moved.group), _GROUP_KINDS):
        raise ConfigurationError(
            f"{owner} got both {name}= and {moved.group}=: give {moved.home()} only",
            option=name,
            value=options[name],
            rule=f"not given together with {moved.group}= (it moved to {moved.home()})",
        )
    deprecated(f"{owner}({name}=...) is deprecated: use {moved.home()}; the flat key goes in 0.3")


_GROUP_KINDS = (Limits, ToolSelection, ApprovalOptions, OutputOptions)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def deprecated(message: str) -> None:
    """A `DeprecationWarning` pointing at the first caller outside reactloop."""
    frame, level = sys._getframe(1), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    warnings.warn(message, DeprecationWarning, stacklevel=level)


def _model(model: object) -> Model:
    if isinstance(model, str):
        return _providers.model_from_string(model)  # loads the providers (httpx) on first use
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
    output = _output(output_type, model, checked, options)
    offer_final_tool(tools, output)
    settings = checked.get("settings", ModelSettings())
    _settings_taken(model, request_settings(output, settings) or settings)
    holds = _holds_calls(checked.get("approval"), [*tools.values(), *_toolsets_of(toolsets)])
    store = checked.get("store")
    keys = checked.get("state_key") or signing_keys(None)  # None: the environment's key
    # A toolset's tools are known once listed: any of them may need a decision when a paused run
    # can be resumed; a listed one that needs it otherwise is refused then (see `_toolsets`).
    holds = holds or (toolsets is not None and (store is not None or keys is not None))
    tracing = tracing_for(checked.get("telemetry"))
    return LoopConfig(
        model=model if tracing is None else traced_model(tracing, model),
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
        request_settings=request_settings(output, checked.get("settings", ModelSettings())),
        toolsets=toolsets,
        selection=tool_selection(checked),
        tracing=tracing,
        pricing=pricing_for(checked.get("cost"), _budgeted(stop), model),
    )


def _budgeted(stop: StopCondition) -> bool:
    """Whether the loop's stop conditions hold a `CostBudget` (it needs every price known)."""
    return any(isinstance(one, CostBudget) for one in getattr(stop, "conditions", (stop,)))


def _traced_prepare(tracing: Tracing | None, prepare: PrepareStep | None) -> PrepareStep | None:
    """`prepare_step`, tracing the models its plans name, when telemetry is on."""
    return prepare if tracing is None else tracing.prepare_step(prepare)


def _toolsets_of(toolsets: LoopToolsets | None) -> tuple[Toolset, ...]:
    return () if toolsets is None else toolsets.toolsets


def _settings_taken(model: Model, settings: ModelSettings | None) -> None:
    """Refuse, when the loop is built, settings the model says it does not take (a provider's
    `check_settings`: the checks each of its requests makes, such as a reasoning level or a
    temperature its profile refuses), rather than at the first model call."""
    check = getattr(model, "check_settings", None)
    if settings is not None and callable(check):
        check(settings)


def config_with_output(
    config: LoopConfig, output_type: object, options: Mapping[str, object]
) -> LoopConfig:
    """The configuration for runs that end with `output_type` (its output options checked);
    the model, tools and store are shared, and stay the original loop's to close."""
    checked = check_options("with_output", options)
    extra = set(options) - {"output", "output_strategy", "output_retries", "output_validators"}
    if extra:
        name = sorted(extra)[0]
        raise ConfigurationError.invalid(name, options[name], "output= (an OutputOptions)")
    if output_type is None:
        raise ConfigurationError.invalid("output_type", None, "a type (or a JSON schema)")
    tools = {name: tool for name, tool in config.tools.items() if name != FINAL_TOOL}
    output = _output(output_type, config.model, {**checked, "settings": config.settings}, options)
    offer_final_tool(tools, output)
    return attrs.evolve(
        config,
        tools=tools,
        tool_list=tuple(tools.values()),
        tool_specs=tuple(tool.spec for tool in tools.values()),
        output=output,
        request_settings=request_settings(output, config.settings),
        owns_store=False,
    )


def _output(
    output_type: object, model: Model, checked: Mapping[str, Any], given: Collection[str]
) -> Output | None:
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
            name = extra[0] if extra[0] in given else f"OutputOptions.{MOVED[extra[0]].field}"
            raise ConfigurationError.invalid(name, checked[extra[0]], rule)
        return None
    return build_output(
        output_type,
        model,
        strategy=checked.get("output_strategy", OutputStrategy.AUTO),
        retries=checked.get("output_retries", 2),
        validators=checked.get("output_validators", ()),
        settings=checked.get("settings"),
    )


def can_resume_paused(config: LoopConfig) -> None:
    """A loop whose runs may pause must be able to resume them: from a store, or from a signed
    state token (which needs a key). Checked when a run starts, not when the loop is built: a
    loop run elsewhere (on Temporal) is given its store there."""
    if config.holds_calls and config.store is None and config.state_keys is None:
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

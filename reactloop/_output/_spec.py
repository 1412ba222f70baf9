"""Structured output: what a run's final answer must be (`output_type`), how the model is asked
for it (a strategy), and how the answer is checked (the type's converter, then the user's
validators). The `OutputPhase` applies it; this module holds the values and the checks.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import orjson
from attrs import evolve, frozen

from reactloop._core import (
    ForcedTool,
    JsonObject,
    ModelSettings,
    ResponseFormat,
    ResponseFormatKind,
    ToolChoice,
    ToolSpec,
)
from reactloop._errors import ConfigurationError, ContractError, ReactLoopError, StrictSchemaError
from reactloop._output._partial import strip_fences
from reactloop._output._schema import WRAPPER_KEY, OutputSpec
from reactloop._schema import Invalid
from reactloop._validate import integer, member, sequence_of

if TYPE_CHECKING:
    from reactloop._core import Model, RunContext


class OutputStrategy(enum.StrEnum):
    """How the model is asked for a structured answer.

    NATIVE: the provider's own structured outputs (a strict JSON schema response format). TOOL: a
    final-answer tool whose parameters are the schema, which the model calls to finish (any
    tool-calling model). PROMPTED: the schema in the instructions, JSON parsed from the text (any
    model). AUTO picks NATIVE for models that declare support for it, else TOOL, except for a
    model that refuses a forced tool choice (its profile), which gets PROMPTED instead.
    """

    AUTO = "auto"
    NATIVE = "native"
    TOOL = "tool"
    PROMPTED = "prompted"


class OutputRetry(ReactLoopError):
    """Raised by an output validator to send the answer back: the model reads `message` and
    answers again (within `output_retries`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class OutputValidationError(ReactLoopError):
    """The model's final answer never matched the output type (after `output_retries` more
    tries); `raw` is its last answer as it came, `problem` what was wrong with it."""

    def __init__(self, problem: str, raw: str, attempts: int) -> None:
        super().__init__(
            f"the final answer did not match the output type after {attempts} attempt(s): {problem}"
        )
        self.problem = problem
        self.raw = raw
        self.attempts = attempts


OutputValidator: TypeAlias = Callable[..., Any]
"""`fn(value)` or `fn(value, context)`, sync or async: returns the value (maybe changed) or raises
`OutputRetry("what to fix")`."""

FINAL_TOOL = "final_answer"
PROMPT = (
    "Give your final answer as JSON only (no prose, no code fences), matching this JSON schema:\n"
)


@frozen
class Output:
    """One run's structured output: the spec, the strategy resolved for its model, the final
    tool (TOOL strategy), retries and validators."""

    spec: OutputSpec[Any]
    strategy: OutputStrategy
    retries: int
    validators: tuple[OutputValidator, ...] = ()
    native_schema: JsonObject | None = None  # the provider's strict form (NATIVE)
    can_force: bool = True  # the model takes a forced tool choice

    @property
    def tool_spec(self) -> ToolSpec | None:
        """The final-answer tool the model calls (TOOL strategy), else None."""
        if self.strategy is not OutputStrategy.TOOL:
            return None
        description = f"Give the final answer ({self.spec.name}); call this to finish."
        return ToolSpec(FINAL_TOOL, description, self.spec.schema)

    @property
    def tool(self) -> FinalAnswerTool | None:
        """The final-answer tool as the loop offers it (TOOL strategy), else None."""
        spec = self.tool_spec
        return None if spec is None else FinalAnswerTool(spec)

    @property
    def forced(self) -> ForcedTool | ToolChoice:
        """The tool choice that makes the model call the final-answer tool (AUTO for a model
        that refuses a forced tool choice: the final-answer tool is then the only one offered)."""
        return ForcedTool(FINAL_TOOL) if self.can_force else ToolChoice.AUTO

    def settings(self, settings: ModelSettings) -> ModelSettings:
        """The model settings with the response format NATIVE needs."""
        if self.strategy is not OutputStrategy.NATIVE:
            return settings
        schema = self.native_schema or self.spec.schema
        fmt = ResponseFormat(ResponseFormatKind.JSON_SCHEMA, self.spec.name, schema, True)
        return evolve(settings, response_format=fmt)

    def instructions(self, instructions: str | None) -> str | None:
        """The instructions with the schema PROMPTED needs."""
        if self.strategy is not OutputStrategy.PROMPTED:
            return instructions
        schema = orjson.dumps(self.spec.value_schema).decode()
        prompt = PROMPT + schema
        return prompt if not instructions else f"{instructions}\n\n{prompt}"

    def parse(self, raw: str, wrapped: bool) -> Any:
        """The typed value of a raw JSON answer (`wrapped`: the final tool's arguments, or a
        native answer, which carry a non-object type under the wrapper key); `Invalid` if not."""
        try:
            value = orjson.loads(strip_fences(raw))
        except orjson.JSONDecodeError as exc:
            raise Invalid("", f"the answer is not valid JSON ({exc})") from None
        return self.from_json(value, wrapped)

    def from_json(self, value: Any, wrapped: bool = False) -> Any:
        """The typed value of a JSON value: as the providers send it (`wrapped`), or the bare
        value (a prompted answer, a stored output)."""
        if self.spec.wrapped and not wrapped:
            value = {WRAPPER_KEY: value}
        return self.spec.convert(value)

    async def validate(self, value: Any, context: RunContext[Any]) -> Any:
        """Run the user's validators in order; each may change the value or raise `OutputRetry`."""
        for validator in self.validators:
            produced = validator(value, context) if _takes_context(validator) else validator(value)
            value = await produced if inspect.isawaitable(produced) else produced
        return value


@frozen
class FinalAnswerTool:
    """The tool the model calls with its final answer. `OutputPhase` reads its calls; it is
    never invoked like the user's tools."""

    spec: ToolSpec
    timeout: float | None = None
    exclusive: bool = False

    @property
    def name(self) -> str:
        """The name the model uses."""
        return self.spec.name

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """Arguments are checked by `OutputPhase` against the output type."""
        return {}

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """Never called: the final answer ends the step before tools run."""
        rule = "the final-answer tool is read by OutputPhase, never run"
        raise ContractError(f"tool {FINAL_TOOL!r}", rule, arguments)


def _takes_context(validator: OutputValidator) -> bool:
    try:
        parameters = inspect.signature(validator).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2


def output_validator(option: str, value: object) -> OutputValidator:
    if not callable(value) or isinstance(value, type):
        rule = "a function of the value (and optionally the run context), sync or async"
        raise ConfigurationError.invalid(option, value, rule)
    return value


def can_force_tools(model: Model, settings: ModelSettings | None = None) -> bool:
    """False for a model that declares it refuses a forced tool choice (e.g. a model that thinks
    before it answers, where the vendor refuses forcing), or refuses it with these `settings`
    (its `takes_forced_tool_choice(settings)`: Anthropic with thinking on); a model that says
    nothing can."""
    takes = getattr(model, "takes_forced_tool_choice", None)
    if settings is not None and callable(takes):
        return takes(settings) is True
    return getattr(model, "supports_forced_tool_choice", True) is not False


def _fallback(model: Model, settings: ModelSettings | None) -> OutputStrategy:
    """TOOL where no native format fits, unless the model refuses forcing it: then PROMPTED."""
    return OutputStrategy.TOOL if can_force_tools(model, settings) else OutputStrategy.PROMPTED


def resolve_strategy(
    strategy: OutputStrategy, model: Model, settings: ModelSettings | None = None
) -> OutputStrategy:
    """AUTO becomes NATIVE for a model that declares native structured outputs, else TOOL (or
    PROMPTED for a model that refuses a forced tool choice, with the loop's `settings`)."""
    if strategy is not OutputStrategy.AUTO:
        return strategy
    native = getattr(model, "supports_native_output", False) is True
    return OutputStrategy.NATIVE if native else _fallback(model, settings)


def build_output(
    output_type: object,
    model: Model,
    *,
    strategy: object = OutputStrategy.AUTO,
    retries: object = 2,
    validators: object = (),
    settings: ModelSettings | None = None,
) -> Output:
    """The structured output for a loop or a run, every option checked. NATIVE takes the
    provider's strict form of the schema; AUTO falls back to TOOL when there is none."""
    spec = OutputSpec.of(output_type)
    chosen = member("output_strategy", strategy, OutputStrategy)
    count = integer("output_retries", retries, minimum=0)
    checked: Sequence[OutputValidator] = sequence_of(
        "output_validators", validators, output_validator, "functions"
    )
    if chosen is OutputStrategy.NATIVE:
        refuse_native(model)
    resolved = resolve_strategy(chosen, model, settings)
    native = None
    if resolved is OutputStrategy.NATIVE:
        try:
            native = strict_form(model, spec.schema)
        except StrictSchemaError:
            if chosen is OutputStrategy.NATIVE:
                raise
            resolved = _fallback(model, settings)
    forcing = can_force_tools(model, settings)
    return Output(spec, resolved, count, tuple(checked), native, forcing)


def refuse_native(model: Model) -> None:
    """An explicit NATIVE on a model that declares it takes no JSON-schema response format (its
    profile's `native_output`, e.g. a compatible host's default) fails when the loop is built,
    before a request the server would reject or ignore; a model that says nothing may try."""
    if getattr(model, "supports_native_output", None) is not False:
        return
    rule = (
        "a model that takes a JSON-schema response format (this one's profile has"
        " native_output=False: pass profile=ModelProfile(native_output=True) if the server takes"
        " it, or use OutputStrategy.TOOL or PROMPTED)"
    )
    raise ConfigurationError(
        f"output strategy 'native' needs {rule}, got {model!r}",
        option="output_strategy",
        value=OutputStrategy.NATIVE,
        rule=rule,
    )


def strict_form(model: Model, schema: JsonObject) -> JsonObject:
    """The schema as the model's provider takes it in strict mode (as it is for others)."""
    rewrite = getattr(model, "strict_output_schema", None)
    if rewrite is None:
        return schema
    strict: JsonObject = rewrite(schema)
    return strict

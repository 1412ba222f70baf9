"""`@tool`: a typed function becomes a `Tool` with a derived schema and validated arguments."""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any, Generic, ParamSpec, TypeVar, overload

import anyio.to_thread
import attrs
import orjson
from attrs import frozen

from reactloop._core import RunContext, ToolSpec
from reactloop._errors import (
    ConfigurationError,
    ContractError,
    ToolArgumentsError,
    ToolDefinitionError,
)
from reactloop._schema import Invalid, UnsupportedType, compile_object, compile_type
from reactloop._validate import (
    boolean,
    checked_arguments,
    did_you_mean,
    optional_number,
    optional_text,
    tool_name,
)

ToolFunction = Callable[..., Any]
P = ParamSpec("P")
R = TypeVar("R")

_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$"
)
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument descriptions."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, current = header.group(1), None
        elif section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            current = _add_arg_line(args, line, current)
    return " ".join(" ".join(summary).split()), args


def _add_arg_line(args: dict[str, str], line: str, current: str | None) -> str | None:
    match = _ARG_LINE.match(line)
    indent = len(line) - len(line.lstrip())
    if match and (current is None or indent <= _ARG_INDENT):
        name = match.group(1).lstrip("*")
        args[name] = match.group(2).strip()
        return name
    if current is not None and line.strip():
        args[current] = f"{args[current]} {line.strip()}".strip()
    return current


_ARG_INDENT = 4


def _is_context(annotation: Any) -> bool:
    return annotation is RunContext or typing.get_origin(annotation) is RunContext


@frozen
class _Signature:
    """What a function's signature tells: schema, converter, context and preset parameters."""

    schema: dict[str, Any]
    convert: Callable[[Any, str], dict[str, Any]]
    context_param: str | None


def _signature(fn: ToolFunction, name: str, docs: dict[str, str], hidden: set[str]) -> _Signature:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(name, f"its type hints cannot be resolved: {exc}") from exc
    fields: dict[str, tuple[Any, Any]] = {}
    context_param = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(name, f"parameter *{param.name} cannot be described")
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if _is_context(annotation):
            context_param = param.name
        elif param.name not in hidden:
            if annotation is inspect.Parameter.empty:
                raise ToolDefinitionError(name, f"parameter {param.name!r} has no type annotation")
            default = attrs.NOTHING if param.default is param.empty else param.default
            fields[param.name] = (annotation, default)
    try:
        schema, convert = compile_object(fields, docs)
    except UnsupportedType as exc:
        raise ToolDefinitionError(name, _unsupported(fields, exc)) from exc
    return _Signature(schema, convert, context_param)


def _unsupported(fields: dict[str, tuple[Any, Any]], error: UnsupportedType) -> str:
    """Which parameter's annotation has no JSON schema, and why (each is compiled alone)."""
    for parameter, (annotation, _) in fields.items():
        try:
            compile_type(annotation)
        except UnsupportedType as exc:
            shown = inspect.formatannotation(annotation)
            return f"parameter {parameter!r} is annotated {shown}, which has no JSON schema: {exc}"
    return str(error)


def _check_settings(
    *,
    name: object,
    description: object,
    timeout: object,
    exclusive: object,
    presets: object,
    idempotent: object = False,
    requires_approval: object = False,
    external: object = False,
) -> None:
    """Check the options given to `@tool(...)`, before any function is."""
    if name is not None:
        _check_name(name)
    optional_text("tool.description", description, blank=True)
    optional_number("tool.timeout", timeout)
    boolean("tool.exclusive", exclusive)
    boolean("tool.idempotent", idempotent)
    boolean("tool.requires_approval", requires_approval)
    boolean("tool.external", external)
    if presets is not None and not isinstance(presets, Mapping):
        raise ConfigurationError.invalid("tool.presets", presets, "a mapping of names to values")


def _check_options(
    fn: object,
    *,
    name: object,
    description: object,
    timeout: object,
    exclusive: object,
    presets: object,
    idempotent: object,
    requires_approval: object,
    external: object,
) -> str:
    """Check the function and the tool's options; return its name (given, or the function's)."""
    if not callable(fn) or isinstance(fn, type):
        raise ConfigurationError.invalid("tool.fn", fn, "a function")
    _check_settings(
        name=name,
        description=description,
        timeout=timeout,
        exclusive=exclusive,
        presets=presets,
        idempotent=idempotent,
        requires_approval=requires_approval,
        external=external,
    )
    return _check_name(name if isinstance(name, str) else getattr(fn, "__name__", ""))


def _check_name(name: object) -> str:
    return tool_name("tool.name", name)


def _check_presets(fn: ToolFunction, tool_name: str, bound: Mapping[str, Any]) -> None:
    known = list(inspect.signature(fn).parameters)
    for preset in bound:
        if preset not in known:
            hint = did_you_mean(preset, known)
            raise ToolDefinitionError(tool_name, f"preset {preset!r} is not a parameter{hint}")


@frozen
class FunctionTool(Generic[P, R]):
    """A `Tool` backed by a plain function, sync (run in a worker thread) or async.

    It keeps the function's type: `FunctionTool[P, R]` calls as the function itself would
    (`get_weather("Paris")`), so a decorated function stays typed for its direct callers.
    `idempotent=True` lets a resumed run call it again when its first call was cut off.
    """

    fn: Callable[P, R]
    spec: ToolSpec
    timeout: float | None
    exclusive: bool
    context_param: str | None
    presets: Mapping[str, Any]
    _convert: Callable[[Any, str], dict[str, Any]]
    _is_async: bool
    idempotent: bool = False
    requires_approval: bool = False
    external: bool = False

    @property
    def name(self) -> str:
        """The name the model uses."""
        return self.spec.name

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the function directly, as written (no validation, presets or context)."""
        return self.fn(*args, **kwargs)

    @classmethod
    @checked_arguments
    def from_function(
        cls,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        exclusive: bool = False,
        presets: Mapping[str, Any] | None = None,
        idempotent: bool = False,
        requires_approval: bool = False,
        external: bool = False,
    ) -> FunctionTool[P, R]:
        """Derive the tool's spec from `fn`'s signature and docstring."""
        tool_name = _check_options(
            fn,
            name=name,
            description=description,
            timeout=timeout,
            exclusive=exclusive,
            presets=presets,
            idempotent=idempotent,
            requires_approval=requires_approval,
            external=external,
        )
        summary, docs = parse_docstring(fn.__doc__)
        bound = dict(presets or {})
        sig = _signature(fn, tool_name, docs, set(bound))
        _check_presets(fn, tool_name, bound)
        spec = ToolSpec(tool_name, description or summary or tool_name, sig.schema)
        is_async = inspect.iscoroutinefunction(fn)
        context = sig.context_param
        return cls(
            fn,
            spec,
            timeout,
            exclusive,
            context,
            bound,
            sig.convert,
            is_async,
            idempotent,
            requires_approval,
            external,
        )

    def bind(self, **presets: Any) -> FunctionTool[P, R]:
        """A copy with `presets` bound as hidden parameters (removed from the schema)."""
        return FunctionTool.from_function(
            self.fn,
            name=self.spec.name,
            description=self.spec.description,
            timeout=self.timeout,
            exclusive=self.exclusive,
            presets={**self.presets, **presets},
            idempotent=self.idempotent,
            requires_approval=self.requires_approval,
            external=self.external,
        )

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """Parse the model's JSON and validate it against the schema."""
        try:
            value = orjson.loads(arguments) if arguments.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise ToolArgumentsError(self.name, [f"arguments are not valid JSON ({exc})"]) from None
        try:
            return self._convert(value, "")
        except Invalid as exc:
            raise ToolArgumentsError(self.name, [str(exc)]) from None

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """Call the function with validated arguments, presets and (if asked for) the context."""
        if self.external:
            rule = "an external tool is never run here (its calls pause the run)"
            raise ContractError(f"tool {self.name!r}", rule, self.fn)
        if not self.presets and self.context_param is None:
            return await self._run(arguments)
        kwargs = {**self.presets, **arguments}
        if self.context_param is not None:
            kwargs[self.context_param] = context
        return await self._run(kwargs)

    async def _run(self, kwargs: dict[str, Any]) -> object:
        fn: ToolFunction = self.fn  # called with validated arguments by name
        if self._is_async:
            return await fn(**kwargs)
        call = functools.partial(fn, **kwargs)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)


@overload
def tool(fn: Callable[P, R], /) -> FunctionTool[P, R]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    exclusive: bool = False,
    idempotent: bool = False,
    requires_approval: bool = False,
    external: bool = False,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


@checked_arguments
def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    exclusive: bool = False,
    idempotent: bool = False,
    requires_approval: bool = False,
    external: bool = False,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Turn a typed function into a tool: `@tool` or `@tool(timeout=5, exclusive=True)`.

    The result keeps the function's parameter and return types (`FunctionTool[P, R]`).
    `idempotent=True`: safe to call twice, so a resumed run re-runs a call that was cut off.
    `requires_approval=True`: each call waits for a person's decision (the run pauses).
    `external=True`: the function only describes the tool (its body never runs here); each call
    pauses the run, is run elsewhere, and comes back with `ExternalResult` or `ExternalFailure`.
    """
    _check_settings(
        name=name,
        description=description,
        timeout=timeout,
        exclusive=exclusive,
        presets=None,
        idempotent=idempotent,
        requires_approval=requires_approval,
        external=external,
    )

    def make(function: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool.from_function(
            function,
            name=name,
            description=description,
            timeout=timeout,
            exclusive=exclusive,
            idempotent=idempotent,
            requires_approval=requires_approval,
            external=external,
        )

    return make if fn is None else make(fn)

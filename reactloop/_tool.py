"""`@tool`: a typed function becomes a `Tool` with a derived schema and validated arguments."""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any, overload

import anyio.to_thread
import attrs
import orjson
from attrs import frozen

from reactloop._errors import ConfigurationError, ToolArgumentsError, ToolDefinitionError
from reactloop._messages import ToolSpec
from reactloop._schema import Invalid, UnsupportedType, compile_object
from reactloop._state import RunContext
from reactloop._validate import (
    boolean,
    did_you_mean,
    optional_number,
    optional_text,
)

ToolFunction = Callable[..., Any]

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
        raise ToolDefinitionError(name, str(exc)) from exc
    return _Signature(schema, convert, context_param)


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_NAME_RULE = "a tool name of 1 to 64 letters, digits, '_' or '-' (pass name= to choose one)"


def _check_settings(
    *, name: object, description: object, timeout: object, exclusive: object, presets: object
) -> None:
    """Check the options given to `@tool(...)`, before any function is."""
    if name is not None:
        _check_name(name)
    optional_text("tool.description", description, blank=True)
    optional_number("tool.timeout", timeout)
    boolean("tool.exclusive", exclusive)
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
) -> str:
    """Check the function and the tool's options; return its name (given, or the function's)."""
    if not callable(fn) or isinstance(fn, type):
        raise ConfigurationError.invalid("tool.fn", fn, "a function")
    _check_settings(
        name=name, description=description, timeout=timeout, exclusive=exclusive, presets=presets
    )
    return _check_name(name if isinstance(name, str) else getattr(fn, "__name__", ""))


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        raise ConfigurationError.invalid("tool.name", name, _NAME_RULE)
    return name


def _check_presets(fn: ToolFunction, tool_name: str, bound: Mapping[str, Any]) -> None:
    known = list(inspect.signature(fn).parameters)
    for preset in bound:
        if preset not in known:
            hint = did_you_mean(preset, known)
            raise ToolDefinitionError(tool_name, f"preset {preset!r} is not a parameter{hint}")


@frozen
class FunctionTool:
    """A `Tool` backed by a plain function, sync (run in a worker thread) or async."""

    fn: ToolFunction
    spec: ToolSpec
    timeout: float | None
    exclusive: bool
    context_param: str | None
    presets: Mapping[str, Any]
    _convert: Callable[[Any, str], dict[str, Any]]
    _is_async: bool

    @property
    def name(self) -> str:
        """The name the model uses."""
        return self.spec.name

    @classmethod
    def from_function(
        cls,
        fn: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        exclusive: bool = False,
        presets: Mapping[str, Any] | None = None,
    ) -> FunctionTool:
        """Derive the tool's spec from `fn`'s signature and docstring."""
        tool_name = _check_options(
            fn,
            name=name,
            description=description,
            timeout=timeout,
            exclusive=exclusive,
            presets=presets,
        )
        summary, docs = parse_docstring(fn.__doc__)
        bound = dict(presets or {})
        sig = _signature(fn, tool_name, docs, set(bound))
        _check_presets(fn, tool_name, bound)
        spec = ToolSpec(tool_name, description or summary or tool_name, sig.schema)
        is_async = inspect.iscoroutinefunction(fn)
        return cls(fn, spec, timeout, exclusive, sig.context_param, bound, sig.convert, is_async)

    def bind(self, **presets: Any) -> FunctionTool:
        """A copy with `presets` bound as hidden parameters (removed from the schema)."""
        return FunctionTool.from_function(
            self.fn,
            name=self.spec.name,
            description=self.spec.description,
            timeout=self.timeout,
            exclusive=self.exclusive,
            presets={**self.presets, **presets},
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
        if not self.presets and self.context_param is None:
            return await self._run(arguments)
        kwargs = {**self.presets, **arguments}
        if self.context_param is not None:
            kwargs[self.context_param] = context
        return await self._run(kwargs)

    async def _run(self, kwargs: dict[str, Any]) -> object:
        if self._is_async:
            return await self.fn(**kwargs)
        call = functools.partial(self.fn, **kwargs)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)


@overload
def tool(fn: ToolFunction, /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    exclusive: bool = False,
) -> Callable[[ToolFunction], FunctionTool]: ...


def tool(
    fn: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    exclusive: bool = False,
) -> FunctionTool | Callable[[ToolFunction], FunctionTool]:
    """Turn a typed function into a tool: `@tool` or `@tool(timeout=5, exclusive=True)`."""
    _check_settings(
        name=name, description=description, timeout=timeout, exclusive=exclusive, presets=None
    )

    def make(function: ToolFunction) -> FunctionTool:
        return FunctionTool.from_function(
            function, name=name, description=description, timeout=timeout, exclusive=exclusive
        )

    return make if fn is None else make(fn)

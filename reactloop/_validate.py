"""Checking options where they are given: each check names the option, the value and the rule.

Every configurable class and function calls these at construction, so a wrong option fails at
once with a `ConfigurationError` (`option`, `value`, `rule`), never later inside a run; nothing
here runs per step. Each check returns the value, normalized where the intent is clear (a tuple
for a sequence, an enum member for its string value).
"""

from __future__ import annotations

import difflib
import enum
import functools
import inspect
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, NoReturn, TypeVar

from reactloop._errors import ConfigurationError, show

T = TypeVar("T")
E = TypeVar("E", bound=enum.Enum)


def fail(option: str, value: object, rule: str) -> NoReturn:
    """Raise the `ConfigurationError` for `option`, whose `value` breaks `rule`."""
    raise ConfigurationError.invalid(option, value, rule)


def integer(option: str, value: object, *, minimum: int = 1) -> int:
    """An int (not a bool) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        fail(option, value, f"an int >= {minimum}")
    return value


def optional_integer(option: str, value: object, *, minimum: int = 1) -> int | None:
    """None, or an int (not a bool) of at least `minimum`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        fail(option, value, f"an int >= {minimum} or None")
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number(option: str, value: object, minimum: float, inclusive: bool, suffix: str) -> float:
    bound = f">= {minimum:g}" if inclusive else f"> {minimum:g}"
    if not _is_number(value):
        fail(option, value, f"a finite number {bound}{suffix}")
    assert isinstance(value, int | float)
    if value < minimum or (value == minimum and not inclusive):
        fail(option, value, f"a finite number {bound}{suffix}")
    return value


def number(option: str, value: object, *, minimum: float = 0.0, inclusive: bool = False) -> float:
    """A finite int or float (not a bool) above `minimum`, or equal to it when `inclusive`."""
    return _number(option, value, minimum, inclusive, "")


def optional_number(
    option: str, value: object, *, minimum: float = 0.0, inclusive: bool = False
) -> float | None:
    """None, or a finite number above `minimum` (see `number`)."""
    return None if value is None else _number(option, value, minimum, inclusive, " or None")


def boolean(option: str, value: object) -> bool:
    """True or False (not 0, 1 or a string)."""
    if not isinstance(value, bool):
        fail(option, value, "True or False")
    return value


def optional_boolean(option: str, value: object) -> bool | None:
    """None, True or False."""
    if value is not None and not isinstance(value, bool):
        fail(option, value, "True, False or None")
    return value


def text(option: str, value: object, *, blank: bool = False) -> str:
    """A string; not empty or whitespace only unless `blank`."""
    if not isinstance(value, str) or (not blank and not value.strip()):
        fail(option, value, "a string" if blank else "a non-empty string")
    return value


def optional_text(option: str, value: object, *, blank: bool = False) -> str | None:
    """None, or a string (see `text`)."""
    return None if value is None else text(option, value, blank=blank)


TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What both providers accept as a function name."""
TOOL_NAME_RULE = "a tool name of 1 to 64 letters, digits, '_' or '-' (pass name= to choose one)"


def tool_name(option: str, value: object) -> str:
    """A name the providers accept for a tool."""
    if not isinstance(value, str) or not TOOL_NAME.match(value):
        fail(option, value, TOOL_NAME_RULE)
    return value


def instance(option: str, value: object, kind: type[T], what: str) -> T:
    """An instance of `kind` (described as `what` in the message)."""
    if not isinstance(value, kind) or isinstance(value, type):
        fail(option, value, what)
    return value


def optional_instance(option: str, value: object, kind: type[T], what: str) -> T | None:
    """None, or an instance of `kind`."""
    return None if value is None else instance(option, value, kind, f"{what} or None")


def accepts(fn: Callable[..., object], count: int) -> bool:
    """Whether `fn` can be called with `count` positional arguments (True when unknowable)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


def _arguments(count: int) -> str:
    return "no arguments" if count == 0 else f"{count} positional argument" + "s" * (count > 1)


def function(option: str, value: object, arity: int) -> Callable[..., Any]:
    """A callable that takes `arity` positional arguments."""
    rule = f"a callable taking {_arguments(arity)}"
    if not callable(value) or not accepts(value, arity):
        fail(option, value, rule)
    return value


def optional_function(option: str, value: object, arity: int) -> Callable[..., Any] | None:
    """None, or a callable that takes `arity` positional arguments."""
    if value is None:
        return None
    if not callable(value) or not accepts(value, arity):
        fail(option, value, f"a callable taking {_arguments(arity)}, or None")
    return value


def items(option: str, value: object, what: str) -> tuple[object, ...]:
    """The items of a list, tuple or other iterable; a string or mapping is refused."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        fail(option, value, f"a sequence of {what}")
    return tuple(value)


def sequence_of(
    option: str, value: object, check: Callable[[str, object], T], what: str
) -> tuple[T, ...]:
    """A tuple of the items, each passed through `check` (named `option[index]`)."""
    return tuple(check(f"{option}[{i}]", item) for i, item in enumerate(items(option, value, what)))


def member(option: str, value: object, kind: type[E]) -> E:
    """A member of the enum `kind`, or the value of one (converted to the member)."""
    if isinstance(value, kind):
        return value
    values = [str(m.value) for m in kind]
    if isinstance(value, str) and not isinstance(value, enum.Enum) and value in values:
        return kind(value)
    fail(option, value, f"a {kind.__name__} ({', '.join(values)}){did_you_mean(value, values)}")


def did_you_mean(
    name: object, known: Collection[str], homes: Mapping[str, str] | None = None
) -> str:
    """`"; did you mean 'x'?"` for the closest known name, or "" when none is close. A name in
    `homes` is suggested as its new home (a moved option: `limits=Limits(x=...)`)."""
    if not isinstance(name, str):
        return ""
    lowered = {candidate.lower(): candidate for candidate in known}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    if not close:
        return ""
    meant = lowered[close[0]]
    return f"; did you mean {(homes or {}).get(meant, repr(meant))}?"


def reject_unknown(
    owner: str,
    given: Mapping[str, object],
    known: Collection[str],
    homes: Mapping[str, str] | None = None,
) -> None:
    """Fail on the first name in `given` that is not in `known`, suggesting the closest one
    (a deprecated name, one of `homes`, is suggested as its new home and never listed)."""
    for name, value in given.items():
        if name not in known:
            listed = sorted(set(known) - set(homes or ()))
            hint = did_you_mean(name, known, homes) or f" (known: {', '.join(listed)})"
            raise ConfigurationError(
                f"{owner} got an unknown option {name!r}={show(value)}{hint}",
                option=name,
                value=value,
                rule=f"an option of {owner}",
            )


C = TypeVar("C", bound=Callable[..., Any])
CHECKED_MARK = "__checks_arguments__"
"""Set on every function `checked_arguments` wraps (the tests find the checked classes by it)."""
_INIT = "__init__"
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def checked_arguments(target: C) -> C:
    """Make a misnamed, extra or missing argument a `ConfigurationError`, not a bare TypeError.

    On a class, its `__init__` is wrapped. The happy path costs a set difference and a length
    check; the signature is consulted only once a call has failed.
    """
    if isinstance(target, type):
        setattr(target, _INIT, _checked(target.__name__, getattr(target, _INIT)))
        return target
    return _checked(None, target)


def _owner(fn: Callable[..., Any], args: tuple[object, ...], method: bool) -> str:
    """How a message names a checked function: a method by the class it was called on (the
    user's `ReActLoop.as_tool`, not the base class defining it)."""
    if method and args:
        head = args[0] if isinstance(args[0], type) else type(args[0])
        return f"{head.__name__}.{fn.__name__}"
    return getattr(fn, "__qualname__", "function")


def _checked(owner: str | None, fn: C) -> C:
    signature = inspect.signature(fn)
    params = list(signature.parameters.values())
    skip = 1 if params and params[0].name in ("self", "cls") else 0
    kinds = {param.kind for param in params}
    named = [param.name for param in params[skip:] if param.kind in _NAMED]
    known = None if inspect.Parameter.VAR_KEYWORD in kinds else frozenset(named)
    positional = sum(param.kind in _POSITIONAL for param in params)
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        positional = len(params) + 1_000

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if known is not None and kwargs.keys() - known:
            reject_unknown(owner or _owner(fn, args, bool(skip)), kwargs, named)
        if len(args) > positional:
            _too_many(owner or _owner(fn, args, bool(skip)), args[skip:], positional - skip)
        try:
            return fn(*args, **kwargs)
        except TypeError as error:
            _missing(owner or _owner(fn, args, bool(skip)), signature, args, kwargs, error)
            raise

    setattr(call, CHECKED_MARK, True)
    return call  # type: ignore[return-value]


def _too_many(owner: str, args: tuple[object, ...], allowed: int) -> NoReturn:
    extra = args[allowed]
    rule = f"at most {allowed} positional argument(s); give the other options by name"
    raise ConfigurationError(
        f"{owner} got {len(args)} positional arguments ({show(extra)} is one too many): {rule}",
        option=None,
        value=extra,
        rule=rule,
    )


def _missing(
    owner: str,
    signature: inspect.Signature,
    args: tuple[object, ...],
    kwargs: dict[str, Any],
    error: TypeError,
) -> None:
    """Turn a call that could not bind (a required option left out) into a ConfigurationError."""
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        params = list(signature.parameters.values())[len(args) :]
        absent = [p.name for p in params if p.default is p.empty and p.name not in kwargs]
        names = [p for p in absent if signature.parameters[p].kind in (*_NAMED, *_POSITIONAL)]
        option = names[0] if names else None
        raise ConfigurationError(
            f"{owner} needs the option {option!r}: it has no default",
            option=option,
            value=None,
            rule="required",
        ) from error

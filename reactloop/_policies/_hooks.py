"""Runs the hooks of one point in priority order and merges their decisions into one `Verdict`.

Merging is fixed: overrides chain (each hook sees the value the previous ones left), and the
verdict's precedence is stop over reject over override over continue. A hook that raises, or
returns a decision its point does not allow (see `broken_decision`), is handled by its own
`on_raise` policy: fail-closed stops the run with a `HookError`, fail-open is reported and
ignored. Turning a verdict's stop into control flow is left to
`HookDecisionApplier`; the phase that ran the hooks takes the (possibly overridden) value.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

import attrs
from attrs import frozen

from reactloop._core import (
    Hook,
    HookFailed,
    HookFailure,
    HookPoint,
    ModelRequest,
    ModelResponse,
    NextIteration,
    Override,
    Proceed,
    Reject,
    RunResult,
    Stop,
    StopReason,
    StopRun,
    ToolCall,
    ToolResult,
)
from reactloop._errors import HookError, ReactLoopError
from reactloop._resolver import user_message

if TYPE_CHECKING:
    from reactloop._loop import Run

T = TypeVar("T")
_Call = Callable[[Hook, T], Awaitable[object]]


@frozen
class Verdict(Generic[T]):
    """The merged outcome of one hook point: the value to use, and a stop or rejection if any."""

    value: T
    stop: StopRun | None = None
    reject: Reject | None = None
    error: HookError | None = None


def _overrides(hook: Hook, point: HookPoint) -> bool:
    return getattr(type(hook), point.value) is not getattr(Hook, point.value)


@frozen
class HookSet:
    """A loop's hooks, sorted by priority and indexed by the points each one implements."""

    by_point: dict[HookPoint, tuple[Hook, ...]]
    # Whether some hook implements some point (read once per run, so computed once).
    hooked: bool = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "hooked", any(self.by_point.values()))

    @classmethod
    def of(cls, hooks: Sequence[Hook]) -> HookSet:
        """Index `hooks`; within one priority they keep the order given."""
        ordered = sorted(hooks, key=lambda hook: hook.priority)
        return cls({p: tuple(h for h in ordered if _overrides(h, p)) for p in HookPoint})

    def has(self, point: HookPoint) -> bool:
        """True when some hook implements `point` (so callers can skip building arguments)."""
        return bool(self.by_point[point])

    async def before_run(self, run: Run) -> Verdict[None]:
        """Merge the before-run decisions."""
        return await self._merge(run, HookPoint.BEFORE_RUN, None, lambda h, _: h.before_run(run))

    async def before_reasoning(self, run: Run, request: ModelRequest) -> Verdict[ModelRequest]:
        """Merge the before-reasoning decisions over `request`."""
        point = HookPoint.BEFORE_REASONING
        return await self._merge(run, point, request, lambda h, v: h.before_reasoning(run, v))

    async def after_reasoning(self, run: Run, response: ModelResponse) -> Verdict[ModelResponse]:
        """Merge the after-reasoning decisions over `response`."""
        point = HookPoint.AFTER_REASONING
        return await self._merge(run, point, response, lambda h, v: h.after_reasoning(run, v))

    async def before_tool_call(self, run: Run, call: ToolCall) -> Verdict[ToolCall]:
        """Merge the before-tool-call decisions over `call`."""
        point = HookPoint.BEFORE_TOOL_CALL
        return await self._merge(run, point, call, lambda h, v: h.before_tool_call(run, v))

    async def after_tool_call(
        self, run: Run, call: ToolCall, result: ToolResult
    ) -> Verdict[ToolResult]:
        """Merge the after-tool-call decisions over `result`."""
        point = HookPoint.AFTER_TOOL_CALL
        return await self._merge(run, point, result, lambda h, v: h.after_tool_call(run, call, v))

    async def after_run(self, run: Run, result: RunResult) -> RunResult:
        """Tell the after-run hooks; a fail-closed failure marks the result failed (its output
        is kept, the stop reason becomes ERROR)."""
        verdict = await self._merge(
            run, HookPoint.AFTER_RUN, None, lambda h, _: h.after_run(run, result)
        )
        error = verdict.error
        if error is None or result.error is not None:
            return result
        return attrs.evolve(
            result,
            error=error,
            stop_reason=StopReason.ERROR,
            stop_detail=error.message,
            user_message=user_message(error, run.config.error_messages),
        )

    async def on_error(self, run: Run, error: ReactLoopError) -> None:
        """Tell the on-error hooks; their own failures are only reported as events."""
        for hook in self.by_point[HookPoint.ON_ERROR]:
            try:
                await hook.on_error(run, error)
            except Exception as exc:
                await run.emit(HookFailed(type(hook).__name__, HookPoint.ON_ERROR.value, exc))

    async def _merge(self, run: Run, point: HookPoint, value: T, call: _Call[T]) -> Verdict[T]:
        stop: StopRun | None = None
        reject: Reject | None = None
        error: HookError | None = None
        for hook in self.by_point[point]:
            try:
                decision = await call(hook, value)
            except Exception as exc:
                failure: HookError | None = _raised(hook, point, exc)
            else:
                failure = broken_decision(hook, point, value, decision)
            if failure is not None:
                if not await _fail_closed(run, hook, failure):
                    continue
                error = error or failure
                decision = StopRun(failure.message)
            if isinstance(decision, Override):
                value = decision.value
            elif isinstance(decision, StopRun):
                stop = stop or decision
            elif isinstance(decision, Reject):
                reject = reject or decision
        return Verdict(value, stop, reject, error)


def _raised(hook: Hook, point: HookPoint, exc: Exception) -> HookError:
    error = HookError(type(hook).__name__, point.value, exc)
    error.__cause__ = exc
    return error


async def _fail_closed(run: Run, hook: Hook, failure: HookError) -> bool:
    """True when the failure stops the run; a fail-open hook's failure is only reported."""
    if hook.on_raise is HookFailure.FAIL_CLOSED:
        return True
    cause = failure.__cause__
    reported = cause if isinstance(cause, Exception) else failure
    await run.emit(HookFailed(type(hook).__name__, failure.point, reported))
    return False


_ALLOWED: dict[HookPoint, tuple[type, ...]] = {
    HookPoint.BEFORE_RUN: (StopRun,),
    HookPoint.AFTER_RUN: (),
    HookPoint.BEFORE_REASONING: (Override, StopRun),
    HookPoint.AFTER_REASONING: (Override, StopRun),
    HookPoint.BEFORE_TOOL_CALL: (Override, Reject, StopRun),
    HookPoint.AFTER_TOOL_CALL: (Override, StopRun),
    HookPoint.ON_ERROR: (),
}
_OVERRIDDEN: dict[HookPoint, type] = {
    HookPoint.BEFORE_REASONING: ModelRequest,
    HookPoint.AFTER_REASONING: ModelResponse,
    HookPoint.BEFORE_TOOL_CALL: ToolCall,
    HookPoint.AFTER_TOOL_CALL: ToolResult,
}
# An override may change a value, never the fields that pair a tool call with its result.
_IDENTITY: dict[type, tuple[str, tuple[str, ...]]] = {
    ToolCall: ("an override may change a call's arguments, never its id or name", ("id", "name")),
    ToolResult: (
        "an override may change a result's content, never its call_id or name",
        ("call_id", "name"),
    ),
}


def broken_decision(
    hook: Hook, point: HookPoint, value: object, decision: object
) -> HookError | None:
    """The contract `decision` breaks at `point` (a kind the point does not allow, an override of
    the wrong type or of a tool pair's identity), or None when it is fine."""
    if decision is None:
        return None
    name = type(hook).__name__
    allowed = _ALLOWED[point]
    if not isinstance(decision, allowed):
        kinds = ", ".join(["None", *(kind.__name__ for kind in allowed)])
        rule = f"a {point.value} hook returns one of {kinds}{_phase_hint(decision)}"
        return HookError(name, point.value, rule=rule, value=decision)
    if isinstance(decision, Override):
        return _broken_override(name, point, value, decision.value)
    return None


def _phase_hint(decision: object) -> str:
    """Point a hook that returned a phase's decision to the hook decision it meant."""
    if isinstance(decision, Stop):
        return " (Stop is a phase's decision; a hook stops the run with StopRun)"
    if isinstance(decision, Proceed | NextIteration):
        return " (return None to let the run go on)"
    return ""


def _broken_override(name: str, point: HookPoint, old: object, new: object) -> HookError | None:
    kind = _OVERRIDDEN[point]
    if not isinstance(new, kind):
        rule = f"an override at {point.value} holds a {kind.__name__}"
        return HookError(name, point.value, rule=rule, value=new)
    if kind not in _IDENTITY:
        return None
    rule, fields = _IDENTITY[kind]
    for field in fields:
        before, after = getattr(old, field), getattr(new, field)
        if before != after:
            got = f"{field} changed from {before!r} to {after!r}"
            return HookError(name, point.value, rule=rule, value=new, got=got)
    return None

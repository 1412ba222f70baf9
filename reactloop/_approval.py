"""Human in the loop: which calls wait for a person (or for an outside runner), and the decisions
that release them.

A call is *held* when its tool requires approval, when the loop's `ApprovalPolicy` asks for it, or
when its tool is external (run elsewhere). A step with held calls runs the others, then the run
pauses (`StopReason.AWAITING_APPROVAL`) with `RunResult.pending` listing each held call; it goes
on with `loop.resume(..., decisions={call_id: Approve() | Deny(...) | Edit(...) | ...})`.
"""

from __future__ import annotations

import enum
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from attrs import field, frozen

from reactloop._errors import ConfigurationError, ContractError
from reactloop._messages import ToolCall
from reactloop._validate import (
    checked_arguments,
    function,
    optional_function,
    optional_number,
    text,
)

if TYPE_CHECKING:
    from reactloop._state import RunContext


class HoldKind(enum.StrEnum):
    """Why a call is held: a person must approve it, or it runs outside this process."""

    APPROVAL = "approval"
    EXTERNAL = "external"


@frozen
class PendingCall:
    """A held call: its id, tool and (validated) arguments, why it waits, and until when
    (`expires_at`, epoch seconds, when the loop's policy sets a deadline)."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    reason: str
    kind: HoldKind = HoldKind.APPROVAL
    expires_at: float | None = None


class DecisionScope(enum.StrEnum):
    """How far an "always" decision reaches: the rest of the run, or the session's runs too."""

    RUN = "run"
    SESSION = "session"


def _scope(option: str, value: object) -> DecisionScope | None:
    """`always`: False (this call only), True (the run) or a `DecisionScope`."""
    if isinstance(value, DecisionScope):
        return value
    if value is True:
        return DecisionScope.RUN
    if value is False:
        return None
    rule = "True, False or a DecisionScope (RUN, SESSION)"
    raise ConfigurationError.invalid(option, value, rule)


@checked_arguments
@frozen
class Approve:
    """Run the call as the model asked; `always=True` approves the tool's later calls in the run
    too, `always=DecisionScope.SESSION` in the session's later runs as well."""

    always: bool | DecisionScope = False

    def __attrs_post_init__(self) -> None:
        _scope("Approve.always", self.always)

    @property
    def scope(self) -> DecisionScope | None:
        """How far this decision reaches beyond its call (None: this call only)."""
        return _scope("Approve.always", self.always)


@checked_arguments
@frozen
class Deny:
    """Do not run the call; the model reads that it was denied, and `reason`. `always` as for
    `Approve`: the tool's later calls are denied too."""

    reason: str = "a reviewer denied it"
    always: bool | DecisionScope = False

    def __attrs_post_init__(self) -> None:
        text("Deny.reason", self.reason)
        _scope("Deny.always", self.always)

    @property
    def scope(self) -> DecisionScope | None:
        """How far this decision reaches beyond its call (None: this call only)."""
        return _scope("Deny.always", self.always)


def _arguments(value: object) -> dict[str, Any]:
    """Edited arguments as a dict of argument names to values."""
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        rule = "a mapping of argument names (str) to values"
        raise ConfigurationError.invalid("Edit.arguments", value, rule)
    return dict(value)


@checked_arguments
@frozen
class Edit:
    """Run the call with these arguments instead (checked against the tool's schema when the
    decision is given); the call keeps its id, so its result still pairs with it."""

    arguments: dict[str, Any] = field(converter=_arguments)


@checked_arguments
@frozen
class ExternalResult:
    """The result of an external tool's call, run elsewhere: the model reads `value` (a string
    as it is, anything else as JSON)."""

    value: Any


@checked_arguments
@frozen
class ExternalFailure:
    """An external tool's call failed elsewhere: the model reads `message` as its error."""

    message: str

    def __attrs_post_init__(self) -> None:
        text("ExternalFailure.message", self.message)


Decision: TypeAlias = Approve | Deny | Edit | ExternalResult | ExternalFailure
DECISION_TYPES: tuple[type, ...] = (Approve, Deny, Edit, ExternalResult, ExternalFailure)
ALLOWED: dict[HoldKind, tuple[type, ...]] = {
    HoldKind.APPROVAL: (Approve, Deny, Edit),
    HoldKind.EXTERNAL: (ExternalResult, ExternalFailure, Deny),
}
"""Which decisions release a call held for each reason."""


@frozen
class GivenDecision:
    """A decision as journaled: the call it is for, its tool, and the decision."""

    call_id: str
    tool: str
    decision: Decision


def standing_of(given: GivenDecision) -> Approve | Deny | None:
    """The decision as it stands for its tool's later calls, if it says "always"."""
    decision = given.decision
    if isinstance(decision, Approve | Deny) and decision.scope is not None:
        return decision
    return None


@frozen
class ApprovalCheck:
    """What an approval policy sees of one call: the call, its validated arguments, the run's
    context, and whether the tool itself requires approval."""

    call: ToolCall
    arguments: dict[str, Any]
    context: RunContext[Any]
    tool_requires_approval: bool


PolicyAnswer: TypeAlias = bool | str | None
NeedsApproval: TypeAlias = Callable[[ApprovalCheck], PolicyAnswer | Awaitable[PolicyAnswer]]


@checked_arguments
@frozen
class ApprovalPolicy:
    """A loop's rules for approvals.

    `needs_approval(check)` decides per call: True or a reason (str) holds it, False lets it run,
    None leaves it to the tool (`@tool(requires_approval=True)`). `expire_after` seconds after a
    run pauses, its undecided calls are denied when it is resumed; `wall_clock` tells the time
    (epoch seconds; inject one in tests).
    """

    needs_approval: NeedsApproval | None = None
    expire_after: float | None = None
    wall_clock: Callable[[], float] = time.time

    def __attrs_post_init__(self) -> None:
        optional_function("ApprovalPolicy.needs_approval", self.needs_approval, 1)
        optional_number("ApprovalPolicy.expire_after", self.expire_after)
        function("ApprovalPolicy.wall_clock", self.wall_clock, 0)

    async def hold_reason(self, check: ApprovalCheck) -> str | None:
        """Why this call must wait for approval, or None when it may run."""
        answer: object = None
        if self.needs_approval is not None:
            answer = self.needs_approval(check)
            if inspect.isawaitable(answer):
                answer = await answer
        if answer is None:
            answer = check.tool_requires_approval
        return _reason(check.call.name, answer)

    def deadline(self) -> float | None:
        """When calls held now expire (epoch seconds), if they do."""
        if self.expire_after is None:
            return None
        return self.wall_clock() + self.expire_after


def _reason(tool: str, answer: object) -> str | None:
    if answer is True:
        return f"{tool!r} requires approval"
    if answer is False:
        return None
    if isinstance(answer, str) and answer.strip():
        return answer
    rule = "an approval policy returns True, False, None or a reason (a non-empty str)"
    raise ContractError("ApprovalPolicy.needs_approval", rule, answer)


DEFAULT_POLICY = ApprovalPolicy()

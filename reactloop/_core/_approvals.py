"""Human in the loop: which calls wait for a person (or for an outside runner), and the decisions
that release them.

A call is *held* when its tool requires approval, when the loop's `ApprovalPolicy` asks for it, or
when its tool is external (run elsewhere). A step with held calls runs the others, then the run
pauses (`StopReason.AWAITING_APPROVAL`) with `RunResult.pending` listing each held call; it goes
on with `loop.resume(..., decisions={call_id: Approve() | Deny(...) | Edit(...) | ...})`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from attrs import field, frozen

from reactloop._errors import ConfigurationError
from reactloop._validate import (
    checked_arguments,
    text,
)

if TYPE_CHECKING:
    pass


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
DecisionLike: TypeAlias = (
    Decision | bool | BaseException | str | int | float | Mapping[str, Any] | list[Any]
)
"""What `resume(decisions=...)` takes per call: a decision, or where the intent is plain, True or
False for a call held for approval, or an external call's result (any JSON value) or failure (an
exception)."""
DECISION_TYPES: tuple[type, ...] = (Approve, Deny, Edit, ExternalResult, ExternalFailure)
ALLOWED: dict[HoldKind, tuple[type, ...]] = {
    HoldKind.APPROVAL: (Approve, Deny, Edit),
    HoldKind.EXTERNAL: (ExternalResult, ExternalFailure, Deny),
}
"""Which decisions release a call held for each reason."""


@frozen
class GivenDecision:
    """A decision as journaled: the call it is for, its tool, the decision, and the arguments
    the held call showed when it was given (None in journals of version 0.1): an approval runs
    the call only with those arguments."""

    call_id: str
    tool: str
    decision: Decision
    arguments: dict[str, Any] | None = None


def standing_of(given: GivenDecision) -> Approve | Deny | None:
    """The decision as it stands for its tool's later calls, if it says "always"."""
    decision = given.decision
    if isinstance(decision, Approve | Deny) and decision.scope is not None:
        return decision
    return None

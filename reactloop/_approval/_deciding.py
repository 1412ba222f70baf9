"""Checking the decisions given to `resume()` against the calls a paused run holds, before
anything runs: each must name a held call and suit how it is held; edits must fit the schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from reactloop._core import (
    ALLOWED,
    DECISION_TYPES,
    Approve,
    Decision,
    Deny,
    Edit,
    ExternalFailure,
    ExternalResult,
    GivenDecision,
    HoldKind,
    PendingCall,
    Tool,
)
from reactloop._errors import ConfigurationError, ToolArgumentsError
from reactloop._stored_errors import DecisionError
from reactloop._tools import render

_DECISION_RULE = (
    "Approve(), Deny(reason), Edit(arguments), ExternalResult(value) or ExternalFailure(message)"
)
EXPIRED = "no decision was given before the deadline"


def decisions_mapping(decisions: object) -> Mapping[str, Any]:
    """The `decisions` argument: a mapping of call ids to decisions (None: no decisions)."""
    if decisions is None:
        return {}
    if not isinstance(decisions, Mapping):
        raise ConfigurationError.invalid(
            "decisions", decisions, "a mapping of call ids to decisions"
        )
    for call_id in decisions:
        if not isinstance(call_id, str):
            raise ConfigurationError.invalid("decisions", call_id, "keyed by call ids (str)")
    return decisions


def as_decision(hold: PendingCall, value: object) -> Decision:
    """The decision `value` stands for where the intent is plain: for a call held for approval,
    True approves and False denies; for an external call, an exception is its failure and any
    other value its result. Anything else must be a decision."""
    if isinstance(value, DECISION_TYPES):
        return value  # type: ignore[return-value]
    if hold.kind is HoldKind.APPROVAL and isinstance(value, bool):
        return Approve() if value else Deny()
    if hold.kind is HoldKind.EXTERNAL and isinstance(value, BaseException):
        return ExternalFailure(str(value) or type(value).__name__)
    if hold.kind is HoldKind.EXTERNAL and value is not None:
        return ExternalResult(value)
    raise DecisionError(hold.call_id, value, _DECISION_RULE)


def check_decisions(
    decisions: Mapping[str, Any],
    pending: tuple[PendingCall, ...],
    known: frozenset[str],
    tools: Mapping[str, Tool],
    limit: int,
) -> list[GivenDecision]:
    """The decisions for held calls, checked; one for a call the run made but no longer holds
    (decided or answered already: a retried request) is ignored; any other id is an error."""
    held = {p.call_id: p for p in pending}
    given: list[GivenDecision] = []
    for call_id, decision in decisions.items():
        hold = held.get(call_id)
        if hold is None:
            if call_id not in known:
                rule = f"a decision for a held call ({', '.join(sorted(held)) or 'none is held'})"
                raise DecisionError(call_id, decision, rule, "the run made no such call")
            continue
        chosen = as_decision(hold, decision)
        _suits(hold, chosen, tools.get(hold.tool), limit)
        given.append(GivenDecision(call_id, hold.tool, chosen, hold.arguments))
    return given


def expired(pending: tuple[PendingCall, ...], decided: set[str], now: float) -> list[GivenDecision]:
    """Denials for held calls past their deadline that got no decision."""
    return [
        GivenDecision(p.call_id, p.tool, Deny(EXPIRED))
        for p in pending
        if p.call_id not in decided and p.expires_at is not None and now >= p.expires_at
    ]


def _suits(hold: PendingCall, decision: object, tool: Tool | None, limit: int) -> None:
    allowed = ALLOWED[hold.kind]
    if not isinstance(decision, allowed):
        names = " or ".join(kind.__name__ for kind in allowed)
        rule = f"{names} for a call held for {hold.kind.value} ({hold.tool})"
        raise DecisionError(hold.call_id, decision, rule)
    if isinstance(decision, Edit) and tool is not None:
        _edited(hold, decision, tool)
    if isinstance(decision, ExternalResult):
        try:
            render(decision.value, limit)
        except (TypeError, orjson.JSONEncodeError) as exc:
            rule = "an ExternalResult whose value is a str or JSON-serializable"
            raise DecisionError(hold.call_id, decision, rule, str(exc)) from None


def _edited(hold: PendingCall, decision: Edit, tool: Tool) -> None:
    try:
        encoded = orjson.dumps(decision.arguments).decode()
        tool.parse_arguments(encoded)
    except (TypeError, orjson.JSONEncodeError) as exc:
        rule = "an Edit whose arguments are JSON values"
        raise DecisionError(hold.call_id, decision, rule, str(exc)) from None
    except ToolArgumentsError as exc:
        rule = f"an Edit whose arguments fit the schema of {hold.tool!r}"
        raise DecisionError(hold.call_id, decision, rule, "; ".join(exc.problems)) from None

"""Temporal's history limits, handled: when a run's workflow continues as new, what it carries
into the next execution (its journal, its events, how much of it the mirror holds), kept
within the loop's payload budget; and when a workflow's history is long enough to do so.

A run continues as new only at a pause (the loop stands still there, and the next execution
resumes it from its journal as `resume(run_id)` resumes a stored run); between two pauses it
cannot without changing its result, so a history past `HistoryLimits.fail_after` fails the
run with a `HistoryLimitError` instead of running on to Temporal's own hard limit.
"""

from __future__ import annotations

from typing import Any

import orjson
from attrs import frozen

from reactloop._durable import dump_json
from reactloop._stored_errors import UnreadableRunError
from reactloop._temporal._errors import HistoryLimitError, PayloadTooLargeError, TemporalRunError
from reactloop._validate import checked_arguments, integer, optional_integer

TOO_LARGE = "reactloop.PayloadTooLargeError"  # the ApplicationError types a workflow fails with
TOO_LONG = "reactloop.HistoryLimitError"
FAIL_AFTER = 50_000
"""Events a run's history may reach between pauses (Temporal terminates at 51,200)."""


@checked_arguments
@frozen
class HistoryLimits:
    """When a loop's workflows continue as new: a run's at its next pause, a session's after
    its current turn, once the history holds `continue_after` events (None: when Temporal
    suggests it); a run still driving between pauses at `fail_after` events fails with a
    `HistoryLimitError` (Temporal itself terminates a workflow at 51,200)."""

    continue_after: int | None = None
    fail_after: int = FAIL_AFTER

    def __attrs_post_init__(self) -> None:
        optional_integer("HistoryLimits.continue_after", self.continue_after)
        integer("HistoryLimits.fail_after", self.fail_after)

    def long(self, length: int, suggested: bool) -> bool:
        """Whether a history of `length` events (Temporal suggesting it or not) is long
        enough to continue as new."""
        return suggested or (self.continue_after is not None and length >= self.continue_after)


@frozen
class Carried:
    """What a run's workflow hands its next execution: the journal's records (encoded), the
    run's events so far (their values, in order, so a caller's position in them holds), and
    how many of the records the loop's mirror holds."""

    records: Any
    events: list[Any]
    mirrored: int


def carry(carried: Carried) -> bytes:
    """`carried` as the next execution's input holds it (`RunRequest.carried`)."""
    value = {"records": carried.records, "events": carried.events, "mirrored": carried.mirrored}
    return dump_json(value)


def uncarry(data: bytes) -> Carried:
    """What `carry` wrote."""
    try:
        value = orjson.loads(data)
        return Carried(value["records"], list(value["events"]), int(value["mirrored"]))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise UnreadableRunError(
            f"a Temporal payload of a carried run cannot be read: {exc}"
        ) from exc


def within(data: bytes, budget: int, what: str, run_id: str) -> bytes:
    """`data` if it fits the budget, else a `PayloadTooLargeError` naming it."""
    if len(data) > budget:
        raise PayloadTooLargeError(what, len(data), run_id, budget)
    return data


def failure_of(error: PayloadTooLargeError | HistoryLimitError) -> tuple[str, str, list[Any]]:
    """How a workflow fails with `error`: its message, its type and the details `failed`
    rebuilds it from (the workflow raises them as a non-retryable `ApplicationError`)."""
    if isinstance(error, PayloadTooLargeError):
        return error.message, TOO_LARGE, [error.what, error.size, error.limit]
    return error.message, TOO_LONG, [error.length, error.limit]


def failed(run_id: str, cause: object) -> TemporalRunError | None:
    """The typed error a workflow failed with (`failure_of`), from its failure's cause; None
    for any other failure."""
    kind, details = getattr(cause, "type", None), list(getattr(cause, "details", None) or ())
    if kind == TOO_LARGE and len(details) == 3:
        return PayloadTooLargeError(str(details[0]), int(details[1]), run_id, int(details[2]))
    if kind == TOO_LONG and len(details) == 2:
        return HistoryLimitError(int(details[0]), run_id, int(details[1]))
    return None

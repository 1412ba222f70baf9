"""A run's status follows from its last record: ended for good, ended early, failed, or running."""

from __future__ import annotations

import pytest

from reactloop._core._decisions import StopReason
from reactloop._core._messages import Usage
from reactloop._core._records import CallStarted, RunEnded, RunStatus, status_after, status_of
from reactloop._errors import ErrorCode


def ended(reason: StopReason, code: ErrorCode | None = None) -> RunEnded:
    return RunEnded(reason, "", None, Usage(), 0.0, code)


@pytest.mark.parametrize(
    "reason",
    [
        StopReason.COMPLETED,
        StopReason.MAX_ITERATIONS,
        StopReason.HOOK_STOPPED,
        StopReason.CONDITION,
    ],
)
def test_a_run_that_ended_for_good_is_finished(reason: StopReason) -> None:
    assert status_of(ended(reason)) is RunStatus.FINISHED


@pytest.mark.parametrize("reason", [StopReason.INTERRUPTED, StopReason.STREAM_CLOSED])
def test_a_run_stopped_on_request_or_left_is_interrupted(reason: StopReason) -> None:
    assert status_of(ended(reason)) is RunStatus.INTERRUPTED


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        (StopReason.ERROR, ErrorCode.PROVIDER_UNAVAILABLE),
        (StopReason.RUN_TIMEOUT, ErrorCode.TIMEOUT),
    ],
)
def test_a_run_that_ended_with_an_error_failed(reason: StopReason, code: ErrorCode) -> None:
    assert status_of(ended(reason, code)) is RunStatus.FAILED


def test_records_that_do_not_end_the_run_leave_it_running() -> None:
    assert status_after([CallStarted(1, "c", "t")]) is RunStatus.RUNNING
    assert status_after([ended(StopReason.COMPLETED)]) is RunStatus.FINISHED

"""HookDecisionApplier turns a parked hook stop into a Stop, once."""

from __future__ import annotations

import pytest

from reactloop import StopReason
from reactloop._core._decisions import StopRun
from reactloop._errors import HookError
from reactloop._phases.applier import park_stop
from reactloop._policies._hooks import Verdict
from reactloop.phases import HookDecisionApplier, Proceed, Stop
from reactloop.testing import make_run, run_phase

pytestmark = pytest.mark.anyio


async def test_proceeds_without_a_pending_stop() -> None:
    assert isinstance(await run_phase(HookDecisionApplier(), make_run()), Proceed)


async def test_returns_the_pending_stop_and_clears_it() -> None:
    run = make_run()
    run.pending_stop = Stop(StopReason.HOOK_STOPPED, "policy")
    decision = await run_phase(HookDecisionApplier(), run)
    assert decision is not None and isinstance(decision, Stop)
    assert decision.detail == "policy"
    assert run.pending_stop is None


def test_a_failed_hooks_stop_is_parked_as_an_error_with_its_message() -> None:
    run = make_run()
    error = HookError("Audit", "before_run", RuntimeError("down"))
    assert park_stop(run, Verdict(None, StopRun(error.message), error=error))
    stop = run.pending_stop
    assert stop is not None
    assert (stop.reason, stop.detail, stop.error) == (StopReason.ERROR, error.message, error)

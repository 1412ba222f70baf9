"""Built-in phases print as the expression that builds them, so a sequence reads at a glance."""

from __future__ import annotations

import pytest

import reactloop.phases
from reactloop.phases import Phase, default_phases, default_start_phases

BUILT_IN = {type(phase): phase for phase in [*default_start_phases(), *default_phases()]}


@pytest.mark.parametrize("phase", BUILT_IN.values(), ids=lambda phase: type(phase).__name__)
def test_a_phase_repr_rebuilds_the_phase(phase: Phase) -> None:
    assert repr(phase) == f"{type(phase).__name__}()"
    assert type(eval(repr(phase), vars(reactloop.phases))) is type(phase)


def test_the_default_sequence_prints_readably() -> None:
    assert repr(default_phases()) == (
        "[IterationGuards(), ReasoningPhase(), HookDecisionApplier(), OutputPhase(), "
        "ToolPhase(), HookDecisionApplier()]"
    )

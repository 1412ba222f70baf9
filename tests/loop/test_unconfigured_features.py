"""A feature a loop does not configure costs nothing per step (issue 30, adr/0007): a plain
run makes no call into the code of approval, structured output, toolsets, tool selection,
telemetry, prices, context windows, agent tools or durability, however many steps it takes.

Counted with a profiler hook (every Python call of the library, by file: see
`benchmarks.features`), so the check is exact, not timed."""

from __future__ import annotations

import pytest

from benchmarks.features import FEATURES, per_step

pytestmark = pytest.mark.anyio


async def test_an_unconfigured_feature_makes_no_call_per_step() -> None:
    counts = await per_step(3, 9)
    assert {feature: counts[feature] for feature in FEATURES} == dict.fromkeys(FEATURES, 0.0)
    assert counts["the loop"] > 0  # the hook did count: the loop's own calls are there

"""Cache breaks survive the store: a stored run's steps keep their `prefix_breaks`, and a step
without any is written as before (no new field in its record)."""

from __future__ import annotations

import pytest

from reactloop import ContextWindow
from reactloop._core._contracts import RunStore
from reactloop._core._messages import Usage
from reactloop._core._records import StepClosed
from reactloop._durable._codec import encode
from reactloop._loop._loop import ReActLoop
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio


async def test_a_stored_run_keeps_each_steps_cache_breaks(any_store: RunStore) -> None:
    script = [reply("", call("lookup", n=n)) for n in range(29)] + [reply("done")]
    loop = ReActLoop(
        ScriptedModel(script),
        tools=[FakeTool("lookup", result="figure " * 60)],
        context_window=ContextWindow(max_tokens=3_000, reserved_output=500, drop_to=0.6),
        max_iterations=30,
        store=any_store,
    )
    result = await loop.run("go")
    stored = await any_store.load(result.run_id)
    assert result.cache_breaks >= 2
    assert [s.prefix_breaks for s in stored.steps] == [s.prefix_breaks for s in result.steps]


def test_a_step_without_breaks_is_stored_without_the_field() -> None:
    plain = encode(StepClosed(1, 0.0, 0.1, Usage(1, 1)))
    broke = encode(StepClosed(1, 0.0, 0.1, Usage(1, 1), prefix_breaks=("trimmed",)))
    assert b"prefix_breaks" not in plain and b'"prefix_breaks":["trimmed"]' in broke

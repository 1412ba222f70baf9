"""RunState is plain data: attrs values, containers, enums and primitives; nothing live inside."""

from __future__ import annotations

import enum
from typing import Any

import attrs
import pytest

from reactloop import ReActLoop, RunState, UserMessage
from reactloop._lifecycle import start_run
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio

PRIMITIVES = (str, int, float, bool, type(None), enum.Enum)


def assert_plain(value: Any, path: str = "state") -> None:
    if isinstance(value, PRIMITIVES):
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            assert_plain(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            assert_plain(key, f"{path} key")
            assert_plain(item, f"{path}[{key!r}]")
    elif attrs.has(type(value)):
        for field in attrs.fields(type(value)):
            assert_plain(getattr(value, field.name), f"{path}.{field.name}")
    else:
        raise AssertionError(f"{path} holds a {type(value).__name__}, which is not plain data")


async def test_state_after_a_run_is_plain_data() -> None:
    model = ScriptedModel([reply("", call("t", q=1), call("t", q=2)), "done"])
    loop = ReActLoop(model, tools=[FakeTool("t")], instructions="x")
    run = await start_run(loop.config, "go", history=[UserMessage("before")])
    await loop.drive(run)
    assert_plain(run.state)
    assert len(run.state.steps) == 2


def test_the_checker_rejects_live_objects() -> None:
    state = RunState("r", [UserMessage("x")])
    state.messages.append(lambda: None)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="function"):
        assert_plain(state)

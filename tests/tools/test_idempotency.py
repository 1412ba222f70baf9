"""Idempotency keys: each tool call's context names the call with a key that stays the same when
the run is resumed (a tool cut off and run again passes the same key on) and differs per call."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from reactloop import Limits
from reactloop._core._contracts import RunStore
from reactloop._core._messages import ToolCall
from reactloop._core._state import RunContext
from reactloop._errors import ContractError
from reactloop._loop._loop import ReActLoop
from reactloop._tools._tool import tool
from reactloop.testing import ScriptedModel, reply

pytestmark = pytest.mark.anyio


async def test_a_call_run_again_on_resume_passes_the_same_key(any_store: RunStore) -> None:
    keys: list[tuple[str, str]] = []
    first_try = anyio.Event()

    @tool(idempotent=True)
    async def charge(amount: int, ctx: RunContext[None]) -> str:
        """Charge an amount."""
        keys.append((str(ctx.call_id), ctx.idempotency_key))
        if len(keys) == 1:
            await first_try.wait()  # cut off here: the run is cancelled mid-call
        return f"charged {amount}"

    calls = reply("", ToolCall.of("charge", {"amount": 5}), ToolCall.of("charge", {"amount": 5}))
    loop = ReActLoop(
        ScriptedModel([calls]), tools=[charge], store=any_store, limits=Limits(max_concurrency=1)
    )
    async with anyio.create_task_group() as tasks, loop.start("go") as handle:
        while not keys:
            await anyio.lowlevel.checkpoint()
        run_id = handle.run_id
        tasks.cancel_scope.cancel()
    first_try.set()
    again = ReActLoop(ScriptedModel(["done"]), tools=[charge], store=any_store)
    resumed = await again.resume(run_id)
    assert resumed.output == "done"
    cut = keys[0]  # the calls may start in either order: the cut one ran first
    [rerun] = [entry for entry in keys[1:] if entry[0] == cut[0]]
    [other] = [entry for entry in keys[1:] if entry[0] != cut[0]]
    assert cut == rerun, "a call run again after a resume passes the same key on"
    assert other[1] != cut[1] and len(cut[1]) == len("reactloop-") + 32
    assert cut[1].startswith("reactloop-")


async def test_a_key_names_its_run_too() -> None:
    keys: list[str] = []

    @tool
    def charge(ctx: RunContext[None]) -> str:
        """Charge."""
        keys.append(ctx.idempotency_key)
        return "charged"

    for _ in range(2):
        model = ScriptedModel([ToolCall("charge", "{}", "call_0"), "done"])
        await ReActLoop(model, tools=[charge]).run("go")
    assert len(set(keys)) == 2, "the same call id in two runs gives two keys"


def test_the_key_exists_only_in_a_tool_calls_context() -> None:
    with pytest.raises(ContractError, match="idempotency_key") as raised:
        _ = RunContext(run_id="r1", deps=None).idempotency_key
    assert "tool call's context" in str(raised.value)
    assert RunContext(run_id="r1", deps=None).for_call("c1").call_id == "c1"

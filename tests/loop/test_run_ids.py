"""Caller-chosen run ids: a retried request with the same `run_id` gets the run it started, never
a second run; `if_exists="error"` refuses it; bad ids are configuration errors."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from reactloop._core._contracts import RunStore
from reactloop._core._events import RunFinished
from reactloop._core._messages import ModelRequest
from reactloop._core._records import RunCreated
from reactloop._errors import ConfigurationError, ErrorCode, ReactLoopError
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import RunExistsError
from reactloop._tools._tool import tool
from reactloop.testing import FunctionModel, ScriptedModel, call

pytestmark = pytest.mark.anyio


def paid_tool(paid: list[int]) -> Any:
    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Pay an amount."""
        paid.append(amount)
        return f"paid {amount}"

    return pay


async def test_a_finished_run_started_again_by_id_gives_its_stored_result(
    any_store: RunStore,
) -> None:
    model = ScriptedModel(["Hello."])
    loop = ReActLoop(model, store=any_store)
    first = await loop.run("hi", run_id="request-42")
    assert first.run_id == "request-42" and first.output == "Hello."
    again = await loop.run("hi", run_id="request-42")
    assert again.output == "Hello." and again.run_id == "request-42"
    assert len(model.requests) == 1, "a retried request never starts a second run"
    assert [s.run_id for s in await any_store.list_runs()] == ["request-42"]
    async with loop.start("hi", run_id="request-42") as handle:
        assert (await handle.result()).output == "Hello."
    async with loop.stream("hi", run_id="request-42") as events:
        [finished] = [event async for event in events]
    assert isinstance(finished, RunFinished) and finished.result.output == "Hello."
    assert len(model.requests) == 1


async def test_a_paused_run_started_again_by_id_stays_paused_until_decided(
    any_store: RunStore,
) -> None:
    paid: list[int] = []
    model = ScriptedModel([call("pay", amount=5), "Paid."])
    loop = ReActLoop(model, tools=[paid_tool(paid)], store=any_store)
    first = await loop.run("pay 5", run_id="order-7")
    retried = await loop.run("pay 5", run_id="order-7")
    assert first.paused and retried.paused and retried.pending == first.pending
    assert paid == [] and len(model.requests) == 1
    done = await loop.resume("order-7", decisions={first.pending[0].call_id: True})
    assert done.output == "Paid." and paid == [5]


async def test_if_exists_error_refuses_a_stored_run_id(any_store: RunStore) -> None:
    loop = ReActLoop(ScriptedModel(["Hello."]), store=any_store)
    await loop.run("hi", run_id="r-1", if_exists="error")
    with pytest.raises(RunExistsError, match="'r-1'") as raised:
        await loop.run("hi", run_id="r-1", if_exists="error")
    assert raised.value.code is ErrorCode.CONFLICT and raised.value.run_id == "r-1"
    assert "if_exists='error'" in str(raised.value)
    with pytest.raises(RunExistsError):
        async with loop.start("hi", run_id="r-1", if_exists="error"):
            pass


async def test_without_a_store_a_run_id_names_the_run() -> None:
    loop = ReActLoop(ScriptedModel(["a", "b"]))
    assert (await loop.run("hi", run_id="mine")).run_id == "mine"
    assert (await loop.run("hi", run_id="mine")).output == "b"


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"run_id": ""}, "run_id"),
        ({"run_id": 7}, "run_id"),
        ({"run_id": "x", "if_exists": "replace"}, "if_exists"),
    ],
)
async def test_a_bad_run_id_or_rule_is_a_configuration_error(
    options: dict[str, Any], named: str
) -> None:
    loop = ReActLoop(ScriptedModel(["a"]))
    with pytest.raises(ConfigurationError, match=named):
        await loop.run("hi", **options)


async def test_two_callers_starting_one_run_id_at_once_start_one_run(
    any_store: RunStore,
) -> None:
    asked, answer = anyio.Event(), anyio.Event()

    async def slow(request: ModelRequest) -> str:
        asked.set()
        await answer.wait()
        return "Hello."

    loop = ReActLoop(FunctionModel(slow), store=any_store)
    outcomes: list[object] = []

    async def start() -> None:
        try:
            outcomes.append((await loop.run("hi", run_id="request-9")).output)
        except ReactLoopError as error:
            outcomes.append(error)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(start)
            await asked.wait()
            await start()  # the same id while the first one runs: never a second run
            answer.set()
    assert "Hello." in outcomes and len(outcomes) == 2
    conflict = next(o for o in outcomes if o != "Hello.")
    assert isinstance(conflict, ReactLoopError) and conflict.code is ErrorCode.CONFLICT
    assert [s.run_id for s in await any_store.list_runs()] == ["request-9"]


async def test_a_store_refuses_a_second_run_with_one_id(any_store: RunStore) -> None:
    created = RunCreated("r1", "hi", None, (), 0.0)
    await any_store.create_run(created)
    with pytest.raises(RunExistsError, match="'r1'"):
        await any_store.create_run(created)
    assert len((await any_store.load("r1")).records) == 1

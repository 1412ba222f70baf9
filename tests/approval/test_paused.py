"""Paused runs without a store travel as signed state tokens: resumed by a fresh loop with the
same key, refused before anything runs when altered or signed by another key, and, with a store,
refused when an older pause's token is replayed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from reactloop._approval._sealing import ENV_VAR
from reactloop._core._approvals import Approve, Deny
from reactloop._core._messages import ToolMessage
from reactloop._core._state import RunResult
from reactloop._durable._stores import MemoryStore
from reactloop._errors import ConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import StateTokenError, StateTokenReason
from reactloop.approval import ApprovalOptions
from reactloop.testing import FakeTool, FunctionModel, call
from tests.helpers.strategies import ByteFlip, CharEdit, byte_flips, char_edits

pytestmark = pytest.mark.anyio

KEY = "k" * 32
OTHER_KEY = "o" * 32


def loop_for(pay: FakeTool, key: str | None = KEY, **options: Any) -> ReActLoop:
    """A loop whose model asks for two payments, then answers (each loop its own script: a
    resumed run asks the model only for the answer)."""
    batch = [call("pay", amount=5), call("pay", amount=7)]
    model = FunctionModel(
        lambda request: "done" if isinstance(request.messages[-1], ToolMessage) else batch
    )
    return ReActLoop(model, tools=[pay], approval=ApprovalOptions(state_key=key), **options)


async def paused_token(pay: FakeTool) -> RunResult:
    result = await loop_for(pay).run("go")
    assert result.paused and isinstance(result.state, str)
    return result


async def test_a_fresh_loop_resumes_a_token_with_decisions() -> None:
    pay = FakeTool("pay", requires_approval=True)
    paused = await paused_token(pay)
    first, second = (p.call_id for p in paused.pending)
    fresh = loop_for(pay)  # another process would build the same loop
    result = await fresh.resume(state=paused.state, decisions={first: Approve(), second: Deny()})
    assert result.output == "done" and pay.calls == [{"amount": 5}]
    denied = [m for m in result.messages if isinstance(m, ToolMessage) and m.call_id == second]
    assert denied[0].is_error and "denied" in denied[0].text


async def test_a_partly_decided_token_pauses_again_with_a_new_token() -> None:
    pay = FakeTool("pay", requires_approval=True)
    paused = await paused_token(pay)
    first, second = (p.call_id for p in paused.pending)
    again = await loop_for(pay).resume(state=paused.state, decisions={first: Approve()})
    assert again.paused and [p.call_id for p in again.pending] == [second]
    assert again.state is not None and again.state != paused.state
    assert pay.calls == [{"amount": 5}]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edit=char_edits)
async def test_a_token_with_any_character_changed_is_refused_before_anything_runs(
    edit: CharEdit,
) -> None:
    pay = FakeTool("pay", requires_approval=True)
    paused = await paused_token(pay)
    assert paused.state is not None
    decisions = {p.call_id: Approve() for p in paused.pending}
    with pytest.raises(StateTokenError):
        await loop_for(pay).resume(state=edit.apply(paused.state), decisions=decisions)
    assert pay.calls == []


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flip=byte_flips)
async def test_a_token_with_any_byte_flipped_is_refused(flip: ByteFlip) -> None:
    pay = FakeTool("pay", requires_approval=True)
    paused = await paused_token(pay)
    assert paused.state is not None
    with pytest.raises(StateTokenError):
        await loop_for(pay).resume(state=flip.apply(paused.state))
    assert pay.calls == []


async def test_a_token_signed_by_another_key_is_refused() -> None:
    pay = FakeTool("pay", requires_approval=True)
    paused = await paused_token(pay)
    with pytest.raises(StateTokenError) as caught:
        await loop_for(pay, OTHER_KEY).resume(state=paused.state)
    assert caught.value.reason is StateTokenReason.BAD_SIGNATURE and pay.calls == []


async def test_with_a_store_an_older_pauses_token_is_refused_as_stale() -> None:
    pay = FakeTool("pay", requires_approval=True)
    store = MemoryStore()
    paused = await loop_for(pay, store=store).run("go")
    first = paused.pending[0].call_id
    await loop_for(pay, store=store).resume(state=paused.state, decisions={first: Approve()})
    with pytest.raises(StateTokenError) as caught:
        await loop_for(pay, store=store).resume(state=paused.state, decisions={first: Approve()})
    assert caught.value.reason is StateTokenReason.STALE and pay.calls == [{"amount": 5}]


async def test_the_key_may_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, KEY)
    pay = FakeTool("pay", requires_approval=True)
    paused = await loop_for(pay, None).run("go")
    decisions = {p.call_id: Approve() for p in paused.pending}
    done = await loop_for(pay, None).resume(state=paused.state, decisions=decisions)
    assert done.stop_reason.value == "completed"


async def test_a_loop_that_may_pause_needs_a_store_or_a_key_to_start_a_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    pay = FakeTool("pay", requires_approval=True)
    loop = loop_for(pay, None)  # built (a loop run on Temporal gets its store there)
    with pytest.raises(ConfigurationError, match="state_key") as caught:
        await loop.run("go")
    assert caught.value.option == "state_key" and pay.calls == []
    stored = await loop_for(pay, None, store=MemoryStore()).run("go")  # a store will do
    assert stored.paused


@pytest.mark.parametrize(("run_id", "state"), [(None, None), ("abc", "rl1.x.y")])
async def test_resume_takes_a_run_id_or_a_token(run_id: str | None, state: str | None) -> None:
    loop = loop_for(FakeTool("pay", requires_approval=True), store=MemoryStore())
    with pytest.raises(ConfigurationError, match="resume"):
        await loop.resume(run_id, state=state)


async def test_a_key_never_appears_in_an_error_or_the_loops_repr() -> None:
    with pytest.raises(ConfigurationError) as caught:
        loop_for(FakeTool("pay", requires_approval=True), "short-secret-key")
    assert "short-secret-key" not in str(caught.value) and "short-secret-key" not in repr(
        caught.value.value
    )
    assert KEY not in repr(loop_for(FakeTool("pay")).config)

"""Human in the loop: held calls pause the run, decisions given on resume release them, and each
approved call runs exactly once. Every test runs on each store (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest

from reactloop import Limits
from reactloop._approval._policy import ApprovalCheck, ApprovalPolicy
from reactloop._core._approvals import (
    Approve,
    Decision,
    DecisionLike,
    DecisionScope,
    Deny,
    Edit,
    ExternalFailure,
    ExternalResult,
    HoldKind,
)
from reactloop._core._contracts import Hook, RunStore
from reactloop._core._decisions import Override, StopReason, StopRun
from reactloop._core._events import Event, RunFinished, RunPaused
from reactloop._core._messages import ToolCall, ToolMessage, ToolSpec
from reactloop._core._records import RunStatus
from reactloop._core._state import RunContext, RunResult
from reactloop._errors import ErrorCode
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._stored_errors import DecisionError, RunInProgressError, SessionBusyError
from reactloop._tools._tool import tool
from reactloop.testing import FakeClock, FakeTool, FunctionModel, ScriptedModel, call

pytestmark = pytest.mark.anyio


def results(result: RunResult) -> dict[str, ToolMessage]:
    return {m.call_id: m for m in result.messages if isinstance(m, ToolMessage)}


def pay_tools() -> tuple[FakeTool, FakeTool, FakeTool]:
    pay = FakeTool("pay", result="paid", requires_approval=True)
    look = FakeTool("look", result="seen")
    delete = FakeTool("delete", result="deleted", requires_approval=True)
    return pay, look, delete


async def test_a_step_runs_the_free_calls_and_pauses_with_the_held_ones(
    any_store: RunStore,
) -> None:
    pay, look, delete = pay_tools()
    batch = [call("pay", amount=5), call("look", q="x"), call("delete", id=1)]
    model = ScriptedModel([batch, "done"])
    loop = ReActLoop(model, tools=[pay, look, delete], store=any_store)
    result = await loop.run("go")
    assert result.stop_reason is StopReason.AWAITING_APPROVAL and result.paused
    assert [(p.tool, p.arguments, p.kind) for p in result.pending] == [
        ("pay", {"amount": 5}, HoldKind.APPROVAL),
        ("delete", {"id": 1}, HoldKind.APPROVAL),
    ]
    assert "'pay' requires approval" in result.pending[0].reason
    assert (look.calls, pay.calls, delete.calls) == ([{"q": "x"}], [], [])
    assert len(model.requests) == 1  # no model call while decisions are pending
    stored = await any_store.load(result.run_id)
    assert stored.status is RunStatus.PAUSED and stored.pending == result.pending


async def test_a_mixed_batch_is_approved_denied_and_edited_in_one_resume(
    any_store: RunStore,
) -> None:
    pay, look, delete = pay_tools()
    batch = [
        call("pay", amount=5),
        call("look", q="x"),
        call("delete", id=1),
        call("pay", amount=9),
    ]
    model = ScriptedModel([batch, "done"])
    loop = ReActLoop(model, tools=[pay, look, delete], store=any_store)
    paused = await loop.run("go")
    first, doomed, second = (p.call_id for p in paused.pending)
    decisions: dict[str, Decision] = {
        first: Approve(),
        doomed: Deny("not today"),
        second: Edit({"amount": 3}),
    }
    result = await loop.resume(paused.run_id, decisions=decisions)
    assert result.stop_reason is StopReason.COMPLETED and result.output == "done"
    assert sorted(c["amount"] for c in pay.calls) == [3, 5] and delete.calls == []
    assert look.calls == [{"q": "x"}]  # the free call ran once, before the pause
    by_id = results(result)
    assert "denied" in by_id[doomed].text and "not today" in by_id[doomed].text
    assert by_id[doomed].is_error and by_id[second].text == "paid"
    calls = [c.id for c in model.requests[1].messages[1].tool_calls]  # type: ignore[union-attr]
    answered = [m.call_id for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert sorted(answered) == sorted(calls)  # every call answered once: no split pair


async def test_missing_decisions_leave_the_run_paused(any_store: RunStore) -> None:
    pay, look, delete = pay_tools()
    model = ScriptedModel([[call("pay", amount=5), call("delete", id=1)], "done"])
    loop = ReActLoop(model, tools=[pay, look, delete], store=any_store)
    paused = await loop.run("go")
    first, second = (p.call_id for p in paused.pending)
    again = await loop.resume(paused.run_id, decisions={first: Approve()})
    assert again.paused and [p.call_id for p in again.pending] == [second]
    assert pay.calls == [{"amount": 5}] and len(model.requests) == 1
    done = await loop.resume(paused.run_id, decisions={second: Approve()})
    assert done.output == "done" and pay.calls == [{"amount": 5}] and delete.calls == [{"id": 1}]


async def test_an_approved_call_runs_once_when_resume_is_repeated(any_store: RunStore) -> None:
    pay, look, delete = pay_tools()
    model = ScriptedModel([call("pay", amount=5), "done"])
    loop = ReActLoop(model, tools=[pay, look, delete], store=any_store)
    paused = await loop.run("go")
    decisions = {paused.pending[0].call_id: Approve()}
    first = await loop.resume(paused.run_id, decisions=decisions)
    second = await loop.resume(paused.run_id, decisions=decisions)  # a retried request
    assert first.output == second.output == "done" and pay.calls == [{"amount": 5}]


async def test_two_concurrent_resumers_run_an_approved_call_once(any_store: RunStore) -> None:
    gate = anyio.Event()
    pay = FakeTool("pay", gate=gate, requires_approval=True)
    model = ScriptedModel([call("pay", amount=5), "done"])
    loop = ReActLoop(model, tools=[pay], store=any_store)
    paused = await loop.run("go")
    decisions = {paused.pending[0].call_id: Approve()}
    outcomes: list[object] = []

    async def resumer() -> None:
        try:
            outcomes.append(await loop.resume(paused.run_id, decisions=decisions))
        except RunInProgressError as error:
            outcomes.append(error)
            gate.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(resumer)
        tasks.start_soon(resumer)
    assert pay.calls == [{"amount": 5}]
    assert sum(isinstance(o, RunInProgressError) for o in outcomes) == 1


async def test_a_decision_for_a_call_the_run_never_made_is_refused_before_anything_runs(
    any_store: RunStore,
) -> None:
    pay, look, delete = pay_tools()
    model = ScriptedModel([[call("pay", amount=5), call("delete", id=1)], "done"])
    loop = ReActLoop(model, tools=[pay, look, delete], store=any_store)
    paused = await loop.run("go")
    first = paused.pending[0].call_id
    with pytest.raises(DecisionError, match="no-such-call") as caught:
        await loop.resume(paused.run_id, decisions={first: Approve(), "no-such-call": Approve()})
    assert caught.value.call_id == "no-such-call" and pay.calls == []
    assert (await any_store.load(paused.run_id)).status is RunStatus.PAUSED


@pytest.mark.parametrize(
    "decision",
    [ExternalResult("x"), ExternalFailure("broke"), "approve", None, 5, ["yes"]],
    ids=["external-result", "external-failure", "str", "none", "int", "list"],
)
async def test_a_decision_that_does_not_suit_the_held_call_is_refused(
    any_store: RunStore, decision: Any
) -> None:
    pay = pay_tools()[0]
    loop = ReActLoop(ScriptedModel([call("pay", amount=5)]), tools=[pay], store=any_store)
    paused = await loop.run("go")
    with pytest.raises(DecisionError):
        await loop.resume(paused.run_id, decisions={paused.pending[0].call_id: decision})
    assert pay.calls == []


async def test_an_edit_the_schema_refuses_is_a_typed_error_and_nothing_runs(
    any_store: RunStore,
) -> None:
    ran: list[int] = []

    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Pay an amount."""
        ran.append(amount)
        return "paid"

    loop = ReActLoop(ScriptedModel([call("pay", amount=5), "ok"]), tools=[pay], store=any_store)
    paused = await loop.run("go")
    call_id = paused.pending[0].call_id
    with pytest.raises(DecisionError, match="amount"):
        await loop.resume(paused.run_id, decisions={call_id: Edit({"amount": "lots"})})
    assert ran == []
    done = await loop.resume(paused.run_id, decisions={call_id: Edit({"amount": 2})})
    assert ran == [2] and done.output == "ok"


async def test_a_policy_approves_small_transfers_and_holds_large_ones(any_store: RunStore) -> None:
    transfer = FakeTool("transfer")

    def large(check: ApprovalCheck) -> bool | str:
        return check.arguments["amount"] >= 100 and "transfers of 100 or more need approval"

    batch = [call("transfer", amount=50), call("transfer", amount=500)]
    model = ScriptedModel([batch, "done"])
    policy = ApprovalPolicy(needs_approval=large)
    loop = ReActLoop(model, tools=[transfer], store=any_store, approval=policy)
    paused = await loop.run("go")
    assert transfer.calls == [{"amount": 50}]
    assert [(p.arguments, p.reason) for p in paused.pending] == [
        ({"amount": 500}, "transfers of 100 or more need approval")
    ]


async def test_an_always_decision_covers_the_tools_later_calls_in_the_run(
    any_store: RunStore,
) -> None:
    pay = pay_tools()[0]
    model = ScriptedModel([call("pay", amount=1), call("pay", amount=2), "done"])
    loop = ReActLoop(model, tools=[pay], store=any_store)
    paused = await loop.run("go")
    result = await loop.resume(
        paused.run_id, decisions={paused.pending[0].call_id: Approve(always=True)}
    )
    assert result.output == "done" and pay.calls == [{"amount": 1}, {"amount": 2}]


@pytest.mark.parametrize(
    ("always", "second_turn_pauses"),
    [(DecisionScope.SESSION, False), (True, True), (DecisionScope.RUN, True)],
)
async def test_a_session_wide_decision_covers_the_sessions_later_runs_only(
    any_store: RunStore, always: bool | DecisionScope, second_turn_pauses: bool
) -> None:
    pay = pay_tools()[0]
    model = FunctionModel(
        lambda request: "paid" if isinstance(request.messages[-1], ToolMessage) else call("pay")
    )
    loop = ReActLoop(model, tools=[pay], store=any_store)
    paused = await loop.run("first", session_id="s1")
    decision = Approve(always=always)
    await loop.resume(paused.run_id, decisions={paused.pending[0].call_id: decision})
    second = await loop.run("second", session_id="s1")
    assert second.paused is second_turn_pauses
    other = await loop.run("elsewhere", session_id="s2")
    assert other.paused  # another session is not covered


async def test_an_external_tool_pauses_and_takes_its_result_or_error_from_the_caller(
    any_store: RunStore,
) -> None:
    browser = FakeTool("browser", external=True)
    model = ScriptedModel([[call("browser", url="a"), call("browser", url="b")], "done"])
    loop = ReActLoop(model, tools=[browser], store=any_store)
    paused = await loop.run("go")
    assert [p.kind for p in paused.pending] == [HoldKind.EXTERNAL] * 2
    ok, bad = (p.call_id for p in paused.pending)
    decisions: dict[str, Decision] = {
        ok: ExternalResult({"title": "A"}),
        bad: ExternalFailure("page not found"),
    }
    result = await loop.resume(paused.run_id, decisions=decisions)
    by_id = results(result)
    assert by_id[ok].text == '{"title":"A"}' and not by_id[ok].is_error
    assert {m.name for m in by_id.values()} == {"browser"}
    assert by_id[bad].text == "page not found" and by_id[bad].is_error
    assert browser.calls == [] and result.output == "done"


async def test_plain_values_stand_for_decisions_where_the_intent_is_plain(
    any_store: RunStore,
) -> None:
    pay = pay_tools()[0]
    browser = FakeTool("browser", external=True)
    batch = [call("pay", amount=1), call("pay", amount=2), call("browser", url="a")]
    batch.append(call("browser", url="b"))
    model = ScriptedModel([batch, "done"])
    loop = ReActLoop(model, tools=[pay, browser], store=any_store)
    paused = await loop.run("go")
    yes, no, page, broken = (p.call_id for p in paused.pending)
    decisions: dict[str, DecisionLike] = {
        yes: True,
        no: False,
        page: {"title": "A"},
        broken: LookupError("gone"),
    }
    result = await loop.resume(paused.run_id, decisions=decisions)
    by_id = results(result)
    assert pay.calls == [{"amount": 1}] and "denied" in by_id[no].text
    assert by_id[page].text == '{"title":"A"}' and not by_id[page].is_error
    assert by_id[broken].text == "gone" and by_id[broken].is_error


async def test_undecided_calls_past_their_deadline_are_denied_on_resume(
    any_store: RunStore,
) -> None:
    pay, _, delete = pay_tools()
    wall = FakeClock(1_000.0)
    policy = ApprovalPolicy(expire_after=60, wall_clock=wall)
    model = ScriptedModel([[call("pay", amount=5), call("delete", id=1)], "done"])
    loop = ReActLoop(model, tools=[pay, delete], store=any_store, approval=policy)
    paused = await loop.run("go")
    assert {p.expires_at for p in paused.pending} == {1_060.0}
    first, second = (p.call_id for p in paused.pending)
    wall.advance(61)
    result = await loop.resume(paused.run_id, decisions={first: Approve()})
    assert pay.calls == [{"amount": 5}] and delete.calls == []
    assert "deadline" in results(result)[second].text and result.output == "done"


async def test_a_stream_reports_the_pending_calls_before_it_ends(any_store: RunStore) -> None:
    pay = pay_tools()[0]
    model = ScriptedModel([call("pay", amount=5), "done"])
    loop = ReActLoop(model, tools=[pay], store=any_store)
    seen: list[Event] = []
    async with loop.stream("go") as events:
        async for event in events:
            seen.append(event)
    paused = [e for e in seen if isinstance(e, RunPaused)]
    assert len(paused) == 1 and isinstance(seen[-1], RunFinished)
    assert seen.index(paused[0]) < len(seen) - 1
    decisions = {paused[0].pending[0].call_id: Approve()}
    async with loop.resume_stream(seen[-1].result.run_id, decisions=decisions) as events:
        ended = [e async for e in events][-1]
    assert isinstance(ended, RunFinished) and ended.result.output == "done"


async def test_a_resumed_step_counts_its_calls_once_against_the_cap(any_store: RunStore) -> None:
    pay, look, _ = pay_tools()
    model = ScriptedModel([[call("pay", amount=5), call("look", q="x")], "done"])
    loop = ReActLoop(model, tools=[pay, look], store=any_store, limits=Limits(max_tool_calls=2))
    paused = await loop.run("go")
    result = await loop.resume(paused.run_id, decisions={paused.pending[0].call_id: Approve()})
    assert pay.calls == [{"amount": 5}] and look.calls == [{"q": "x"}]
    assert not any(m.is_error for m in results(result).values())


async def test_a_session_takes_no_new_turn_while_a_run_of_it_is_paused(
    any_store: RunStore,
) -> None:
    pay = pay_tools()[0]
    model = FunctionModel(
        lambda request: "paid" if isinstance(request.messages[-1], ToolMessage) else call("pay")
    )
    loop = ReActLoop(model, tools=[pay], store=any_store)
    paused = await loop.run("first", session_id="s1")
    with pytest.raises(SessionBusyError) as caught:
        await loop.run("second", session_id="s1")
    assert caught.value.paused_run == paused.run_id and "paused" in str(caught.value)
    await loop.resume(paused.run_id, decisions={paused.pending[0].call_id: Approve()})
    assert (await loop.run("second", session_id="s1")).paused  # the next turn may go on


class PlainTool:
    """A tool written against the `Tool` contract only: no approval or external flags at all."""

    name = "plain"
    spec = ToolSpec("plain", "a plain tool", {"type": "object"})
    timeout = None
    exclusive = False

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        return {}

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        return "plain result"


async def test_a_tool_without_approval_flags_runs_under_a_policy(any_store: RunStore) -> None:
    policy = ApprovalPolicy(needs_approval=lambda check: None)  # leave it to the tool
    model = ScriptedModel([call("plain"), "done"])
    loop = ReActLoop(model, tools=[PlainTool()], store=any_store, approval=policy)
    result = await loop.run("go")
    assert result.output == "done" and not result.pending


async def test_the_policy_sees_the_runs_context_and_the_tools_flag(any_store: RunStore) -> None:
    seen: list[tuple[str | None, bool]] = []

    def policy(check: ApprovalCheck) -> None:
        seen.append((check.context.user_id, check.tool_requires_approval))

    pay, look, _ = pay_tools()
    model = ScriptedModel([[call("pay", amount=1), call("look", q="x")], "done"])
    approval = ApprovalPolicy(needs_approval=policy)
    loop = ReActLoop(model, tools=[pay, look], store=any_store, approval=approval)
    await loop.run("go", user_id="ann")
    assert seen == [("ann", True), ("ann", False)]


async def test_held_calls_are_named_in_the_results_and_the_stop_detail(
    any_store: RunStore,
) -> None:
    pay, _, delete = pay_tools()
    browser = FakeTool("browser", external=True)
    batch = [call("pay", amount=1), call("delete", id=2), call("browser", url="a")]
    loop = ReActLoop(ScriptedModel([batch, "done"]), tools=[pay, delete, browser], store=any_store)
    paused = await loop.run("go")
    first, second, third = paused.pending
    assert f"pay ({first.call_id})" in paused.stop_detail and "3 call(s)" in paused.stop_detail
    assert f"delete ({second.call_id}), browser ({third.call_id})" in paused.stop_detail
    assert "outside this process" in third.reason
    decisions: dict[str, DecisionLike] = {
        first.call_id: Deny("no"),
        second.call_id: Approve(),
        third.call_id: ExternalFailure("tab closed"),
    }
    result = await loop.resume(paused.run_id, decisions=decisions)
    final = {r.call_id: r for r in result.steps[0].tool_results}
    for held in paused.pending:
        assert final[held.call_id].name == held.tool
    for failed in (first.call_id, third.call_id):
        assert final[failed].is_error is True and final[failed].error_code is ErrorCode.TOOL_ERROR


async def test_an_always_denial_covers_the_tools_later_calls(any_store: RunStore) -> None:
    pay = pay_tools()[0]
    model = ScriptedModel([call("pay", amount=1), call("pay", amount=2), "done"])
    loop = ReActLoop(model, tools=[pay], store=any_store)
    paused = await loop.run("go")
    decisions = {paused.pending[0].call_id: Deny("never", always=True)}
    result = await loop.resume(paused.run_id, decisions=decisions)
    later = result.steps[1].tool_results[0]
    assert result.output == "done" and pay.calls == []
    assert later.is_error and later.error_code is ErrorCode.TOOL_ERROR and "never" in later.content
    assert later.name == "pay"


async def test_a_held_call_stays_held_as_it_was_until_decided(any_store: RunStore) -> None:
    pay, _, delete = pay_tools()
    wall = FakeClock(1_000.0)
    policy = ApprovalPolicy(expire_after=60, wall_clock=wall)
    model = ScriptedModel([[call("pay", amount=5), call("delete", id=1)], "done"])
    loop = ReActLoop(model, tools=[pay, delete], store=any_store, approval=policy)
    paused = await loop.run("go")
    wall.advance(30)
    relaxed = FakeTool("delete")  # the tool no longer asks for approval: still held until decided
    again = await ReActLoop(model, tools=[pay, relaxed], store=any_store, approval=policy).resume(
        paused.run_id, decisions={paused.pending[0].call_id: Approve()}
    )
    assert again.pending == paused.pending[1:] and again.pending[0].expires_at == 1_060.0
    assert relaxed.calls == [] and delete.calls == []


async def test_an_external_call_has_no_deadline_and_empty_arguments_are_an_empty_object(
    any_store: RunStore,
) -> None:
    browser = FakeTool("browser", external=True)
    pay = pay_tools()[0]
    policy = ApprovalPolicy(expire_after=60, wall_clock=FakeClock(0.0))
    batch = [ToolCall("browser", "", "c1"), ToolCall("pay", "", "c2")]
    loop = ReActLoop(ScriptedModel([batch]), tools=[browser, pay], store=any_store, approval=policy)
    paused = await loop.run("go")
    assert [(p.arguments, p.expires_at) for p in paused.pending] == [({}, None), ({}, 60.0)]


class StopOnLook(Hook):
    """Stops the run when the model calls `look`."""

    async def before_tool_call(self, run: Run, call: ToolCall) -> StopRun | None:
        return StopRun("enough") if call.name == "look" else None


async def test_a_run_stopping_in_a_step_refuses_its_held_calls(any_store: RunStore) -> None:
    pay, look, _ = pay_tools()
    browser = FakeTool("browser", external=True)
    batch = [call("pay", amount=1), call("browser", url="a"), call("look", q="x")]
    model = ScriptedModel([batch, "done"])
    loop = ReActLoop(model, tools=[pay, browser, look], store=any_store, hooks=[StopOnLook()])
    result = await loop.run("go")
    assert result.stop_reason is StopReason.HOOK_STOPPED and result.pending == ()
    refused = results(result)
    assert all(m.is_error and "stopping" in m.text for m in refused.values())
    assert [m.name for m in refused.values()] == ["pay", "browser", "look"] and pay.calls == []


async def test_a_run_stopping_on_resume_refuses_the_calls_still_held(any_store: RunStore) -> None:
    pay, look, _ = pay_tools()
    browser = FakeTool("browser", external=True)
    batch = [call("pay", amount=1), call("browser", url="a"), call("look", q="x")]
    loop = ReActLoop(ScriptedModel([batch]), tools=[pay, browser, look], store=any_store)
    paused = await loop.run("go")
    stopping = ReActLoop(
        ScriptedModel([]), tools=[pay, browser, look], store=any_store, hooks=[StopOnLook()]
    )
    result = await stopping.resume(paused.run_id)  # no decisions: both calls are still held
    assert result.stop_reason is StopReason.HOOK_STOPPED and result.pending == ()
    by_id = results(result)
    assert [by_id[p.call_id].name for p in paused.pending] == ["pay", "browser"]
    assert all("stopping" in by_id[p.call_id].text for p in paused.pending)
    assert pay.calls == [] and browser.calls == []
    looked = [m for m in by_id.values() if m.name == "look"]
    assert looked[0].text == "seen" and look.calls == [{"q": "x"}]  # its saved result is kept


class Clamp(Hook):
    """Caps `pay`'s amount at `limit` (a limit that may change between a pause and a resume)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    async def before_tool_call(self, run: Run, call: ToolCall) -> Override[ToolCall] | None:
        if call.name != "pay":
            return None
        amount = min(orjson.loads(call.arguments)["amount"], self.limit)
        return Override(call.with_arguments({"amount": amount}))


@pytest.mark.parametrize("decision", [Approve(), Edit({"amount": 40})], ids=["approve", "edit"])
async def test_a_decision_binds_to_the_arguments_it_was_given_for(
    any_store: RunStore, decision: Decision
) -> None:
    pay, _, _ = pay_tools()
    clamp = Clamp(limit=60)
    model = ScriptedModel([[call("pay", amount=80)], "done"])
    loop = ReActLoop(model, tools=[pay], store=any_store, hooks=[clamp])
    paused = await loop.run("go")
    [held] = paused.pending
    assert held.arguments == {"amount": 60}  # what a person sees: the call after the hooks
    clamp.limit = 30  # the hook now gives other arguments than those shown
    again = await loop.resume(paused.run_id, decisions={held.call_id: decision})
    assert again.paused and pay.calls == [], "a decision never covers arguments not shown"
    [changed] = again.pending
    assert (changed.call_id, changed.arguments) == (held.call_id, {"amount": 30})
    assert "changed" in changed.reason
    assert (await any_store.load(paused.run_id)).pending == again.pending
    done = await loop.resume(paused.run_id, decisions={held.call_id: Approve()})
    assert done.output == "done" and pay.calls == [{"amount": 30}]


async def test_a_decision_runs_the_call_when_the_hooks_give_the_same_arguments(
    any_store: RunStore,
) -> None:
    pay, _, _ = pay_tools()
    model = ScriptedModel([[call("pay", amount=80)], "done"])
    loop = ReActLoop(model, tools=[pay], store=any_store, hooks=[Clamp(limit=60)])
    paused = await loop.run("go")
    [held] = paused.pending
    done = await loop.resume(paused.run_id, decisions={held.call_id: Edit({"amount": 50})})
    assert done.output == "done" and pay.calls == [{"amount": 50}]

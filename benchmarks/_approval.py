"""(j) Human in the loop: the per-step cost of the approval gate when no call needs approval, on a
loop with a store and on a storeless one (whose journal is then kept in memory so that a paused
run can be handed out as a token), and the time of one pause plus its resume.

Each figure's second column is the same run without the capability.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks._fakes import Script, echo
from benchmarks._figures import Figure
from benchmarks._measure import median, per_step_us
from benchmarks._rig import Rig
from benchmarks._scenarios import Sizes, _each, _measure
from reactloop import ApprovalPolicy, Approve, ReActLoop
from reactloop._durable._stores import MemoryStore
from reactloop.approval import ApprovalCheck, ApprovalOptions
from reactloop.testing import FakeTool, ScriptedModel, call

KEY = "benchmark-key-0123456789abcdefghijkl"


def no_approval(check: ApprovalCheck) -> bool:
    """A policy that looks at every call and holds none."""
    return False


POLICY = ApprovalPolicy(needs_approval=no_approval)


def _rig(steps: int, *, store: bool, gate: bool) -> Rig:
    rig = Rig.build(lambda: Script(steps), echo)
    options: dict[str, Any] = {"max_iterations": steps + 1}
    if store:
        options["store"] = MemoryStore()
    if gate:
        options["approval"] = ApprovalOptions(policy=POLICY, state_key=KEY)
    loop = ReActLoop(rig.loop.config.model, tools=rig.loop.config.tool_list, **options)
    return Rig(loop, rig.ours, rig.theirs, rig.model, rig.tools, rig.specs)


async def _pause_and_resume_us(rounds: int) -> float:
    """Mean microseconds of a run that pauses on one call, plus its resume with an approval."""
    pay = FakeTool("pay", requires_approval=True)
    started = time.perf_counter()
    for _ in range(rounds):
        loop = ReActLoop(ScriptedModel([call("pay"), "done"]), tools=[pay], store=MemoryStore())
        paused = await loop.run("go")
        await loop.resume(paused.run_id, decisions={paused.pending[0].call_id: Approve()})
    return (time.perf_counter() - started) / rounds * 1e6


async def _plain_two_steps_us(rounds: int) -> float:
    """The same two model calls and one tool call, nothing held, for comparison."""
    pay = FakeTool("pay")
    started = time.perf_counter()
    for _ in range(rounds):
        loop = ReActLoop(ScriptedModel([call("pay"), "done"]), tools=[pay], store=MemoryStore())
        await loop.run("go")
    return (time.perf_counter() - started) / rounds * 1e6


async def approval_costs(sizes: Sizes) -> list[Figure]:
    """(j) `history_steps`-step runs with and without the gate; pause + resume round trips."""
    steps = sizes.history_steps
    kinds = {"plain": (False, False), "gate": (False, True), "store": (True, False),
             "store+gate": (True, True)}  # fmt: skip
    contenders = {
        name: _rig(steps, store=store, gate=gate).stamped()["reactloop"]
        for name, (store, gate) in kinds.items()
    }
    cost = _each(await _measure(sizes, contenders), per_step_us)
    figures = [
        Figure("j", "per step, gate on a storeless loop (journal in memory)", "us",
               median(cost["gate"]), median(cost["plain"])),
        Figure("j", "per step, gate on a loop with a MemoryStore", "us",
               median(cost["store+gate"]), median(cost["store"])),
    ]  # fmt: skip
    rounds = max(sizes.repeats * 4, 8)
    paused = [await _pause_and_resume_us(rounds) for _ in range(sizes.repeats)]
    plain = [await _plain_two_steps_us(rounds) for _ in range(sizes.repeats)]
    figures.append(Figure("j", "run that pauses + its resume (MemoryStore)", "us",
                          median(paused), median(plain)))  # fmt: skip
    return figures

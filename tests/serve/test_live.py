"""A LiveRun holds one run's events for any number of followers: each gets them in order, from
the start or after the last one it saw, and waits for new ones until the run is done."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from reactloop._core import Event, StepStarted, TextStreamed
from reactloop._serve import LiveRun, RunHost
from tests.serve.hosting import HANG, Gate, loop_of, read_all, turn, waiting_model

pytestmark = pytest.mark.anyio

EVENTS: list[Event] = [StepStarted(1), TextStreamed("a"), TextStreamed("b"), TextStreamed("c")]


async def test_a_follower_gets_each_event_in_order_as_it_is_appended() -> None:
    live = LiveRun("r1")
    seen: list[tuple[int, Event]] = []
    waiting = anyio.Event()

    async def follower() -> None:
        waiting.set()
        seen.extend([item async for item in live.follow()])

    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(follower)
            await waiting.wait()
            for event in EVENTS:
                live.append(event)
                await anyio.lowlevel.checkpoint()  # the follower may catch up or not
            live.end(0.0)
    assert seen == list(enumerate(EVENTS, start=1))


async def test_a_late_follower_gets_every_event_from_the_start() -> None:
    live = LiveRun("r1")
    for event in EVENTS:
        live.append(event)
    live.end(0.0)
    assert await read_all(live) == EVENTS


async def test_a_follower_after_a_seq_gets_only_the_events_after_it() -> None:
    live = LiveRun("r1")
    for event in EVENTS:
        live.append(event)
    live.end(0.0)
    with anyio.fail_after(HANG):
        got = [item async for item in live.follow(after=2)]
    assert got == [(3, EVENTS[2]), (4, EVENTS[3])]


async def test_a_waiting_follower_leaves_when_the_run_ends_without_more_events() -> None:
    live = LiveRun("r1")
    live.append(EVENTS[0])
    got: list[tuple[int, Event]] = []

    async def follower() -> None:
        got.extend([item async for item in live.follow(after=1)])

    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(follower)
            await anyio.lowlevel.checkpoint()
            live.end(0.0)
    assert got == [] and live.done


async def test_each_live_run_has_its_own_epoch() -> None:
    assert LiveRun("r1").epoch != LiveRun("r1").epoch


async def test_followers_of_a_hosted_run_joining_early_and_late_see_the_same_events() -> None:
    gate = Gate()
    host = RunHost(loop_of(waiting_model(), gate.tool()))
    async with host.running():
        live = await host.submit(turn("wait"), "ann", {})
        with anyio.fail_after(HANG):
            await gate.entered.wait()
        early: list[Event] = []

        async def follow_early() -> None:
            early.extend(await read_all(live))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(follow_early)
            gate.opened.set()
        late = await read_all(live)
    assert early == late == live.events
    assert "".join(e.text for e in late if isinstance(e, TextStreamed)) == "Waiting.Done waiting."

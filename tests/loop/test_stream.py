"""`stream()`: leaving the block early is clean, and the stream gives the run's (partial) result."""

from __future__ import annotations

import contextlib

import anyio
import pytest
from anyio.abc import TaskGroup

import reactloop._loop._handle
from reactloop import (
    AssistantMessage,
    Hook,
    Limits,
    ReActLoop,
    RunResult,
    StopReason,
    ToolMessage,
    tool,
)
from reactloop._errors import NoResultError
from reactloop._loop._handle import STREAM_BUFFER, RunStream
from reactloop.events import RunFinished, TextStreamed, ToolCallStarted
from reactloop.phases import Run
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio

WORDS = 3 * STREAM_BUFFER
"""Words of the long answer: each is one text delta, so the run has far more events than fit."""


class AfterRun(Hook):
    """Records what `after_run` is told."""

    def __init__(self) -> None:
        self.results: list[RunResult] = []

    async def after_run(self, run: Run, result: RunResult) -> None:
        self.results.append(result)


class MyError(Exception):
    """A consumer's own error."""


class Abort(BaseException):
    """An exception that is not an `Exception`, like KeyboardInterrupt."""


def long_answer_loop(*hooks: Hook) -> ReActLoop:
    """A tool step, then a long streamed answer: many more events than the stream buffer holds."""
    model = ScriptedModel([reply("Looking.", call("look")), reply("word " * WORDS)])
    return ReActLoop(model, tools=[FakeTool("look")], hooks=list(hooks))


async def slowly() -> None:
    """A slow consumer: the run gets well ahead of it and fills the buffer."""
    for _ in range(3):
        await anyio.lowlevel.checkpoint()


class SlowConsumer:
    """Reads events slowly; at the `leave_at`-th it breaks out, or raises `error` if given."""

    def __init__(self, leave_at: int, error: BaseException | None = None) -> None:
        self.leave_at, self.error = leave_at, error
        self.stream: RunStream | None = None

    async def read(self, loop: ReActLoop) -> None:
        async with loop.stream("go") as events:
            self.stream, seen = events, 0
            async for _ in events:
                seen += 1
                await slowly()
                if seen == self.leave_at:
                    if self.error is not None:
                        raise self.error
                    break

    async def result(self) -> RunResult:
        assert self.stream is not None
        return await self.stream.result()


def assert_pairs_complete(result: RunResult) -> None:
    calls = [c.id for m in result.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answered = [m.call_id for m in result.messages if isinstance(m, ToolMessage)]
    assert sorted(calls) == sorted(answered)


LEAVE_AT = [1, 2, 5, 20, STREAM_BUFFER - 1, STREAM_BUFFER, STREAM_BUFFER + 1, 2 * STREAM_BUFFER]


@pytest.mark.parametrize("leave_at", LEAVE_AT)
async def test_breaking_out_is_clean_wherever_the_consumer_is(leave_at: int) -> None:
    with anyio.fail_after(10):
        await SlowConsumer(leave_at).read(long_answer_loop())


@pytest.mark.parametrize("leave_at", LEAVE_AT)
async def test_an_error_inside_the_block_comes_out_as_itself(leave_at: int) -> None:
    error = MyError("consumer failed")
    error.__cause__ = cause = ValueError("the consumer's cause")
    with pytest.raises(MyError) as raised:
        await SlowConsumer(leave_at, error).read(long_answer_loop())
    assert raised.value is error and type(raised.value) is MyError
    assert raised.value.__cause__ is cause


async def test_a_group_raised_inside_the_block_is_not_unwrapped() -> None:
    error = ExceptionGroup("the consumer's own group", [MyError()])
    with pytest.raises(ExceptionGroup) as raised:
        await SlowConsumer(3, error).read(long_answer_loop())
    assert raised.value is error


@pytest.mark.parametrize("error", [None, MyError("consumer failed")])
@pytest.mark.parametrize("leave_at", LEAVE_AT)
async def test_leaving_early_gives_a_partial_result_told_to_after_run(
    leave_at: int, error: MyError | None
) -> None:
    hook, consumer = AfterRun(), SlowConsumer(leave_at, error)
    with contextlib.suppress(MyError):
        await consumer.read(long_answer_loop(hook))
    result = await consumer.result()
    assert result.stop_reason is StopReason.STREAM_CLOSED
    assert hook.results == [result]
    assert_pairs_complete(result)


async def test_returning_from_the_block_ends_the_run_with_stream_closed() -> None:
    async def stream_left_at_the_first_delta(loop: ReActLoop) -> RunStream:
        async with loop.stream("go") as events:
            async for event in events:
                if isinstance(event, TextStreamed):
                    return events
        raise AssertionError("no text delta")

    hook = AfterRun()
    events = await stream_left_at_the_first_delta(long_answer_loop(hook))
    result = await events.result()
    assert result.stop_reason is StopReason.STREAM_CLOSED and hook.results == [result]


async def test_a_partial_result_keeps_completed_steps_and_closes_open_calls() -> None:
    blocker = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([reply("Looking.", call("look")), reply("Waiting.", call("block"))])
    loop = ReActLoop(model, tools=[FakeTool("look"), blocker], limits=Limits(tool_timeout=None))
    with anyio.fail_after(5):
        async with loop.stream("go") as events:
            async for event in events:
                if isinstance(event, ToolCallStarted) and event.call.name == "block":
                    break
    result = await events.result()
    assert result.stop_reason is StopReason.STREAM_CLOSED and result.stop_detail
    assert [s.index for s in result.steps] == [1, 2]
    assert result.steps[0].tool_results[0].content == "ok"
    closed = result.messages[-1]
    assert isinstance(closed, ToolMessage) and closed.is_error and "stream_closed" in closed.text
    assert blocker.running == 0 and result.output == "Waiting."
    assert_pairs_complete(result)


async def test_result_inside_the_block_waits_for_the_end_and_discards_unread_events() -> None:
    async with long_answer_loop().stream("go") as events:
        async for _ in events:
            result = await events.result()
            break
        assert [event async for event in events] == []
    assert result.stop_reason is StopReason.COMPLETED and result.output == "word " * WORDS
    assert await events.result() is result


async def test_result_after_a_complete_iteration_is_the_full_result() -> None:
    async with long_answer_loop().stream("go") as events:
        seen = [event async for event in events]
    finished = seen[-1]
    assert isinstance(finished, RunFinished)
    assert await events.result() is finished.result
    assert finished.result.stop_reason is StopReason.COMPLETED


async def test_leaving_after_the_run_ended_keeps_the_full_result() -> None:
    hook = AfterRun()
    async with ReActLoop(ScriptedModel(["hi"]), hooks=[hook]).stream("go") as events:
        async for event in events:
            if isinstance(event, RunFinished):
                break
    assert (await events.result()).stop_reason is StopReason.COMPLETED
    assert hook.results == [await events.result()]


async def test_a_base_exception_inside_the_block_cancels_the_run_and_propagates() -> None:
    hook, consumer = AfterRun(), SlowConsumer(3, Abort())
    with pytest.raises(Abort) as raised:
        await consumer.read(long_answer_loop(hook))
    assert type(raised.value) is Abort and hook.results == []
    with pytest.raises(NoResultError, match="has no result"):
        await consumer.result()


async def test_cancelling_the_surrounding_scope_is_never_swallowed() -> None:
    hook = AfterRun()
    reached_after = False
    with anyio.CancelScope() as outer:
        async with long_answer_loop(hook).stream("go") as events:
            async for _ in events:
                await slowly()
                outer.cancel()
        reached_after = True
    assert outer.cancelled_caught and not reached_after and hook.results == []


async def test_a_cancellation_during_the_exit_is_not_swallowed() -> None:
    """The outer scope is cancelled while the run finishes (shielded) after the consumer left."""

    class CancelOuter(Hook):
        async def after_run(self, run: Run, result: RunResult) -> None:
            outer.cancel()
            await anyio.lowlevel.checkpoint()
            told.append(result)

    told: list[RunResult] = []
    reached_after = False
    with anyio.CancelScope() as outer:
        async with long_answer_loop(CancelOuter()).stream("go") as events:
            async for _ in events:
                break
        reached_after = True
    assert outer.cancelled_caught and not reached_after
    assert told[0].stop_reason is StopReason.STREAM_CLOSED


async def test_a_hanging_after_run_hook_cannot_hang_the_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Hangs(Hook):
        async def after_run(self, run: Run, result: RunResult) -> None:
            await anyio.sleep_forever()

    monkeypatch.setattr(reactloop._loop._handle, "CLOSE_GRACE", 0.0)
    with anyio.fail_after(5):
        async with long_answer_loop(Hangs()).stream("go") as events:
            async for _ in events:
                break
    assert (await events.result()).stop_reason is StopReason.STREAM_CLOSED


async def test_leaving_before_reading_anything_ends_the_run_with_stream_closed() -> None:
    hook = AfterRun()
    async with long_answer_loop(hook).stream("go") as events:
        pass
    assert (await events.result()).stop_reason is StopReason.STREAM_CLOSED
    assert hook.results == [await events.result()]


@tool
async def abort() -> str:
    """Raises `Abort`, which no tool wrapper catches: the run fails without a result."""
    raise Abort


async def result_or_error(events: RunStream, errors: list[NoResultError]) -> None:
    try:
        await events.result()
    except NoResultError as error:
        errors.append(error)


async def read_with_a_waiter(
    loop: ReActLoop, tasks: TaskGroup, errors: list[NoResultError]
) -> None:
    async with loop.stream("go") as events:
        tasks.start_soon(result_or_error, events, errors)
        async for _ in events:
            await slowly()


async def test_a_task_awaiting_the_result_of_a_failed_run_is_told_not_left_hanging() -> None:
    errors: list[NoResultError] = []
    loop = ReActLoop(ScriptedModel([reply("", call("abort"))]), tools=[abort])
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            with pytest.raises(Abort):
                await read_with_a_waiter(loop, tasks, errors)
    assert len(errors) == 1


@pytest.mark.parametrize("leave_at", [1, 3])
async def test_iterating_after_the_block_ends_at_once(leave_at: int) -> None:
    consumer = SlowConsumer(leave_at)
    await consumer.read(long_answer_loop())
    assert consumer.stream is not None
    assert [event async for event in consumer.stream] == []

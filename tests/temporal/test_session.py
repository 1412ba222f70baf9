"""A session on Temporal: its turns run one at a time, in the order they were started, each
seeing the transcript of the turns before it (one session workflow queues them)."""

from __future__ import annotations

import uuid

import anyio
import pytest
from temporalio.client import Client

from reactloop import ReActLoop, RunContext
from reactloop._temporal._contracts import RunInfo, session_workflow_id
from reactloop.messages import AssistantMessage, UserMessage
from reactloop.temporal import TemporalLoop, temporal_worker
from reactloop.testing import ScriptedModel, call
from reactloop.tools import tool
from tests.temporal.flow import WORKFLOWS
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio


async def test_a_sessions_second_turn_runs_after_the_first_and_sees_its_transcript(
    temporal_dev: Client, task_queue: str
) -> None:
    model = ScriptedModel(["Hello, Ada.", "Your name is Ada."])
    chat = TemporalLoop(ReActLoop(model), name="chat")
    session = uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[chat]):
            first = await chat.start(
                temporal_dev, "I am Ada.", session_id=session, task_queue=task_queue
            )
            second = await chat.start(
                temporal_dev, "Who am I?", session_id=session, task_queue=task_queue
            )
            answer = await second.result()
            greeting = await first.result()
    assert (greeting.output, answer.output) == ("Hello, Ada.", "Your name is Ada.")
    earlier = [UserMessage("I am Ada."), AssistantMessage("Hello, Ada.")]
    assert list(model.requests[1].messages[:2]) == earlier
    assert list(answer.messages[:2]) == earlier
    await assert_replays(temporal_dev, session_workflow_id("chat", session), WORKFLOWS)
    await assert_replays(temporal_dev, second.workflow_id, WORKFLOWS)


async def test_a_sessions_tools_and_deps_factory_see_its_session_and_user(
    temporal_dev: Client, task_queue: str
) -> None:
    seen: list[tuple[str | None, str | None, str]] = []
    infos: list[RunInfo] = []

    @tool
    async def whoami(ctx: RunContext[str]) -> str:
        """Say who asks, in which session."""
        seen.append((ctx.session_id, ctx.user_id, ctx.deps))
        return "you"

    def deps(info: RunInfo) -> str:
        infos.append(info)
        return f"deps of {info.run_id}"

    model = ScriptedModel([call("whoami"), "You are Ada."])
    chat = TemporalLoop(ReActLoop(model, tools=[whoami]), name="chat", deps_factory=deps)
    session, run_id = uuid.uuid4().hex, uuid.uuid4().hex
    with anyio.fail_after(30):
        async with temporal_worker(temporal_dev, task_queue=task_queue, loops=[chat]):
            run = await chat.start(
                temporal_dev,
                "Who am I?",
                run_id=run_id,
                session_id=session,
                user_id="ada",
                task_queue=task_queue,
            )
            result = await run.result()
    assert result.output == "You are Ada."
    assert seen == [(session, "ada", f"deps of {run_id}")]
    assert infos == [RunInfo("chat", run_id, "ada", session)]
    await assert_replays(temporal_dev, session_workflow_id("chat", session), WORKFLOWS)
    await assert_replays(temporal_dev, run.workflow_id, WORKFLOWS)

"""The loop a workflow drives (`workflow_loop`): the user's loop, unmodified, with its model and
tools as activities, run end to end on the real dev server. A run ends as the same run does
locally; a provider's refusal reaches the loop's retry policy; a call lost with its worker gets
the interrupted result unless its tool is idempotent; a real HTTP model answers through its
activity. Each run ends by replaying its history. Asyncio only (see conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from attrs import frozen
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from reactloop._core import (
    INTERRUPTED_RESULT,
    ModelDelta,
    ModelRequest,
    RunContext,
    ToolCall,
    ToolMessage,
    UserMessage,
    deltas_of,
)
from reactloop._errors import AuthenticationError, RateLimitedError
from reactloop._loop import ReActLoop
from reactloop._policies import RetryPolicy
from reactloop._providers import OpenAIModel
from reactloop._temporal._activities import DepsFactory, loop_activities
from reactloop._temporal._options import ActivityOptions, ToolActivity
from reactloop._temporal._payloads import (
    decode,
    decode_deltas,
    decode_messages,
    encode,
    encode_deltas,
    encode_messages,
)
from reactloop._temporal._proxies import workflow_loop
from reactloop._tools._tool import tool
from reactloop.testing import ScriptedModel, reply
from tests.providers.render import openai_json
from tests.providers.wire_server import WireServer, json_reply
from tests.temporal.servers import assert_replays

pytestmark = pytest.mark.anyio

LOOPS: dict[str, tuple[ReActLoop[Any], ActivityOptions]] = {}
"""The loops the test workflows drive, by name (each test registers its own)."""


@frozen
class Ended:
    """What a test workflow returns of its run."""

    output: str | None
    stop_reason: str
    error: str | None
    messages: bytes


@workflow.defn(name="reactloop-tests.proxied-run")
class ProxiedRun:
    """Drives the registered loop's workflow clone to its end."""

    @workflow.run
    async def run(self, name: str, text: str) -> bytes:
        loop, options = LOOPS[name]
        result = await workflow_loop(loop, name, options).run(text, run_id="r-1")
        error = None if result.error is None else f"{type(result.error).__name__}: {result.error}"
        output = None if result.output is None else str(result.output)
        ended = Ended(output, result.stop_reason.value, error, encode_messages(result.messages))
        return encode(ended)


@workflow.defn(name="reactloop-tests.proxied-stream")
class ProxiedStream:
    """Asks the registered loop's workflow model for a stream; returns the deltas it gave."""

    @workflow.run
    async def run(self, name: str, request: bytes) -> bytes:
        loop, options = LOOPS[name]
        model = workflow_loop(loop, name, options).config.model
        deltas: list[ModelDelta] = []

        async def collect(delta: ModelDelta) -> None:
            deltas.append(delta)

        await model.stream(decode(request, ModelRequest), collect)
        return encode_deltas(deltas)


WORKFLOWS = [ProxiedRun, ProxiedStream]


@asynccontextmanager
async def _worker(
    client: Client,
    queue: str,
    loop: ReActLoop[Any],
    options: ActivityOptions | None = None,
    deps_factory: DepsFactory | None = None,
) -> AsyncIterator[str]:
    """A worker serving `loop` under a fresh name (yielded) on `queue`."""
    name = f"loop-{uuid.uuid4().hex[:8]}"
    chosen = options or ActivityOptions()
    LOOPS[name] = (loop, chosen)
    activities = loop_activities(loop, name, deps_factory, chosen)
    try:
        async with Worker(
            client,
            task_queue=queue,
            workflows=WORKFLOWS,
            activities=activities,
            workflow_runner=UnsandboxedWorkflowRunner(),
        ):
            yield name
    finally:
        del LOOPS[name]


async def _run(client: Client, queue: str, name: str, text: str) -> Ended:
    workflow_id = f"proxied-{uuid.uuid4().hex}"
    data = await client.execute_workflow(
        ProxiedRun.run, args=[name, text], id=workflow_id, task_queue=queue
    )
    await assert_replays(client, workflow_id, WORKFLOWS)
    return decode(data, Ended)


@tool
def forecast(city: str) -> dict[str, Any]:
    """The forecast."""
    return {"city": city, "days": [{"high": 21.5, "sky": "sunny"}]}


@tool
def broken(city: str) -> str:
    """Always fails."""
    raise KeyError(city)


def _script() -> list[Any]:
    calls = [
        ToolCall("forecast", '{"city": "Rome"}', "call_1"),
        ToolCall("broken", '{"city": "Oslo"}', "call_2"),
    ]
    return [reply("Checking.", *calls), "Sunny in Rome; Oslo failed."]


async def test_a_run_on_temporal_ends_as_the_same_run_does_locally(
    temporal_dev: Client, task_queue: str
) -> None:
    remote = ReActLoop(ScriptedModel(_script()), tools=[forecast, broken])
    async with _worker(temporal_dev, task_queue, remote) as name:
        ended = await _run(temporal_dev, task_queue, name, "Weather in Rome and Oslo?")
    local = await ReActLoop(ScriptedModel(_script()), tools=[forecast, broken]).run(
        "Weather in Rome and Oslo?"
    )
    assert (ended.output, ended.stop_reason, ended.error) == (
        local.output,
        local.stop_reason.value,
        None,
    )
    assert decode_messages(ended.messages) == local.messages
    results = [m for m in local.messages if isinstance(m, ToolMessage)]
    assert [m.is_error for m in results] == [False, True]
    assert results[1].text == "tool 'broken' raised KeyError: 'Oslo'"


async def test_a_providers_refusal_reaches_the_loops_retry_policy(
    temporal_dev: Client, task_queue: str
) -> None:
    model = ScriptedModel([RateLimitedError("slow down", retry_after=0.01), "Sunny"])
    loop = ReActLoop(model, retry=RetryPolicy(max_retries=1, initial_delay=0.01))
    async with _worker(temporal_dev, task_queue, loop) as name:
        ended = await _run(temporal_dev, task_queue, name, "Weather?")
    assert (ended.output, ended.error) == ("Sunny", None)
    assert model.position == 2, "the loop retried the refused call once"


async def test_a_refusal_the_loop_does_not_retry_ends_the_run_with_that_error(
    temporal_dev: Client, task_queue: str
) -> None:
    model = ScriptedModel([AuthenticationError("bad key", status=401, provider="openai")])
    async with _worker(temporal_dev, task_queue, ReActLoop(model)) as name:
        ended = await _run(temporal_dev, task_queue, name, "Weather?")
    assert (ended.stop_reason, ended.error) == ("error", "AuthenticationError: bad key")
    assert model.position == 1, "Temporal did not retry the provider's refusal"


def _lost_call_loop(idempotent: bool, starts: list[str], release: anyio.Event) -> ReActLoop[Any]:
    """A loop whose `charge` hangs on its first start (its worker is as good as lost)."""

    @tool(idempotent=idempotent)
    async def charge(amount: int, ctx: RunContext[None]) -> str:
        """Charge an amount."""
        starts.append(str(ctx.call_id))
        if len(starts) == 1:
            await release.wait()
        return f"charged {amount}"

    script: list[ToolCall | str] = [ToolCall("charge", '{"amount": 5}', "call_1"), "Done."]
    return ReActLoop(ScriptedModel(script), tools=[charge])


def _charge_result(ended: Ended) -> ToolMessage:
    [result] = [m for m in decode_messages(ended.messages) if isinstance(m, ToolMessage)]
    return result


LOST_QUICKLY = ActivityOptions(default_tool=ToolActivity(start_to_close=1.0, heartbeat=1.0))


async def test_a_call_lost_with_its_worker_gets_the_interrupted_result_and_never_runs_again(
    temporal_dev: Client, task_queue: str
) -> None:
    starts: list[str] = []
    release = anyio.Event()
    loop = _lost_call_loop(False, starts, release)
    async with _worker(temporal_dev, task_queue, loop, LOST_QUICKLY) as name:
        ended = await _run(temporal_dev, task_queue, name, "Charge 5")
        release.set()
    result = _charge_result(ended)
    assert (result.text, result.is_error, ended.output) == (INTERRUPTED_RESULT, True, "Done.")
    assert starts == ["call_1"], "the call started once"


async def test_an_idempotent_call_lost_with_its_worker_runs_again(
    temporal_dev: Client, task_queue: str
) -> None:
    starts: list[str] = []
    release = anyio.Event()
    loop = _lost_call_loop(True, starts, release)
    async with _worker(temporal_dev, task_queue, loop, LOST_QUICKLY) as name:
        ended = await _run(temporal_dev, task_queue, name, "Charge 5")
        release.set()
    result = _charge_result(ended)
    assert (result.text, result.is_error) == ("charged 5", False)
    assert starts == ["call_1", "call_1"], "the same call started again"


async def test_a_streamed_answer_replays_the_workers_deltas_in_the_workflow(
    temporal_dev: Client, task_queue: str
) -> None:
    answer = reply("Sunny in Rome today", ToolCall("forecast", '{"city": "Rome"}', "call_1"))
    loop = ReActLoop(ScriptedModel([answer]), tools=[forecast])
    request = ModelRequest((UserMessage("Weather?"),))
    async with _worker(temporal_dev, task_queue, loop) as name:
        workflow_id = f"proxied-{uuid.uuid4().hex}"
        data = await temporal_dev.execute_workflow(
            ProxiedStream.run,
            args=[name, encode(request)],
            id=workflow_id,
            task_queue=task_queue,
        )
        await assert_replays(temporal_dev, workflow_id, WORKFLOWS)
    assert decode_deltas(data) == deltas_of(answer)


async def test_a_real_http_model_answers_through_its_activity(
    temporal_dev: Client, task_queue: str
) -> None:
    call = ToolCall("forecast", '{"city": "Rome"}', "call_abc")
    async with WireServer.running() as server:
        server.reply_with(json_reply(openai_json(calls=[call])), json_reply(openai_json("Sunny")))
        async with OpenAIModel("gpt-4o", api_key="sk-test", base_url=f"{server.url}/v1") as model:
            loop = ReActLoop(model, tools=[forecast])
            async with _worker(temporal_dev, task_queue, loop) as name:
                ended = await _run(temporal_dev, task_queue, name, "Weather in Rome?")
        sent = [request.json() for request in server.requests]
    assert (ended.output, ended.error) == ("Sunny", None)
    assert len(sent) == 2, "one HTTP request per model call: none repeated"
    tool_turn = sent[1]["messages"][-1]
    assert (tool_turn["role"], tool_turn["tool_call_id"]) == ("tool", "call_abc")
    assert "21.5" in tool_turn["content"]


async def test_a_tools_timeout_ends_its_call_in_the_workflow_as_it_does_locally(
    temporal_dev: Client, task_queue: str
) -> None:
    release = anyio.Event()
    cancelled = anyio.Event()

    @tool(timeout=0.5)
    async def stuck() -> str:
        """Never answers in time."""
        try:
            await release.wait()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return "late"

    def loop() -> ReActLoop[Any]:
        return ReActLoop(
            ScriptedModel([ToolCall("stuck", "{}", "call_1"), "Gave up."]), tools=[stuck]
        )

    options = ActivityOptions(default_tool=ToolActivity(heartbeat=0.3))
    async with _worker(temporal_dev, task_queue, loop(), options) as name:
        ended = await _run(temporal_dev, task_queue, name, "Try it")
        with anyio.fail_after(30):
            await cancelled.wait()  # the cancel reaches the worker with its next heartbeat
    local = await loop().run("Try it")  # times out too: `release` is not set
    release.set()
    expected = next(m.text for m in local.messages if isinstance(m, ToolMessage))
    assert _charge_result(ended).text == expected
    assert "stuck" in expected and "0.5" in expected

"""The loop's activities on a worker, run by the SDK's `ActivityEnvironment` (the activity
context a worker gives, heartbeats included): a model call returns its answer and deltas, a
provider's refusal fails it for good carrying the error, and a tool call's outcome is the value,
parts or exception a local run would see. Asyncio only (see conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
import trio
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from reactloop._core import ImagePart, ModelRequest, RunContext, ToolCall, UserMessage, deltas_of
from reactloop._errors import RateLimitedError
from reactloop._loop import ReActLoop
from reactloop._temporal._activities import (
    MODEL_ERROR,
    UNKNOWN_TOOL,
    DepsFactory,
    loop_activities,
)
from reactloop._temporal._contracts import ModelAnswer, ModelCall, RunInfo, ToolInput, ToolOutcome
from reactloop._temporal._options import ActivityOptions, ToolActivity
from reactloop._temporal._payloads import (
    decode,
    decode_deltas,
    decode_error,
    decode_parts,
    decode_response,
    encode,
    encode_request,
)
from reactloop._tools import result_of
from reactloop._tools._tool import tool
from reactloop.testing import ScriptedModel, reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest((UserMessage("Weather in Rome?"),))
PNG = ImagePart(b"\x89PNG\r\n\x1a\n" + bytes(range(40)), media_type="image/png")


def _activities(
    loop: ReActLoop[Any],
    deps_factory: DepsFactory | None = None,
    options: ActivityOptions | None = None,
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    model, tool_call = loop_activities(loop, "support", deps_factory, options or ActivityOptions())
    return model, tool_call


async def _model_call(loop: ReActLoop[Any], stream: bool) -> ModelAnswer:
    model, _ = _activities(loop)
    call = ModelCall("support", "r-1", encode_request(REQUEST), stream)
    data = await ActivityEnvironment().run(model, encode(call))
    return decode(data, ModelAnswer)


async def _tool_call(
    loop: ReActLoop[Any],
    name: str,
    arguments: bytes = b"{}",
    *,
    deps_factory: DepsFactory | None = None,
    environment: ActivityEnvironment | None = None,
    options: ActivityOptions | None = None,
) -> ToolOutcome:
    _, tool_call = _activities(loop, deps_factory, options)
    given = ToolInput("support", name, arguments, "r-1", "call_7", "ada", "s-1")
    data = await (environment or ActivityEnvironment()).run(tool_call, encode(given))
    return decode(data, ToolOutcome)


async def test_a_streamed_model_call_returns_the_answer_and_the_deltas_in_order() -> None:
    answer = reply("Sunny in Rome", ToolCall("weather", '{"city": "Rome"}', "call_1"))
    outcome = await _model_call(ReActLoop(ScriptedModel([answer])), stream=True)
    assert decode_response(outcome.response) == answer
    assert decode_deltas(outcome.deltas) == deltas_of(answer)


async def test_a_plain_model_call_returns_the_answer_without_deltas() -> None:
    outcome = await _model_call(ReActLoop(ScriptedModel(["Sunny"])), stream=False)
    assert decode_response(outcome.response).message.text == "Sunny"
    assert decode_deltas(outcome.deltas) == []


async def test_a_providers_refusal_fails_the_call_for_good_carrying_the_error() -> None:
    refusal = RateLimitedError("slow down", retry_after=3.0, provider="openai")
    with pytest.raises(ApplicationError) as caught:
        await _model_call(ReActLoop(ScriptedModel([refusal])), stream=True)
    failure = caught.value
    assert (failure.type, failure.non_retryable, failure.message) == (
        MODEL_ERROR,
        True,
        "slow down",
    )
    error = decode_error(failure.details[0])
    assert type(error) is RateLimitedError
    assert (error.retry_after, error.provider, error.status) == (3.0, "openai", 429)


@tool
def forecast(city: str) -> dict[str, Any]:
    """The forecast."""
    return {"city": city, "days": [{"high": 21.5, "sky": "sunny"}], "tags": {"warm"}}


@tool
def broken(city: str) -> str:
    """Always fails."""
    raise KeyError(city)


@tool
def photo() -> list[object]:
    """A photo and its caption."""
    return ["Rome at noon", PNG]


async def test_a_tools_value_is_the_text_a_local_run_shows() -> None:
    loop = ReActLoop(ScriptedModel([]), tools=[forecast])
    outcome = await _tool_call(loop, "forecast", b'{"city": "Rome"}')
    local = result_of(ToolCall("forecast", "{}", "call_7"), forecast.fn(city="Rome"), 10**6)
    assert outcome == ToolOutcome(value=local.content)


async def test_a_tools_exception_is_its_outcome_not_a_failed_activity() -> None:
    outcome = await _tool_call(
        ReActLoop(ScriptedModel([]), tools=[broken]), "broken", b'{"city": "Oslo"}'
    )
    assert outcome == ToolOutcome(error_type="KeyError", error_message="'Oslo'")


async def test_a_tools_content_parts_come_back_in_order() -> None:
    outcome = await _tool_call(ReActLoop(ScriptedModel([]), tools=[photo]), "photo")
    assert outcome.parts is not None
    assert [type(p).__name__ for p in decode_parts(outcome.parts)] == ["TextPart", "ImagePart"]
    assert decode_parts(outcome.parts)[1] == PNG


async def test_deps_are_built_on_the_worker_for_each_call_from_the_runs_ids() -> None:
    seen: list[RunInfo] = []

    @tool
    def whoami(ctx: RunContext[str]) -> str:
        """Who calls."""
        return f"{ctx.deps} {ctx.user_id} {ctx.session_id} {ctx.call_id}"

    async def make_deps(info: RunInfo) -> str:
        seen.append(info)
        return f"deps-for-{info.run_id}"

    loop = ReActLoop(ScriptedModel([]), tools=[whoami])
    outcome = await _tool_call(loop, "whoami", deps_factory=make_deps)
    assert outcome.value == "deps-for-r-1 ada s-1 call_7"
    assert seen == [RunInfo("support", "r-1", "ada", "s-1")]


async def test_a_tool_the_worker_lacks_fails_the_call_for_good_naming_it() -> None:
    with pytest.raises(ApplicationError) as caught:
        await _tool_call(ReActLoop(ScriptedModel([]), tools=[forecast]), "refund")
    assert (caught.value.type, caught.value.non_retryable) == (UNKNOWN_TOOL, True)
    assert "'refund'" in caught.value.message and "forecast" in caught.value.message


async def test_a_tool_written_for_trio_runs_under_trio_in_its_activity() -> None:
    @tool
    async def nap() -> str:
        """Sleeps the trio way."""
        await trio.sleep(0.001)
        return type(trio.lowlevel.current_trio_token()).__name__

    loop = ReActLoop(ScriptedModel([]), tools=[nap])
    options = ActivityOptions(tools={"nap": ToolActivity(backend="trio")})
    outcome = await _tool_call(loop, "nap", options=options)
    assert outcome.value == "TrioToken"


async def test_a_running_tool_heartbeats_until_it_returns() -> None:
    beats = anyio.Event()
    count = 0

    def on_heartbeat(*details: object) -> None:
        nonlocal count
        count += 1
        if count == 3:
            beats.set()

    @tool
    async def slow() -> str:
        """Returns once the worker heartbeated three times."""
        with anyio.fail_after(30):
            await beats.wait()
        return "done"

    environment = ActivityEnvironment()
    environment.on_heartbeat = on_heartbeat
    options = ActivityOptions(default_tool=ToolActivity(heartbeat=0.03))
    loop = ReActLoop(ScriptedModel([]), tools=[slow])
    outcome = await _tool_call(loop, "slow", environment=environment, options=options)
    assert outcome.value == "done"

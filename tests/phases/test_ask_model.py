"""A phase's own model call (`ask_model`): the loop's retry policy and timeout, its tokens on the
run, nothing streamed as the run's answer; and a run's phase data and instructions on its result."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from reactloop import Limits, ReActLoop, RetryPolicy, Usage, UserMessage
from reactloop.errors import ModelTimeoutError, ProviderUnavailableError
from reactloop.events import ModelRetrying, TextStreamed
from reactloop.models import ModelRequest, ModelResponse
from reactloop.phases import PhaseDecision, Proceed, Run, ask_model, default_start_phases
from reactloop.stores import MemoryStore
from reactloop.testing import FunctionModel, ScriptedModel, reply

pytestmark = pytest.mark.anyio


class Critic:
    """A start phase that asks the model for a remark and keeps it."""

    async def __call__(self, run: Run) -> PhaseDecision:
        request = ModelRequest(messages=(UserMessage("Say one remark."),))
        response = await ask_model(run, request)
        run.state.phase_data["remark"] = response.message.text
        run.state.instructions = f"Keep in mind: {response.message.text}"
        return Proceed()


def loop_with(model: Any, **options: Any) -> ReActLoop:
    return ReActLoop(model, start_phases=[*default_start_phases(), Critic()], **options)


async def no_wait(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


async def test_a_phase_call_is_retried_by_the_loop_policy_and_its_tokens_count() -> None:
    failures = [ProviderUnavailableError("down")]

    def answer(request: ModelRequest) -> ModelResponse | str:
        if failures and request.messages[-1] == UserMessage("Say one remark."):
            raise failures.pop()
        return reply("Be kind.", usage=Usage(7, 3))

    loop = loop_with(FunctionModel(answer), retry=RetryPolicy(max_retries=1), sleep=no_wait)
    async with loop.stream("hi") as events:
        seen = [event async for event in events]
    result = await events.result()
    assert any(isinstance(event, ModelRetrying) for event in seen)  # retried, and said so
    streamed = "".join(e.text for e in seen if isinstance(e, TextStreamed))
    assert streamed == "Be kind."  # only the run's answer streams, not the phase's remark
    assert result.setup_usage == Usage(7, 3)  # before the first step: setup usage
    assert result.usage == Usage(14, 6)


async def test_a_phase_call_keeps_the_loop_model_timeout() -> None:
    async def slow(request: ModelRequest) -> str:
        await anyio.sleep_forever()
        return "never"

    loop = loop_with(
        FunctionModel(slow), limits=Limits(model_timeout=0.05), retry=RetryPolicy.never()
    )
    with anyio.fail_after(30):
        result = await loop.run("hi")
    assert isinstance(result.error, ModelTimeoutError)


async def test_the_result_shows_phase_data_and_the_instructions_used() -> None:
    store = MemoryStore()
    loop = loop_with(ScriptedModel(["Be kind.", "Hello."]), instructions="You greet.", store=store)
    result = await loop.run("hi")
    assert result.phase_data == {"remark": "Be kind."}
    assert result.instructions == "Keep in mind: Be kind."
    again = await loop.resume(result.run_id)  # a finished run's stored result says the same
    assert again.phase_data == {"remark": "Be kind."}
    assert again.instructions == "Keep in mind: Be kind."

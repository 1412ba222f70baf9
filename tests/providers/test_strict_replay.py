"""A real `ReActLoop` over the strict fakes (tests/helpers/strict_vendor.py): three model steps
with reasoning (one with two parallel tool calls), streaming and not, on each provider that replays
reasoning: Anthropic with thinking (a budget, or adaptive with an effort), DeepSeek and Gemini over
Chat Completions, OpenAI Responses.
The run finishes only if the fake took every request, that is, if reasoning went back as the
vendor documents it; a regression fails here with the vendor's own 400."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest

from reactloop import ContextWindow, ReActLoop, SqliteStore, tool
from reactloop._core import (
    AssistantMessage,
    ModelSettings,
    ReasoningSettings,
    RunResult,
    StopReason,
)
from reactloop._core._events import Event, RunFinished
from reactloop._providers import AnthropicModel, OpenAIModel, OpenAIResponsesModel
from reactloop.approval import ApprovalOptions, Approve
from tests.helpers.strict_responses import StrictResponses
from tests.helpers.strict_vendor import Step, StrictAnthropic, StrictChat, StrictFake
from tests.providers.conftest import API_KEY
from tests.providers.wire_server import WireServer

pytestmark = pytest.mark.anyio

FINAL = "Paris 18 C, Rome 21 C, at 12:00."
STEPS = (
    Step(
        "Paris first — d'abord ☔ 東京じゃない.",
        "Let me look.",
        (("get_weather", {"city": "Paris"}),),
    ),
    Step(
        "Rome and the time, together.",
        "",
        (("get_weather", {"city": "Rome"}), ("get_time", {})),
        redacted=True,
    ),
    Step("I have everything.", FINAL),
)
QUESTION = "Weather in Paris and Rome, and the time?"
THINKING = ModelSettings(reasoning=ReasoningSettings(budget_tokens=2048))


@tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    return {"Paris": "18 C", "Rome": "21 C"}[city]


@tool
def get_time() -> str:
    """The time now."""
    return "12:00"


Model = AnthropicModel | OpenAIModel | OpenAIResponsesModel
Setup = Callable[[WireServer], tuple[StrictFake, Model, ModelSettings | None]]


def anthropic(server: WireServer) -> tuple[StrictFake, Model, ModelSettings | None]:
    model = AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=server.url)
    return StrictAnthropic(STEPS), model, THINKING


def anthropic_adaptive(server: WireServer) -> tuple[StrictFake, Model, ModelSettings | None]:
    """A model that thinks adaptively (`thinking: {"type": "adaptive"}`, an effort)."""
    model = AnthropicModel("claude-opus-5", api_key=API_KEY, base_url=server.url)
    settings = ModelSettings(reasoning=ReasoningSettings(effort="high"))
    return StrictAnthropic(STEPS, model="claude-opus-5"), model, settings


def deepseek(server: WireServer) -> tuple[StrictFake, Model, ModelSettings | None]:
    model = OpenAIModel(
        "deepseek-reasoner",
        api_key=API_KEY,
        base_url=f"{server.url}/v1",
        provider="openai-compatible",
    )
    return StrictChat(STEPS, model="deepseek-reasoner", vendor="deepseek"), model, None


def gemini(server: WireServer) -> tuple[StrictFake, Model, ModelSettings | None]:
    model = OpenAIModel(
        "gemini-3-pro-preview",
        api_key=API_KEY,
        base_url=f"{server.url}/v1beta/openai",
        provider="openai-compatible",
    )
    return StrictChat(STEPS, model="gemini-3-pro-preview", vendor="gemini"), model, None


def responses(server: WireServer) -> tuple[StrictFake, Model, ModelSettings | None]:
    model = OpenAIResponsesModel("gpt-5", api_key=API_KEY, base_url=f"{server.url}/v1")
    settings = ModelSettings(reasoning=ReasoningSettings(effort="low", summary="auto"))
    return StrictResponses(STEPS), model, settings


SETUPS = {
    "anthropic": anthropic,
    "anthropic-adaptive": anthropic_adaptive,
    "deepseek": deepseek,
    "gemini": gemini,
    "responses": responses,
}


@asynccontextmanager
async def strict(server: WireServer, vendor: str) -> AsyncIterator[tuple[StrictFake, ReActLoop]]:
    fake, model, settings = SETUPS[vendor](server)
    server.handler = fake.handle
    options: dict[str, Any] = {"tools": [get_weather, get_time]}
    if settings is not None:
        options["settings"] = settings
    async with model:
        yield fake, ReActLoop(model, **options)


def check(result: RunResult[Any], fake: StrictFake) -> None:
    assert fake.rejections == []
    assert result.error is None
    assert (result.stop_reason, result.output) == (StopReason.COMPLETED, FINAL)
    assert [len(step.tool_results) for step in result.steps] == [1, 2, 0]
    assert [r.content for s in result.steps for r in s.tool_results] == ["18 C", "21 C", "12:00"]


@pytest.mark.parametrize("vendor", sorted(SETUPS))
async def test_a_run_with_reasoning_is_accepted_request_after_request(
    server: WireServer, vendor: str
) -> None:
    async with strict(server, vendor) as (fake, loop):
        result = await loop.run(QUESTION)
    check(result, fake)
    assert fake.answered == len(server.requests) == 3


@pytest.mark.parametrize("vendor", sorted(SETUPS))
async def test_a_streamed_run_with_reasoning_is_accepted_request_after_request(
    server: WireServer, vendor: str
) -> None:
    events: list[Event] = []
    async with strict(server, vendor) as (fake, loop), loop.stream(QUESTION) as stream:
        async for event in stream:
            events.append(event)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    check(finished.result, fake)
    assert all(request.json()["stream"] is True for request in server.requests)
    assert fake.answered == len(server.requests) == 3


@pytest.mark.parametrize("piece", [3, 7, 64])
@pytest.mark.parametrize("vendor", sorted(SETUPS))
async def test_a_stream_cut_anywhere_still_brings_back_what_the_vendor_checks(
    server: WireServer, vendor: str, piece: int
) -> None:
    """Streams in pieces of 3, 7 and 64 bytes (signatures, encrypted content and thought
    signatures cut mid-value): the opaque values are reassembled byte for byte, or the next
    request would be refused."""
    async with strict(server, vendor) as (fake, loop):
        fake.piece = piece
        async with loop.stream(QUESTION) as stream:
            finished = [event async for event in stream][-1]
    assert isinstance(finished, RunFinished)
    check(finished.result, fake)


@pytest.mark.parametrize("vendor", sorted(SETUPS))
async def test_reasoning_comes_back_as_parts_of_the_assistant_messages(
    server: WireServer, vendor: str
) -> None:
    """What the fake issued is in the transcript (so it is what went back, not a coincidence)."""
    async with strict(server, vendor) as (_, loop):
        result = await loop.run(QUESTION)
    replies = [m for m in result.messages if isinstance(m, AssistantMessage)]
    assert len(replies) == 3
    assert all(reply.reasoning for reply in replies[:2])


async def test_deepseek_gets_the_reasoning_of_an_earlier_tool_loop_in_a_later_turn(
    server: WireServer,
) -> None:
    """DeepSeek: the reasoning_content of a turn that made tool calls goes back "in all subsequent
    requests", also after the next user message (api-docs.deepseek.com, thinking mode)."""
    async with strict(server, "deepseek") as (fake, loop):
        first = await loop.run(QUESTION)
        check(first, fake)
        fake.steps = (Step("Nothing to look up.", "You're welcome."),)
        later = await loop.run("Thanks!", history=first.messages)
    assert fake.rejections == []
    assert later.output == "You're welcome."


@pytest.mark.parametrize("fresh", [False, True], ids=["same-model", "fresh-model"])
@pytest.mark.parametrize("vendor", sorted(SETUPS))
async def test_a_later_turn_after_a_tool_loop_is_accepted(
    server: WireServer, vendor: str, fresh: bool
) -> None:
    """The next user message starts a new tool loop: what the vendor still checks of the earlier
    one (Anthropic: any thinking block sent verifies; DeepSeek: the reasoning_content of its tool
    calls; Responses: every call keeps its reasoning item) is sent as it came, also by a model
    instance that did not see the earlier answers (a history from elsewhere)."""
    async with strict(server, vendor) as (fake, loop):
        first = await loop.run(QUESTION)
        fake.steps = (*STEPS[:1], Step("Done.", "You're welcome."))
        _, other, settings = SETUPS[vendor](server)
        async with other:
            model = other if fresh else loop.config.model
            again = ReActLoop(
                model, tools=[get_weather, get_time], settings=settings or ModelSettings()
            )
            later = await again.run("And Paris again?", history=first.messages)
    assert fake.rejections == []
    assert later.output == "You're welcome."
    assert [len(step.tool_results) for step in later.steps] == [1, 0]


@pytest.mark.parametrize("vendor", sorted(SETUPS))
async def test_a_provider_that_drops_reasoning_fails_as_in_production(
    server: WireServer, vendor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reasoning replay switched off (a regression): the fake answers its vendor's 400 and the
    run ends in error after the first tool step."""
    for module in ("_anthropic", "_chat_reasoning", "_responses_wire"):
        monkeypatch.setattr(f"reactloop._providers.{module}.replays", lambda *_: False)
    async with strict(server, vendor) as (fake, loop):
        result = await loop.run(QUESTION)
    assert result.stop_reason is StopReason.ERROR
    assert result.error is not None
    assert len(fake.rejections) == 1
    assert fake.rejections[0] in str(result.error)


@pytest.mark.parametrize("vendor", sorted(SETUPS))
async def test_a_trimmed_history_still_sends_the_current_loops_reasoning(
    server: WireServer, vendor: str
) -> None:
    """A context window too small for the earlier conversation: trimming drops it (pair-safe),
    never the reasoning of the tool loop under way, and the vendor takes every request."""
    padding = "An earlier, long question. " * 400
    async with strict(server, vendor) as (fake, loop):
        first = await loop.run(padding + QUESTION)
        trimmed = ReActLoop(
            loop.config.model,
            tools=[get_weather, get_time],
            settings=loop.config.settings,
            context_window=ContextWindow(max_tokens=2000, reserved_output=200),
        )
        later = await trimmed.run(QUESTION, history=first.messages)
    check(later, fake)
    assert padding not in server.requests[-1].body.decode()


@attrs.frozen
class Forecast:
    city: str
    celsius: int


@pytest.mark.parametrize("stream", [False, True])
async def test_a_structured_output_with_thinking_never_forces_a_tool(
    server: WireServer, stream: bool
) -> None:
    """Anthropic refuses a forced tool_choice with thinking on: the structured output's strategy
    must pick another way, and every request of the run is accepted."""
    answer = '{"city": "Paris", "celsius": 18}'
    fake = StrictAnthropic((STEPS[0], Step("Paris is 18 C.", answer)))
    server.handler = fake.handle
    async with AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=server.url) as model:
        loop = ReActLoop(model, tools=[get_weather], output_type=Forecast, settings=THINKING)
        result: RunResult[Any]
        if stream:
            async with loop.stream(QUESTION) as events:
                finished = [event async for event in events][-1]
            assert isinstance(finished, RunFinished)
            result = finished.result
        else:
            result = await loop.run(QUESTION)
    assert fake.rejections == []
    assert result.output == Forecast("Paris", 18)
    assert all(request.json().get("tool_choice", {}).get("type") in (None, "auto", "none")
               for request in server.requests)  # fmt: skip


@tool(requires_approval=True)
def held_weather(city: str) -> str:
    """The weather in a city, once a person approved the call.

    Args:
        city: The city's name.
    """
    return {"Paris": "18 C", "Rome": "21 C"}[city]


@pytest.mark.parametrize("via", ["state", "store"])
@pytest.mark.parametrize("vendor", sorted(SETUPS))
async def test_a_run_paused_mid_loop_resumes_with_its_reasoning_on_a_fresh_model(
    server: WireServer, vendor: str, via: str, tmp_path: Path
) -> None:
    """Each weather call waits for an approval: the run pauses inside the tool loop (twice) and
    is resumed by a new loop on a new model instance, from the sealed state token or from the
    SQLite journal; the reasoning of the loop under way still goes back as the vendor requires."""
    fake, first_model, settings = SETUPS[vendor](server)
    server.handler = fake.handle
    steps = tuple(
        Step(s.reasoning, s.text, tuple(("held_weather" if n == "get_weather" else n, a)
                                        for n, a in s.calls), s.redacted)
        for s in STEPS
    )  # fmt: skip
    fake.steps = steps
    options: dict[str, Any] = {
        "tools": [held_weather, get_time],
        "settings": settings or ModelSettings(),
        "approval": ApprovalOptions(state_key="k" * 32),
    }
    if via == "store":
        options["store"] = SqliteStore(tmp_path / "runs.db")
    async with first_model:
        result = await ReActLoop(first_model, **options).run(QUESTION)
    pauses = 0
    while result.paused:
        pauses += 1
        decisions = {pending.call_id: Approve() for pending in result.pending}
        _, model, _ = SETUPS[vendor](server)
        async with model:
            loop = ReActLoop(model, **options)
            if via == "state":
                result = await loop.resume(state=result.state, decisions=decisions)
            else:
                result = await loop.resume(result.run_id, decisions=decisions)
    assert pauses == 2
    assert fake.rejections == []
    assert result.output == FINAL


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("anthropic", "deepseek"),
        ("anthropic", "responses"),
        ("deepseek", "anthropic"),
        ("gemini", "anthropic-adaptive"),
        ("responses", "anthropic"),
        ("responses", "gemini"),
    ],
)
async def test_a_conversation_moved_to_another_vendor_is_accepted_there(
    server: WireServer, before: str, after: str
) -> None:
    """Reasoning goes back only to the vendor and family that produced it: the next vendor's
    strict fake sees no thinking it cannot verify, and takes the next tool loop's requests."""
    async with strict(server, before) as (fake, loop):
        first = await loop.run(QUESTION)
    check(first, fake)
    async with strict(server, after) as (other, loop):
        later = await loop.run("And Paris again?", history=first.messages)
    check(later, other)

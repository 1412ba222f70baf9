"""A run's life: its input and context keywords are checked before anything runs, and a run cut
short keeps the results its calls already had."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from reactloop._core._contracts import Hook
from reactloop._core._decisions import Reject, StopReason
from reactloop._core._events import ToolCallFinished, ToolCallStarted
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._core._state import ToolResult
from reactloop._errors import ConfigurationError, ErrorCode, GuardRejectedError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel
from reactloop.testing import FakeTool, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio

BAD_TEXT: list[object] = [None, 5, b"hello", {"text": "hello"}, 1.5]  # lists and messages are input


async def _run(loop: ReActLoop, how: str, text: Any, **context: Any) -> None:
    if how == "run":
        await loop.run(text, **context)
    elif how == "start":
        async with loop.start(text, **context) as handle:
            await handle.result()
    else:
        async with loop.stream(text, **context) as events:
            async for _ in events:
                pass


@pytest.mark.parametrize("how", ["run", "start", "stream"])
@pytest.mark.parametrize("text", BAD_TEXT)
async def test_text_that_is_not_a_string_is_a_configuration_error(how: str, text: object) -> None:
    model = ScriptedModel(["never"])
    with pytest.raises(ConfigurationError, match="text must be a string") as caught:
        await _run(ReActLoop(model), how, text)
    assert caught.value.option == "text" and caught.value.value is text
    assert model.requests == []


@pytest.mark.parametrize("how", ["run", "start", "stream"])
async def test_a_misspelled_context_keyword_fails_with_a_suggestion(how: str) -> None:
    model = ScriptedModel(["never"])
    with pytest.raises(ConfigurationError, match="did you mean 'user_id'") as caught:
        await _run(ReActLoop(model), how, "hi", user_ID="u1")
    assert (caught.value.option, caught.value.value) == ("user_ID", "u1")
    assert model.requests == []


@pytest.mark.parametrize("how", ["run", "start", "stream"])
async def test_internal_parameters_are_not_context_keywords(how: str) -> None:
    model = ScriptedModel(["never"])

    async def sink(event: object) -> None:
        raise AssertionError("a user's sink= must not become the run's event sink")

    with pytest.raises(ConfigurationError, match="sink") as caught:
        await _run(ReActLoop(model), how, "hi", sink=sink)
    assert caught.value.option == "sink"
    assert model.requests == []


@pytest.mark.parametrize(
    ("keyword", "value"),
    [("user_id", 5), ("session_id", ["s"]), ("history", "earlier"), ("history", [5])],
)
async def test_a_wrong_context_value_is_refused(keyword: str, value: object) -> None:
    model = ScriptedModel(["never"])
    arguments: dict[str, Any] = {keyword: value}
    with pytest.raises(ConfigurationError, match=keyword):
        await ReActLoop(model).run("hi", **arguments)
    assert model.requests == []


@pytest.mark.parametrize(
    "blank",
    [UserMessage("  "), SystemMessage(""), AssistantMessage("")],
    ids=["user", "system", "assistant"],
)
async def test_a_blank_message_in_the_history_is_refused_by_position(blank: Message) -> None:
    model = ScriptedModel(["never"])
    history: list[Message] = [UserMessage("earlier"), AssistantMessage("answer"), blank]
    with pytest.raises(ConfigurationError, match="model APIs reject an empty message") as caught:
        await ReActLoop(model).run("hi", history=history)
    assert (caught.value.option, caught.value.value) == ("history[2]", blank)
    assert model.requests == []


async def test_the_context_keywords_reach_the_run() -> None:
    seen: list[tuple[object, object, object]] = []

    def instructions(context: Any) -> str:
        seen.append((context.deps, context.user_id, context.session_id))
        return "be brief"

    loop = ReActLoop(ScriptedModel(["ok"]), instructions=instructions)
    result = await loop.run("hi", deps={"db": 1}, user_id="u", session_id="s")
    assert result.output == "ok"
    assert seen == [({"db": 1}, "u", "s")]


@pytest.mark.parametrize("text", ["", " ", "\n\t  "])
async def test_empty_input_ends_the_run_as_guard_rejected_without_a_model_call(
    text: str,
) -> None:
    model = ScriptedModel(["never"])
    result = await ReActLoop(model).run(text)
    assert result.stop_reason is StopReason.GUARD_REJECTED
    assert isinstance(result.error, GuardRejectedError)
    assert result.error.reason == "input must not be empty"
    assert "input must not be empty" in result.error.message
    assert result.error.code is ErrorCode.GUARD_REJECTED
    assert model.requests == []


async def test_empty_input_is_refused_even_with_a_history() -> None:
    model = ScriptedModel(["never"])
    result = await ReActLoop(model).run("", history=[UserMessage("earlier")])
    assert result.stop_reason is StopReason.GUARD_REJECTED
    assert model.requests == []


async def test_empty_input_raises_in_strict_mode() -> None:
    with pytest.raises(GuardRejectedError, match="input must not be empty"):
        await ReActLoop(ScriptedModel(["never"]), strict=True).run("  ")


def _refusing_client() -> httpx.AsyncClient:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"no request may be sent, got {request.url}")

    return httpx.AsyncClient(transport=httpx.MockTransport(refuse))


@pytest.mark.parametrize("provider", [OpenAIModel, AnthropicModel, GeminiModel])
async def test_empty_input_is_refused_the_same_on_every_provider(provider: type[Any]) -> None:
    async with _refusing_client() as client:
        model = provider("m", api_key="k", http_client=client)
        result = await ReActLoop(model).run("")
    assert result.stop_reason is StopReason.GUARD_REJECTED
    assert isinstance(result.error, GuardRejectedError)
    assert result.error.reason == "input must not be empty"


FIRST_CALLS = {
    "finished": (call("ok"), "ok", False),
    "unknown tool": (call("nope"), "unknown tool 'nope'", True),
    "rejected": (call("ok", bad=True), "rejected: no bad calls", True),
}


class RejectBad(Hook):
    """Rejects calls that carry `bad`."""

    async def before_tool_call(self, run: Run, call: ToolCall) -> Reject | None:
        return Reject("no bad calls") if "bad" in call.arguments else None


@pytest.mark.parametrize("first", FIRST_CALLS, ids=list(FIRST_CALLS))
async def test_a_run_cut_short_keeps_the_results_its_calls_already_had(first: str) -> None:
    """The consumer leaves while one call still runs: a call settled before (run, refused) keeps
    its own result, in the transcript and in the step, and a tool that ran counts as used."""
    settled, content, is_error = FIRST_CALLS[first]
    blocker = FakeTool("block", gate=anyio.Event())
    model = ScriptedModel([reply("", settled, call("block"))])
    loop = ReActLoop(model, tools=[FakeTool("ok"), blocker], hooks=[RejectBad()])
    seen: list[ToolResult] = []
    blocking = False
    async with loop.stream("go") as events:
        async for event in events:
            if isinstance(event, ToolCallFinished):
                seen.append(event.result)
            if isinstance(event, ToolCallStarted) and event.call.name == "block":
                blocking = True
            if seen and blocking:  # the first call is settled, the second still runs
                break
    result = await events.result()
    assert result.stop_reason is StopReason.STREAM_CLOSED
    kept, cut = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert content in kept.text and kept.is_error is is_error
    assert (kept.call_id, kept.text) == (seen[0].call_id, seen[0].content)
    assert cut.text.startswith("cut short") and cut.call_id != kept.call_id
    (step,) = result.steps
    assert [r.call_id for r in step.tool_results] == [kept.call_id, cut.call_id]
    assert result.tools_used == (("ok", "block") if first == "finished" else ("block",))

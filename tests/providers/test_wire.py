"""The history rules both providers share: nothing empty is sent, nothing is dropped silently."""

from __future__ import annotations

import pytest

from reactloop._core._contracts import Model
from reactloop._core._decisions import StopReason
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._core._parts import ReasoningPart
from reactloop._errors import ConfigurationError, InvalidRequestError
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel, OpenAIResponsesModel
from reactloop._providers._wire import EMPTY_TOOL_RESULT
from tests.providers.examples import REQUESTS
from tests.providers.protocol import OpenAIRequestSchema, check_anthropic_request
from tests.providers.render import anthropic_json, openai_json
from tests.providers.render_gemini import gemini_answer
from tests.providers.render_responses import responses_json
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

CALL = ToolCall("clear_cache", "{}", "call_x")
REFUSED: list[tuple[tuple[Message, ...], str]] = [
    ((), "no user, assistant or tool message"),
    ((SystemMessage("Be brief."),), "no user, assistant or tool message"),
    ((UserMessage(""),), r"messages\[0\] \(UserMessage\): its text is blank"),
    ((UserMessage(" \n\t"),), r"messages\[0\] \(UserMessage\): its text is blank"),
    ((UserMessage("hi"), SystemMessage("  ")), r"messages\[1\] \(SystemMessage\)"),
    (
        (UserMessage("hi"), AssistantMessage(""), UserMessage("again")),
        r"messages\[1\] \(AssistantMessage\): it has no text, tool call, refusal or reasoning",
    ),
    ((UserMessage("hi"), AssistantMessage(" ", refusal=" ")), r"messages\[1\]"),
]


@pytest.fixture(params=["openai", "anthropic", "openai-responses", "gemini"])
def model(
    request: pytest.FixtureRequest,
    openai: OpenAIModel,
    anthropic: AnthropicModel,
    responses: OpenAIResponsesModel,
    gemini: GeminiModel,
) -> Model:
    """Each provider in turn."""
    models: dict[str, Model] = {"openai": openai, "anthropic": anthropic, "gemini": gemini}
    return models.get(request.param, responses)


@pytest.mark.parametrize(("history", "why"), REFUSED)
async def test_an_empty_history_or_message_is_refused_before_sending(
    server: WireServer, model: Model, history: tuple[Message, ...], why: str
) -> None:
    server.reply_with(json_reply({}))
    with pytest.raises(InvalidRequestError, match=why):
        await model.request(ModelRequest(history))
    assert server.requests == []


async def test_blank_text_beside_tool_calls_is_sent(
    server: WireServer, openai: OpenAIModel, openai_schema: OpenAIRequestSchema
) -> None:
    history = (UserMessage("go"), AssistantMessage(" ", (CALL,)), ToolMessage("call_x", "f", "ok"))
    server.reply_with(json_reply(openai_json("done")))
    await openai.request(ModelRequest(history))
    sent = server.requests[0].json()
    openai_schema.check(sent)
    assert len(sent["messages"]) == 3


async def test_an_empty_tool_result_is_sent_as_a_note_by_both_providers(
    server: WireServer,
    openai: OpenAIModel,
    anthropic: AnthropicModel,
    openai_schema: OpenAIRequestSchema,
) -> None:
    server.reply_with(json_reply(openai_json("done")))
    await openai.request(REQUESTS["empty_tool_result"])
    server.reply_with(json_reply(anthropic_json("done")))
    await anthropic.request(REQUESTS["empty_tool_result"])
    to_openai, to_anthropic = (request.json() for request in server.requests)
    openai_schema.check(to_openai)
    check_anthropic_request(to_anthropic)
    assert to_openai["messages"][2]["content"] == EMPTY_TOOL_RESULT
    assert to_anthropic["messages"][2]["content"][0]["content"] == EMPTY_TOOL_RESULT


@pytest.mark.parametrize("text", ["", "  \n"])
async def test_empty_input_ends_the_run_alike_on_both_providers(
    server: WireServer, model: Model, text: str
) -> None:
    server.reply_with(json_reply({}))
    result = await ReActLoop(model).run(text)
    assert (result.stop_reason, server.requests) == (StopReason.GUARD_REJECTED, [])


async def test_a_blank_message_in_a_stored_history_is_refused_before_the_run(
    server: WireServer, model: Model
) -> None:
    server.reply_with(json_reply({}))
    history = (UserMessage("hi"), AssistantMessage(""))
    with pytest.raises(ConfigurationError) as caught:
        await ReActLoop(model).run("and now?", history=history)
    assert caught.value.option == "history[1]"
    assert server.requests == []


async def test_a_blank_message_handed_to_the_provider_itself_is_never_sent(
    server: WireServer, model: Model
) -> None:
    server.reply_with(json_reply({}))
    request = ModelRequest((UserMessage("hi"), AssistantMessage(""), UserMessage("and now?")))
    with pytest.raises(InvalidRequestError, match=r"messages\[1\] \(AssistantMessage\)"):
        await model.request(request)
    assert server.requests == []


async def test_an_answer_holding_only_reasoning_is_left_out_by_every_provider(
    server: WireServer, model: Model
) -> None:
    """An answer cut off while the model thought (reasoning, nothing else) does not brick the
    conversation: each provider leaves it out, as the vendors drop an earlier turn's reasoning."""
    replies = {OpenAIModel: openai_json, AnthropicModel: anthropic_json, GeminiModel: gemini_answer}
    server.reply_with(json_reply(replies.get(type(model), responses_json)("Sure.")))
    thought = ReasoningPart("Let me think about", signature="sig", provider="x", model="y")
    cut = AssistantMessage(parts=[thought])
    history = (UserMessage("hi"), cut)
    result = await ReActLoop(model).run("and now?", history=history)
    assert result.output == "Sure."
    sent = server.requests[0].json()
    turns: list[dict[str, object]] = sent.get("messages") or sent.get("input") or sent["contents"]
    roles = [turn.get("role") for turn in turns]
    assert "assistant" not in roles and "model" not in roles  # user turns (Claude: merged)
    assert "Let me think" not in server.requests[0].body.decode()

"""Anthropic thinking on recorded traffic (tests/fixtures/recorded/anthropic, see its README).

Decode: each recorded answer, served over the loopback server whole and cut at odd byte offsets
(streams also one event per chunk), gives its blocks as parts in their order, signatures and
redacted data byte-identical. Encode: the conversation rebuilt from a decoded answer (or driven
by a loop whose tool returns the recorded result) makes reactloop send what the vendor accepted
next, over what the provider owns (`anthropic_view`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from reactloop._core import ReasoningDelta, ReasoningPart, TextPart
from reactloop._core._messages import (
    AssistantMessage,
    ForcedTool,
    Message,
    ModelRequest,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._core._settings import ModelSettings, ReasoningEffort, ReasoningSettings
from reactloop._errors import ProviderConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._output._spec import OutputStrategy
from reactloop._providers import AnthropicModel
from reactloop._providers._anthropic import encode_request
from reactloop.output import OutputOptions
from tests.providers.conftest import API_KEY
from tests.providers.recorded import (
    ODD_OFFSETS,
    Deltas,
    anthropic,
    anthropic_blocks_of_stream,
    anthropic_parts,
    anthropic_view,
    stream_bytes,
    three_ways,
)
from tests.providers.wire_server import Reply, WireServer, json_reply, split_at, sse_reply

pytestmark = pytest.mark.anyio


def budget(tokens: int) -> ModelSettings:
    return ModelSettings(reasoning=ReasoningSettings(budget_tokens=tokens))


@pytest.fixture
async def sonnet_4_0(server: WireServer) -> AsyncIterator[AnthropicModel]:
    async with AnthropicModel("claude-sonnet-4-0", api_key=API_KEY, base_url=server.url) as model:
        yield model


@pytest.fixture
async def sonnet_4_5(server: WireServer) -> AsyncIterator[AnthropicModel]:
    async with AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=server.url) as model:
        yield model


def json_two_ways(body: dict[str, Any]) -> list[Reply]:
    """A JSON answer whole, and cut at odd byte offsets."""
    raw = orjson.dumps(body)
    cut = split_at(raw, [n for n in ODD_OFFSETS if n < len(raw)])
    whole = json_reply(body)
    return [whole, Reply(200, tuple(cut), whole.headers)]


async def decoded_whole(
    server: WireServer, model: AnthropicModel, body: dict[str, Any]
) -> list[ModelResponse]:
    answers = []
    for reply in json_two_ways(body):
        server.reply_with(reply)
        answers.append(await model.request(ModelRequest((UserMessage("Hello"),))))
    return answers


async def check_decoded(
    server: WireServer, model: AnthropicModel, interaction: dict[str, Any]
) -> ModelResponse:
    """The recorded JSON answer decodes to its blocks as parts, whole and cut."""
    body = interaction["response"]["parsed_body"]
    expected = anthropic_parts(body["content"], model.model)
    answers = await decoded_whole(server, model, body)
    for answer in answers:
        assert answer.message.parts == expected
    return answers[0]


async def check_streamed(
    server: WireServer, model: AnthropicModel, interaction: dict[str, Any]
) -> ModelResponse:
    """The recorded stream decodes to its blocks as parts, three ways, and its thinking
    streams as reasoning deltas."""
    raw = stream_bytes(interaction)
    blocks = anthropic_blocks_of_stream(raw)
    expected = anthropic_parts(blocks, model.model)
    thinking = "".join(block.get("thinking", "") for block in blocks)
    answers = []
    for chunks in three_ways(raw):
        server.reply_with(sse_reply(chunks))
        deltas = Deltas()
        answer = await model.stream(ModelRequest((UserMessage("Hello"),)), deltas)
        assert answer.message.parts == expected
        streamed = "".join(d.text for d in deltas.seen if isinstance(d, ReasoningDelta))
        assert streamed == thinking
        answers.append(answer)
    return answers[0]


def sent(server: WireServer, index: int = -1) -> dict[str, Any]:
    return anthropic_view(server.requests[index].json())


def recorded(interaction: dict[str, Any]) -> dict[str, Any]:
    return anthropic_view(interaction["request"]["parsed_body"])


# -- decode ------------------------------------------------------------------------------------


async def test_thinking_text_and_tool_use_decode_in_their_order(
    server: WireServer, sonnet_4_0: AnthropicModel
) -> None:
    first, _ = anthropic("test_anthropic_tool_with_thinking")
    answer = await check_decoded(server, sonnet_4_0, first)
    kinds = [type(part).__name__ for part in answer.message.parts]
    assert kinds == ["ReasoningPart", "TextPart", "ToolCall"]
    signature = first["response"]["parsed_body"]["content"][0]["signature"]
    assert answer.message.reasoning[0].signature == signature


async def test_each_recorded_thinking_answer_decodes(
    server: WireServer, sonnet_4_5: AnthropicModel
) -> None:
    for interaction in anthropic("test_anthropic_model_thinking_part"):
        await check_decoded(server, sonnet_4_5, interaction)


async def test_a_thinking_stream_decodes_with_its_signature(
    server: WireServer, sonnet_4_0: AnthropicModel
) -> None:
    (interaction,) = anthropic("test_anthropic_model_thinking_part_stream")
    answer = await check_streamed(server, sonnet_4_0, interaction)
    (thought,) = answer.message.reasoning
    assert thought.signature is not None
    assert thought.signature.startswith("EvMCCkYICxgCKkCHP2cSuEdcJK")


async def test_redacted_thinking_arrives_whole_in_its_block_start(
    server: WireServer, sonnet_4_5: AnthropicModel
) -> None:
    (interaction,) = anthropic("test_anthropic_model_thinking_part_redacted_stream")
    answer = await check_streamed(server, sonnet_4_5, interaction)
    redacted = [part.redacted for part in answer.message.reasoning]
    assert len(redacted) == 2
    assert all(data and data.startswith("E") for data in redacted)
    assert answer.message.text.startswith("I notice that you've sent")


async def test_opus_5_adaptive_thinking_decodes(server: WireServer) -> None:
    (interaction,) = anthropic("test_anthropic_opus_5_features")
    async with AnthropicModel("claude-opus-5", api_key=API_KEY, base_url=server.url) as model:
        answer = await check_decoded(server, model, interaction)
    assert answer.message.text == "2 + 2 = 4"
    assert answer.message.reasoning[0].model == "claude-opus-5"


# -- encode ------------------------------------------------------------------------------------


def get_user_country() -> str:
    """The user's country."""
    return "Mexico"


async def test_a_loop_sends_thinking_back_first_in_its_tool_use_turn(
    server: WireServer, sonnet_4_0: AnthropicModel
) -> None:
    """The recorded tool loop: the second request carries the thinking block (signature byte
    for byte), the text and the tool use in the order the model gave them."""
    first, second = anthropic("test_anthropic_tool_with_thinking")
    server.reply_with(
        json_reply(first["response"]["parsed_body"]), json_reply(second["response"]["parsed_body"])
    )
    loop = ReActLoop(sonnet_4_0, tools=[get_user_country], settings=budget(3000))
    result = await loop.run("What is the largest city in the user country?")
    assert result.output == second["response"]["parsed_body"]["content"][0]["text"]
    assert (sent(server, 0), sent(server, 1)) == (recorded(first), recorded(second))


async def test_a_streamed_loop_sends_the_streamed_signature_back(
    server: WireServer, sonnet_4_0: AnthropicModel
) -> None:
    """The recorded thinking stream answered, then a follow-up: the thinking goes back as it
    streamed (text and signature rebuilt from the deltas)."""
    (interaction,) = anthropic("test_anthropic_model_thinking_part_stream")
    server.reply_with(sse_reply([stream_bytes(interaction)]))
    ask = ModelRequest((UserMessage("How do I cross the street?"),), settings=budget(1024))
    answer = await sonnet_4_0.stream(ask, Deltas())
    assert sent(server) == recorded(interaction)
    blocks = anthropic_blocks_of_stream(stream_bytes(interaction))
    server.reply_with(json_reply(anthropic("test_anthropic_model_thinking_part")[1]["response"]
                                 ["parsed_body"]))  # fmt: skip
    follow = ModelRequest((*ask.messages, answer.message, UserMessage("And a river?")),
                          settings=budget(1024))  # fmt: skip
    await sonnet_4_0.request(follow)
    thinking, said = blocks
    turn = server.requests[-1].json()["messages"][1]
    assert turn == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": thinking["thinking"], "signature": thinking["signature"]},
        {"type": "text", "text": said["text"]},
    ]}  # fmt: skip


async def test_the_next_turn_sends_the_decoded_thinking_as_recorded(
    server: WireServer, sonnet_4_5: AnthropicModel
) -> None:
    first, second = anthropic("test_anthropic_model_thinking_part")
    server.reply_with(json_reply(first["response"]["parsed_body"]))
    question = UserMessage("How do I cross the street?")
    answer = await sonnet_4_5.request(ModelRequest((question,), settings=budget(1024)))
    assert sent(server) == recorded(first)
    server.reply_with(json_reply(second["response"]["parsed_body"]))
    river = UserMessage(
        "Considering the way to cross the street, analogously, how do I cross the river?"
    )
    history = (question, answer.message, river)
    await sonnet_4_5.request(ModelRequest(history, settings=budget(1024)))
    assert sent(server) == recorded(second)


async def test_redacted_thinking_goes_back_byte_for_byte(
    server: WireServer, sonnet_4_5: AnthropicModel
) -> None:
    (interaction,) = anthropic("test_anthropic_model_thinking_part_redacted_stream")
    body = interaction["request"]["parsed_body"]
    server.reply_with(sse_reply([stream_bytes(interaction)]))
    ask = ModelRequest((UserMessage(body["messages"][0]["content"][0]["text"]),),
                       settings=budget(1024))  # fmt: skip
    async with AnthropicModel(body["model"], api_key=API_KEY, base_url=server.url) as model:
        answer = await model.stream(ask, Deltas())
        assert sent(server) == recorded(interaction)
        server.reply_with(json_reply(anthropic("test_anthropic_opus_5_features")[0]["response"]
                                     ["parsed_body"]))  # fmt: skip
        await model.request(ModelRequest((*ask.messages, answer.message, UserMessage("Go on.")),
                                         settings=budget(1024)))  # fmt: skip
    blocks = anthropic_blocks_of_stream(stream_bytes(interaction))
    assert server.requests[-1].json()["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": blocks[0]["data"]},
        {"type": "redacted_thinking", "data": blocks[1]["data"]},
        {"type": "text", "text": blocks[2]["text"]},
    ]


def responses_history() -> tuple[Message, ...]:
    """The recorded first exchange of test_anthropic_model_thinking_part_from_other_model, a
    Responses API answer (gpt-5: a reasoning item with six summaries and encrypted content,
    then a message), built by hand as the Responses provider decodes it."""
    first = anthropic("test_anthropic_model_thinking_part_from_other_model")[0]
    item, said = first["response"]["parsed_body"]["output"]
    thought = ReasoningPart(
        summary=[summary["text"] for summary in item["summary"]],
        encrypted=item["encrypted_content"], id=item["id"], provider="openai-responses",
        model="gpt-5",
    )  # fmt: skip
    answer = AssistantMessage(parts=[thought, TextPart(said["content"][0]["text"])])
    return (UserMessage("How do I cross the street?"), answer)


async def test_reasoning_from_another_model_goes_as_thinking_text(
    server: WireServer, sonnet_4_0: AnthropicModel
) -> None:
    """Another vendor's reasoning is no thinking block here: each summary goes as a
    `<thinking>` text block, as in the request Anthropic accepted; its answer decodes."""
    second = anthropic("test_anthropic_model_thinking_part_from_other_model")[1]
    server.reply_with(json_reply(second["response"]["parsed_body"]))
    river = UserMessage(
        "Considering the way to cross the street, analogously, how do I cross the river?"
    )
    history = (SystemMessage("You are a helpful assistant."), *responses_history(), river)
    answer = await sonnet_4_0.request(ModelRequest(history, settings=budget(1024)))
    assert sent(server) == recorded(second)
    await check_decoded(server, sonnet_4_0, second)
    assert answer.message.reasoning[0].signature is not None


async def test_opus_5_effort_and_summary_are_sent_as_recorded(server: WireServer) -> None:
    (interaction,) = anthropic("test_anthropic_opus_5_features")
    server.reply_with(json_reply(interaction["response"]["parsed_body"]))
    reasoning = ReasoningSettings(effort=ReasoningEffort.XHIGH, summary="auto")
    ask = ModelRequest((UserMessage("What is 2+2?"),),
                       settings=ModelSettings(reasoning=reasoning))  # fmt: skip
    async with AnthropicModel("claude-opus-5", api_key=API_KEY, base_url=server.url) as model:
        await model.request(ask)
    assert sent(server) == recorded(interaction)


@dataclass
class Sum:
    response: int


async def test_a_prompted_output_with_thinking_asks_as_recorded(
    server: WireServer, sonnet_4_0: AnthropicModel
) -> None:
    """Structured output with thinking on, answered in text (no forced final-answer tool, which
    Anthropic refuses with thinking): the request offers no tool and the answer is parsed."""
    (interaction,) = anthropic("test_anthropic_output_tool_with_thinking")
    server.reply_with(json_reply(interaction["response"]["parsed_body"]))
    loop = ReActLoop(
        sonnet_4_0, output_type=Sum, settings=budget(3000),
        output=OutputOptions(strategy=OutputStrategy.PROMPTED),
    )  # fmt: skip
    result = await loop.run("What is 3 + 3?")
    assert result.error is None
    assert result.output == Sum(6)
    mine, theirs = sent(server), recorded(interaction)
    assert '"response"' in mine.pop("system") and '"response"' in theirs.pop("system")
    assert mine == theirs


@pytest.mark.parametrize("choice", [ForcedTool("get_user_country"), ToolChoice.REQUIRED])
async def test_a_forced_tool_choice_is_refused_with_thinking_before_sending(
    server: WireServer, sonnet_4_0: AnthropicModel, choice: ForcedTool | ToolChoice
) -> None:
    spec = ToolSpec("get_user_country", "The user's country.", {"type": "object"})
    ask = ModelRequest(
        (UserMessage("Where?"),), tools=(spec,), tool_choice=choice, settings=budget(3000)
    )
    with pytest.raises(ProviderConfigurationError, match="while thinking is on") as caught:
        await sonnet_4_0.request(ask)
    assert (caught.value.option, caught.value.value) == ("tool_choice", choice)
    assert "claude-sonnet-4-0" in str(caught.value)
    assert server.requests == []


# -- the turn's order ----------------------------------------------------------------------------


def encoded_turns(model: str, *messages: Message) -> list[dict[str, Any]]:
    body = encode_request(ModelRequest(messages), model, stream=False)
    return list(body["messages"])


THOUGHT = ReasoningPart("Look it up.", signature="sig+/=", provider="anthropic",
                        model="claude-sonnet-4-5")  # fmt: skip
CALL = ToolCall("get_user_country", "{}", "toolu_1")


def test_merged_assistant_turns_keep_thinking_first() -> None:
    """Two assistant messages in a row are one turn: the thinking of the one holding the tool
    use leads it."""
    turns = encoded_turns(
        "claude-sonnet-4-5", UserMessage("Where?"), AssistantMessage("Let me see."),
        AssistantMessage(parts=[THOUGHT, CALL]), ToolMessage("toolu_1", "get_user_country", "MX"),
    )  # fmt: skip
    assert [block["type"] for block in turns[1]["content"]] == ["thinking", "text", "tool_use"]


def test_thinking_of_another_claude_family_goes_as_text() -> None:
    turns = encoded_turns(
        "claude-opus-5", UserMessage("Where?"), AssistantMessage(parts=[THOUGHT, CALL]),
        ToolMessage("toolu_1", "get_user_country", "MX"),
    )  # fmt: skip
    assert turns[1]["content"][0] == {
        "type": "text",
        "text": "<thinking>\nLook it up.\n</thinking>",
    }


def test_opaque_reasoning_without_text_from_elsewhere_is_dropped() -> None:
    sealed = ReasoningPart(encrypted="gAAA", provider="openai-responses", model="gpt-5")
    turns = encoded_turns(
        "claude-sonnet-4-5", UserMessage("Where?"), AssistantMessage(parts=[sealed, CALL]),
        ToolMessage("toolu_1", "get_user_country", "MX"),
    )  # fmt: skip
    assert [block["type"] for block in turns[1]["content"]] == ["tool_use"]


def paused(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    usage = {"input_tokens": 1, "output_tokens": 1}
    return {"type": "message", "id": "msg_1", "model": "claude-sonnet-4-5", "role": "assistant",
            "content": content, "stop_reason": stop, "usage": usage}  # fmt: skip


async def test_a_paused_turn_keeps_its_parts_in_order(
    server: WireServer, sonnet_4_5: AnthropicModel
) -> None:
    thinking = {"type": "thinking", "thinking": "Look it up.", "signature": "sig+/="}
    use = {"type": "tool_use", "id": "toolu_1", "name": "get_user_country", "input": {}}
    server.reply_with(
        json_reply(paused([thinking, {"type": "text", "text": "One "}], "pause_turn")),
        json_reply(paused([{"type": "text", "text": "moment."}, use], "tool_use")),
    )
    answer = await sonnet_4_5.request(ModelRequest((UserMessage("Where?"),)))
    assert answer.message.parts == (
        ReasoningPart("Look it up.", signature="sig+/=", provider="anthropic",
                      model="claude-sonnet-4-5"),
        TextPart("One "),
        TextPart("moment."),
        ToolCall("get_user_country", "{}", "toolu_1"),
    )  # fmt: skip

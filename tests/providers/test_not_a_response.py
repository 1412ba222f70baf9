"""A 200 whose JSON body is no answer of the protocol (a Messages `message` without its
`content` list, a Responses `response` without its `output` list) is an InvalidResponseError,
never an empty success: the provider conformance kit's `malformed_body` check found both
decoded as a blank answer."""

from __future__ import annotations

import pytest

from reactloop._core._messages import ModelRequest, UserMessage
from reactloop._errors import InvalidResponseError
from reactloop._providers import AnthropicModel, OpenAIResponsesModel
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest((UserMessage("hi"),))


@pytest.mark.parametrize("content", [None, {"text": "?"}, "text"])
async def test_a_message_without_its_content_list_is_invalid(
    server: WireServer, anthropic: AnthropicModel, content: object
) -> None:
    body: dict[str, object] = {"id": "msg_1", "type": "message", "role": "assistant"}
    if content is not None:
        body["content"] = content
    server.reply_with(json_reply(body))
    with pytest.raises(InvalidResponseError, match=r"not a Messages `message`: its 'content'"):
        await anthropic.request(REQUEST)


@pytest.mark.parametrize("output", [None, "?", {"type": "message"}])
async def test_a_response_without_its_output_list_is_invalid(
    server: WireServer, responses: OpenAIResponsesModel, output: object
) -> None:
    body: dict[str, object] = {"id": "resp_1", "object": "response", "status": "completed"}
    if output is not None:
        body["output"] = output
    server.reply_with(json_reply(body))
    with pytest.raises(
        InvalidResponseError, match=r"not a Responses `response`: its 'output'"
    ) as caught:
        await responses.request(REQUEST)
    assert (caught.value.status, caught.value.provider) == (200, "openai-responses")


async def test_an_empty_content_list_is_still_an_answer(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    usage = {"input_tokens": 1, "output_tokens": 0}
    body = {
        "id": "msg_1",
        "type": "message",
        "content": [],
        "stop_reason": "end_turn",
        "usage": usage,
    }
    server.reply_with(json_reply(body))
    response = await anthropic.request(REQUEST)
    assert response.message.parts == ()

"""Text that is not valid Unicode never breaks a provider (adr/0022): over a real loopback socket,
a run whose tool returns a non-UTF-8 file name sends it repaired, and a request built by hand
with such text is repaired as it is encoded, on OpenAI's wire and Anthropic's."""

from __future__ import annotations

import os

import pytest

from reactloop._core._contracts import Model
from reactloop._core._decisions import StopReason
from reactloop._core._messages import AssistantMessage, ModelRequest, ToolCall, UserMessage
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel, OpenAIModel
from reactloop._tools._tool import tool
from tests.providers.render import anthropic_json, openai_json
from tests.providers.wire_server import Request, WireServer, json_reply

pytestmark = pytest.mark.anyio

BAD = os.fsdecode(b"report-\xff.txt")
SHOWN = "report-\ufffd.txt"


@tool
def list_files() -> str:
    """The files in the folder."""
    return BAD


def body_text(request: Request) -> str:
    return request.body.decode()  # the body is UTF-8: decoding would fail otherwise


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_run_sends_a_repaired_tool_result(
    server: WireServer, openai: OpenAIModel, anthropic: AnthropicModel, provider: str
) -> None:
    model: Model = openai if provider == "openai" else anthropic
    render = openai_json if provider == "openai" else anthropic_json
    called = ToolCall("list_files", "{}", "call_1")
    server.reply_with(json_reply(render("", [called])), json_reply(render("Done.")))
    result = await ReActLoop(model, tools=[list_files]).run("What files?")
    assert (result.stop_reason, result.output, result.error) == (
        StopReason.COMPLETED,
        "Done.",
        None,
    )
    sent = body_text(server.requests[1])
    assert SHOWN in sent and "not valid Unicode" in sent


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_request_with_invalid_unicode_is_repaired_as_it_is_sent(
    server: WireServer, openai: OpenAIModel, anthropic: AnthropicModel, provider: str
) -> None:
    model: Model = openai if provider == "openai" else anthropic
    render = openai_json if provider == "openai" else anthropic_json
    server.reply_with(json_reply(render("Seen.")))
    messages = (UserMessage(BAD), AssistantMessage(BAD), UserMessage("and?"))
    response = await model.request(ModelRequest(messages, instructions=BAD))
    assert response.message.text == "Seen."
    sent = body_text(server.requests[0])
    assert sent.count(SHOWN) == 3

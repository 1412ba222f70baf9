"""Text that is not valid Unicode never breaks a provider (adr/0022): over a real loopback socket,
a run whose tool returns a non-UTF-8 file name sends it repaired, and a request built by hand
with such text is repaired as it is encoded, on OpenAI's wire, Anthropic's and Gemini's."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from reactloop._core._contracts import Model
from reactloop._core._decisions import StopReason
from reactloop._core._messages import AssistantMessage, ModelRequest, ToolCall, UserMessage
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel
from reactloop._tools._tool import tool
from tests.providers.render import anthropic_json, openai_json
from tests.providers.render_gemini import gemini_answer
from tests.providers.wire_server import Request, WireServer, json_reply

pytestmark = pytest.mark.anyio

BAD = os.fsdecode(b"report-\xff.txt")
SHOWN = "report-\ufffd.txt"


@tool
def list_files() -> str:
    """The files in the folder."""
    return BAD


RENDER: dict[str, Callable[..., object]] = {
    "openai": openai_json,
    "anthropic": anthropic_json,
    "gemini": gemini_answer,
}


@pytest.fixture(params=sorted(RENDER))
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def model(
    provider: str, openai: OpenAIModel, anthropic: AnthropicModel, gemini: GeminiModel
) -> Model:
    """The provider's model on the wire server."""
    models: dict[str, Model] = {"openai": openai, "anthropic": anthropic, "gemini": gemini}
    return models[provider]


def body_text(request: Request) -> str:
    return request.body.decode()  # the body is UTF-8: decoding would fail otherwise


async def test_a_run_sends_a_repaired_tool_result(
    server: WireServer, model: Model, provider: str
) -> None:
    render = RENDER[provider]
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


async def test_a_request_with_invalid_unicode_is_repaired_as_it_is_sent(
    server: WireServer, model: Model, provider: str
) -> None:
    render = RENDER[provider]
    server.reply_with(json_reply(render("Seen.")))
    messages = (UserMessage(BAD), AssistantMessage(BAD), UserMessage("and?"))
    response = await model.request(ModelRequest(messages, instructions=BAD))
    assert response.message.text == "Seen."
    sent = body_text(server.requests[0])
    assert sent.count(SHOWN) == 3

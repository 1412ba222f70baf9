"""An MCP tool's image reaches the model as an image, on each wire format: a real MCP server
process (tests/helpers/mcp_server.py over stdio) answers `picture` with a caption and a PNG, and
the loop's next request, sent over loopback to the wire server (tests/providers/wire_server.py),
carries that PNG as the vendor's image block, in a body the vendor's own request types accept."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from reactloop import ReActLoop
from reactloop._core import Model, ToolCall
from reactloop._providers import AnthropicModel, OpenAIModel, OpenAIResponsesModel
from reactloop.messages import ImagePart, TextPart
from tests.helpers.mcp_helpers import stdio_server
from tests.helpers.mcp_server import PNG
from tests.helpers.vendor_schemas import wire_problems
from tests.providers.render import anthropic_json, openai_json
from tests.providers.render_responses import responses_json
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

KEY = "sk-test-0123456789"
CALL = ToolCall("picture", "{}", "call_pic")
DATA = base64.b64encode(PNG).decode()
DATA_URL = f"data:image/png;base64,{DATA}"


def _anthropic_image(body: dict[str, Any]) -> list[Any]:
    """The image blocks of the tool_result of `call_pic` (Anthropic Messages)."""
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    (result,) = [b for b in blocks if b["type"] == "tool_result"]
    assert result["tool_use_id"] == CALL.id
    assert {"type": "text", "text": "a blank picture"} in result["content"]
    return [b["source"] for b in result["content"] if b["type"] == "image"]


def _responses_image(body: dict[str, Any]) -> list[Any]:
    """The input_image items of the function_call_output of `call_pic` (Responses)."""
    (output,) = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert output["call_id"] == CALL.id and isinstance(output["output"], list)
    return [item["image_url"] for item in output["output"] if item["type"] == "input_image"]


def _chat_image(body: dict[str, Any]) -> list[Any]:
    """The image_url parts of the user message that follows the tool message (Chat)."""
    messages = body["messages"]
    (at,) = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    assert messages[at]["tool_call_id"] == CALL.id
    after = messages[at + 1]
    assert after["role"] == "user" and isinstance(after["content"], list)
    return [part["image_url"]["url"] for part in after["content"] if part["type"] == "image_url"]


Setup = tuple[Callable[[str], Model], Callable[..., Any], Callable[[dict[str, Any]], list[Any]]]
WIRES: dict[str, Setup] = {
    "anthropic": (
        lambda url: AnthropicModel("claude-sonnet-4-5", api_key=KEY, base_url=url),
        anthropic_json,
        _anthropic_image,
    ),
    "responses": (
        lambda url: OpenAIResponsesModel("gpt-5", api_key=KEY, base_url=f"{url}/v1"),
        responses_json,
        _responses_image,
    ),
    "chat": (
        lambda url: OpenAIModel("gpt-4o", api_key=KEY, base_url=f"{url}/v1"),
        openai_json,
        _chat_image,
    ),
}
SOURCES = {
    "anthropic": {"type": "base64", "media_type": "image/png", "data": DATA},
    "responses": DATA_URL,
    "chat": DATA_URL,
}


@pytest.mark.parametrize("wire", list(WIRES))
async def test_an_mcp_image_reaches_the_model_as_an_image(wire: str) -> None:
    make, answer, images_of = WIRES[wire]
    async with WireServer.running() as server:
        server.reply_with(json_reply(answer("", [CALL])), json_reply(answer("a red square")))
        async with make(server.url) as model:  # type: ignore[attr-defined]
            result = await ReActLoop(model, tools=[stdio_server()]).run("what is it?")
    picture = result.steps[0].tool_results[0]
    assert picture.parts == (TextPart("a blank picture"), ImagePart(PNG, media_type="image/png"))
    assert result.output == "a red square"
    second = server.requests[1]
    assert wire_problems(second.path, second.body) == []
    assert images_of(second.json()) == [SOURCES[wire]]

"""docs/models.md's table of providers x capabilities is true: each cell is read from the page and
checked against the provider, over the loopback wire server (a "yes" the provider cannot do, or a
"no" it can, fails here)."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

import reactloop.providers
from reactloop.errors import ProviderConfigurationError, UnsupportedContentError
from reactloop.messages import (
    AssistantMessage,
    DocumentPart,
    ImagePart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop.models import ModelDelta, ModelRequest, ModelSettings, ReasoningSettings, ToolSpec
from reactloop.providers import (
    HOSTS,
    AnthropicModel,
    AzureOpenAIModel,
    AzureOpenAIResponsesModel,
    GeminiModel,
    OpenAIModel,
    OpenAIResponsesModel,
    model_from_string,
)
from tests.helpers.vendor_schemas import wire_problems
from tests.providers.render import anthropic_json, anthropic_stream, openai_json, openai_stream
from tests.providers.render_gemini import (
    call_part,
    gemini_answer,
    gemini_answer_stream,
    gemini_json,
    thought_part,
)
from tests.providers.render_responses import responses_json, responses_stream
from tests.providers.wire_server import WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

PAGE = Path(__file__).resolve().parents[2] / "docs" / "models.md"
KEY = "sk-test-0123456789"
OPAQUE = "OPAQUE-vendor-value-7f3a"
CALL = ToolCall("look", "{}", "call_1")
LOOK = ToolSpec("look", "Look something up.", {"type": "object", "properties": {}})


def table() -> dict[str, dict[str, str]]:
    """The capability table's rows by provider cell, each a mapping of column to cell."""
    lines = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != len(head) or not cells[0].startswith("`"):
            break
        rows[cells[0]] = dict(zip(head, cells, strict=True))
    return rows


def _anthropic_reasoning() -> dict[str, Any]:
    body = anthropic_json("", [CALL])
    thinking = {"type": "thinking", "thinking": "I should look.", "signature": OPAQUE}
    body["content"] = [thinking, *body["content"]]
    body["usage"] = {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 7}
    return body


def _responses_reasoning() -> dict[str, Any]:
    body = responses_json("", [CALL], reasoning=True)
    body["output"][0]["encrypted_content"] = OPAQUE
    body["usage"] = {**body["usage"], "input_tokens_details": {"cached_tokens": 7}}
    return body


def _chat_reasoning() -> dict[str, Any]:
    body = openai_json("", [CALL])
    body["choices"][0]["message"]["reasoning_content"] = f"I should look. {OPAQUE}"
    body["usage"] = {**body["usage"], "prompt_tokens_details": {"cached_tokens": 7}}
    return body


def _gemini_reasoning() -> dict[str, Any]:
    parts = [thought_part("I should look."), call_part(CALL, OPAQUE)]
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "cachedContentTokenCount": 7}
    return gemini_json(parts, usage=usage)


@attrs.frozen
class Row:
    """How to build a row's provider against the server, and its wire formats."""

    build: Callable[[str], Any]
    usual: Callable[[], Any]  # its usual model at its vendor's own URL (nothing is sent)
    reasoning: Callable[[], dict[str, Any]]
    plain: Callable[[str], dict[str, Any]]
    stream: Callable[[str], list[bytes]]


AZURE = "https://my-resource.openai.azure.com"
ROWS = {
    "`AzureOpenAIResponsesModel`": Row(
        lambda url: AzureOpenAIResponsesModel("gpt-5", endpoint=url, api_key=KEY),
        lambda: AzureOpenAIResponsesModel("gpt-5", endpoint=AZURE, api_key=KEY),
        _responses_reasoning,
        responses_json,
        responses_stream,
    ),
    "`AzureOpenAIModel`": Row(  # a DeepSeek deployment: Azure's v1 API serves it too
        lambda url: AzureOpenAIModel("deepseek-r1", endpoint=url, api_key=KEY),
        lambda: AzureOpenAIModel("gpt-4.1", endpoint=AZURE, api_key=KEY),
        _chat_reasoning,
        openai_json,
        openai_stream,
    ),
    "`AnthropicModel`": Row(
        lambda url: AnthropicModel("claude-opus-5", api_key=KEY, base_url=url),
        lambda: AnthropicModel("claude-sonnet-4-5", api_key=KEY),
        _anthropic_reasoning,
        anthropic_json,
        anthropic_stream,
    ),
    "`OpenAIResponsesModel`": Row(
        lambda url: OpenAIResponsesModel("gpt-5", api_key=KEY, base_url=f"{url}/v1"),
        lambda: OpenAIResponsesModel("gpt-5", api_key=KEY),
        _responses_reasoning,
        responses_json,
        responses_stream,
    ),
    "`GeminiModel`": Row(
        lambda url: GeminiModel("gemini-3-pro-preview", api_key=KEY, base_url=url),
        lambda: GeminiModel("gemini-3-flash-preview", api_key=KEY),
        _gemini_reasoning,
        gemini_answer,
        gemini_answer_stream,
    ),
    "`OpenAIModel`": Row(
        lambda url: OpenAIModel(
            "deepseek-reasoner", api_key=KEY, base_url=f"{url}/v1", provider="openai-compatible"
        ),
        lambda: OpenAIModel("gpt-4o", api_key=KEY),
        _chat_reasoning,
        openai_json,
        openai_stream,
    ),
}

Probe = Callable[[Row, WireServer], Awaitable[str]]
CHART = b"\x89PNG\r\n\x1a\n" + b"chart" * 20
PHOTO = b"\xff\xd8\xff\xe0" + b"photo" * 20
PDF = b"%PDF-1.4\n" + b"page" * 20


def said(value: bool) -> str:
    return "yes" if value else "no"


async def reasoning_sent_back(row: Row, server: WireServer) -> str:
    server.reply_with(json_reply(row.reasoning()), json_reply(row.plain("done")))
    async with row.build(server.url) as model:
        first = await model.request(ModelRequest((UserMessage("go"),), tools=(LOOK,)))
        call = first.message.tool_calls[0]
        history = (UserMessage("go"), first.message, ToolMessage(call.id, call.name, "seen"))
        await model.request(ModelRequest(history, tools=(LOOK,)))
    return said(bool(first.message.reasoning) and OPAQUE.encode() in server.requests[-1].body)


async def reasoning_setting(row: Row, server: WireServer) -> str:
    server.reply_with(json_reply(row.plain("done")))
    settings = ModelSettings(max_output_tokens=4096, reasoning=ReasoningSettings(effort="high"))
    async with row.build(server.url) as model:
        try:
            await model.request(ModelRequest((UserMessage("go"),), settings=settings))
        except ProviderConfigurationError:
            return "no"
    return said(b'"high"' in server.requests[-1].body)


async def cache_usage(row: Row, server: WireServer) -> str:
    server.reply_with(json_reply(row.reasoning()))
    async with row.build(server.url) as model:
        response = await model.request(ModelRequest((UserMessage("go"),), tools=(LOOK,)))
    return said(response.usage.cache_read_tokens == 7)


async def streaming(row: Row, server: WireServer) -> str:
    server.reply_with(sse_reply(row.stream("Hello there")))
    deltas: list[ModelDelta] = []

    async def sink(delta: ModelDelta) -> None:
        deltas.append(delta)

    async with row.build(server.url) as model:
        response = await model.stream(ModelRequest((UserMessage("go"),)), sink)
    return said(len(deltas) > 1 and response.message.text == "Hello there")


async def images(row: Row, server: WireServer) -> str:
    """An image and a PDF in the user's message and an image returned by a tool all reach the
    wire as their bytes (base64), and nothing is refused."""
    server.reply_with(json_reply(row.plain("seen")))
    look = ToolMessage("call_1", "look", parts=["the chart:", ImagePart(CHART)])
    history = (
        UserMessage(parts=["compare", ImagePart(PHOTO), DocumentPart(PDF, title="a.pdf")]),
        AssistantMessage(tool_calls=[ToolCall("look", "{}", "call_1")]),
        look,
    )
    async with row.build(server.url) as model:
        try:
            await model.request(ModelRequest(history, tools=(LOOK,)))
        except UnsupportedContentError:
            return "no"
    body = server.requests[-1].body
    return said(all(base64.b64encode(data) in body for data in (CHART, PHOTO, PDF)))


async def structured_output(row: Row, server: WireServer) -> str:
    model = row.usual()
    strategies = [
        "native" if model.supports_native_output else "",
        "tool" if model.supports_forced_tool_choice else "",
        "prompted",
    ]
    await model.aclose()
    return ", ".join(strategy for strategy in strategies if strategy)


PROBES: dict[str, Probe] = {
    "reasoning sent back": reasoning_sent_back,
    "reasoning setting": reasoning_setting,
    "images and documents": images,
    "cache usage reported": cache_usage,
    "structured output": structured_output,
    "streaming": streaming,
}


def test_the_table_has_a_row_per_provider_and_a_probe_per_column() -> None:
    rows = table()
    assert set(rows) == set(ROWS)
    assert set(next(iter(rows.values()))) == {"provider", "model strings", *PROBES}


def test_every_provider_class_has_a_row() -> None:
    """Each class of `reactloop.providers` that is a model (`request` and `stream`), but the
    fallback wrapper, which is no provider of its own."""
    models = {
        f"`{name}`"
        for name in reactloop.providers.__all__
        if isinstance(cls := getattr(reactloop.providers, name), type)
        and callable(getattr(cls, "request", None))
        and callable(getattr(cls, "stream", None))
        and name != "FallbackModel"
    }
    assert models == set(table())


STRINGS = ["openai", "openai-responses", "anthropic", "google", "gemini", "azure",
           "azure-responses", "openai-compatible", *HOSTS]  # fmt: skip
"""Every prefix `model_from_string` takes (the forms of docs/providers.md)."""


def test_each_row_lists_the_model_strings_that_build_its_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("AZURE_OPENAI_ENDPOINT", "OLLAMA_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://my-resource.openai.azure.com")
    for variable in ("OPENAI", "ANTHROPIC", "GEMINI", "AZURE_OPENAI", *map(str.upper, HOSTS)):
        monkeypatch.setenv(f"{variable}_API_KEY", KEY)
    built: dict[str, set[str]] = {}
    for prefix in STRINGS:
        url = "@http://127.0.0.1:8000/v1" if prefix in ("openai-compatible", "vllm") else ""
        model = model_from_string(f"{prefix}:some-model{url}")
        built.setdefault(f"`{type(model).__name__}`", set()).add(f"`{prefix}:`")
    listed = {row: set(cells["model strings"].split(", ")) for row, cells in table().items()}
    assert listed == built


@pytest.mark.parametrize("provider", sorted(ROWS))
@pytest.mark.parametrize("column", sorted(PROBES))
async def test_each_cell_says_what_the_provider_does(
    provider: str, column: str, server: WireServer
) -> None:
    found = await PROBES[column](ROWS[provider], server)
    assert table()[provider][column] == found
    sent = [wire_problems(r.path, r.body) for r in server.requests if r.method == "POST"]
    assert [problem for problems in sent for problem in problems] == []  # the vendors' types


@pytest.fixture
async def server() -> Any:
    async with WireServer.running() as running:
        yield running

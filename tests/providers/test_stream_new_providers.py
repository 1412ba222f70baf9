"""`loop.stream()` on issue 27's providers, as a user reads it: a two-step tool loop over loopback
on GeminiModel (2.5 and 3, thoughts asked with `summary`), both Azure classes and a host preset;
the events come in the model's order (reasoning, text, the call's pieces), each step's
`StepFinished` carries the vendor's usage, and `loop.run()` of the same script ends equal to the
streamed run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import orjson
import pytest

from reactloop import ModelSettings, ReActLoop, RunResult
from reactloop.events import (
    Event,
    ReasoningStreamed,
    StepFinished,
    TextStreamed,
    ToolCallFinished,
    ToolCallStreamed,
)
from reactloop.messages import ToolCall
from reactloop.models import ReasoningSettings
from reactloop.providers import (
    AzureOpenAIModel,
    AzureOpenAIResponsesModel,
    GeminiModel,
    OpenAIModel,
)
from tests.providers.render import openai_json, openai_stream, sse
from tests.providers.render_gemini import (
    answer_parts,
    gemini_json,
    gemini_stream,
    thought_part,
)
from tests.providers.render_responses import responses_json, responses_stream
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

KEY = "sk-test-SECRET-0123456789abcdef"
WEATHER = ToolCall("get_weather", '{"city": "Paris"}', "call_1")
THOUGHT = "Paris weather: ask the tool."
SAID, FINAL = "Let me check.", "It is 18 C in Paris."
USAGE = (10, 5)  # every renderer's usage: input, output tokens
JsonObject = dict[str, Any]
Render = Callable[[str, tuple[ToolCall, ...], bool], Reply]


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    return "18 C, dry"


def gemini(text: str, calls: tuple[ToolCall, ...], stream: bool) -> Reply:
    """A signed thought first on the tool step (Gemini 3's rule: the call carries one too)."""
    thoughts = [thought_part(THOUGHT, "c2lnLXRob3VnaHQ=")] if calls else []
    parts = thoughts + answer_parts(text, calls, {WEATHER.id: "c2lnLWNhbGw="})
    return sse_reply(gemini_stream(parts)) if stream else json_reply(gemini_json(parts))


def responses(text: str, calls: tuple[ToolCall, ...], stream: bool) -> Reply:
    if stream:
        return sse_reply(responses_stream(text, calls, reasoning=bool(calls)))
    return json_reply(responses_json(text, calls, reasoning=bool(calls)))


def chat(text: str, calls: tuple[ToolCall, ...], stream: bool) -> Reply:
    return sse_reply(openai_stream(text, calls)) if stream else json_reply(openai_json(text, calls))


def openrouter(text: str, calls: tuple[ToolCall, ...], stream: bool) -> Reply:
    """OpenRouter's `reasoning` field before the text on the tool step."""
    if not calls:
        return chat(text, calls, stream)
    if not stream:
        body: JsonObject = openai_json(text, calls)
        body["choices"][0]["message"]["reasoning"] = THOUGHT
        return json_reply(body)
    first: JsonObject = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"}
    delta = {"role": "assistant", "content": "", "reasoning": THOUGHT}
    first["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
    return sse_reply([sse(first), *openai_stream(text, calls)[1:]])


THINK = ModelSettings(reasoning=ReasoningSettings(summary="auto"))
PROVIDERS: dict[str, tuple[Callable[[str], Any], Render, bool]] = {
    "gemini-2.5": (
        lambda url: GeminiModel("gemini-2.5-flash", api_key=KEY, base_url=url),
        gemini,
        True,
    ),
    "gemini-3": (
        lambda url: GeminiModel("gemini-3-pro-preview", api_key=KEY, base_url=url),
        gemini,
        True,
    ),
    "azure": (
        lambda url: AzureOpenAIModel("prod", model="gpt-4.1", endpoint=url, api_key=KEY),
        chat,
        False,
    ),
    "azure-responses": (
        lambda url: AzureOpenAIResponsesModel("prod", model="gpt-5", endpoint=url, api_key=KEY),
        responses,
        True,
    ),
    "openrouter": (
        lambda url: OpenAIModel(
            "deepseek/deepseek-r1",
            host="openrouter",
            api_key=KEY,
            base_url=f"{url}/openrouter/api/v1",
        ),
        openrouter,
        True,
    ),
}


def scripted(render: Render) -> Callable[[Request], Reply]:
    """Each run: the tool step, then the final answer; streamed when the request asks."""
    steps: list[tuple[str, tuple[ToolCall, ...]]] = []

    def answer(request: Request) -> Reply:
        if not steps:
            steps.extend([(FINAL, ()), (SAID, (WEATHER,))])
        text, calls = steps.pop()
        asked = "streamGenerateContent" in request.path or bool(request.json().get("stream"))
        return render(text, calls, asked)

    return answer


def kinds(events: list[Event]) -> list[str]:
    """The streamed events' kinds, consecutive repeats folded."""
    names: list[str] = []
    for event in events:
        name = type(event).__name__
        shown = name.endswith("Streamed") or isinstance(event, StepFinished | ToolCallFinished)
        if shown and (not names or names[-1] != name):
            names.append(name)
    return names


def same(result: RunResult[str]) -> tuple[object, ...]:
    """What a run ended with, a call's id left out (Gemini sends none: each run makes its own)."""
    messages = [step.response.message for step in result.steps if step.response is not None]
    parts = [
        attrs.evolve(part, id="") if isinstance(part, ToolCall) else part
        for message in messages
        for part in message.parts
    ]
    return (result.output, result.usage, parts)


@pytest.mark.parametrize("name", list(PROVIDERS))
async def test_a_tool_loop_streams_in_order_and_ends_as_the_plain_run(
    server: WireServer, name: str
) -> None:
    build, render, reasons = PROVIDERS[name]
    server.handler = scripted(render)
    async with build(server.url) as model:
        settings = THINK if name.startswith("gemini") else ModelSettings()
        loop = ReActLoop(model, tools=[get_weather], settings=settings)
        seen: list[Event] = []
        async with loop.stream("Weather in Paris?") as events:
            async for event in events:
                seen.append(event)
        streamed = await events.result()
        plain = await loop.run("Weather in Paris?")
    first = ["ReasoningStreamed"] if reasons else []
    assert kinds(seen) == [
        *first, "TextStreamed", "ToolCallStreamed", "ToolCallFinished", "StepFinished",
        "TextStreamed", "StepFinished",
    ]  # fmt: skip
    said = "".join(e.text for e in seen if isinstance(e, TextStreamed))
    assert said == SAID + FINAL
    if reasons:
        thought = "".join(e.text for e in seen if isinstance(e, ReasoningStreamed))
        assert thought
    pieces = "".join(e.arguments_delta for e in seen if isinstance(e, ToolCallStreamed))
    assert orjson.loads(pieces) == orjson.loads(WEATHER.arguments)
    finished = [e for e in seen if isinstance(e, StepFinished)]
    assert [(e.usage.input_tokens, e.usage.output_tokens) for e in finished] == [USAGE] * 2
    assert streamed.error is None and streamed.output == FINAL
    assert same(plain) == same(streamed)

"""`ReActLoop` end to end with each real provider: three tool steps and a final answer, over the
loopback server, streaming and not; every request sent is checked against its protocol."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reactloop._core._contracts import Model
from reactloop._core._decisions import StopReason
from reactloop._core._events import Event, RunFinished, TextStreamed, ToolCallStreamed
from reactloop._core._messages import ToolCall
from reactloop._core._state import RunResult
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel
from tests.providers.conftest import API_KEY
from tests.providers.protocol import (
    OpenAIRequestSchema,
    check_anthropic_headers,
    check_anthropic_request,
)
from tests.providers.render import anthropic_json, anthropic_stream, openai_json, openai_stream
from tests.providers.render_gemini import gemini_answer, gemini_answer_stream
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

FINAL = "Paris is 18 C and Rome 21 C at 12:00."
STEPS = (
    ("Let me look.", (ToolCall("get_weather", '{"city": "Paris"}', "call_1"),)),
    (
        "",
        (
            ToolCall("get_weather", '{"city": "Rome"}', "call_2"),
            ToolCall("get_time", "{}", "call_3"),
        ),
    ),
    ("One more check.", (ToolCall("get_time", "{}", "call_4"),)),
    (FINAL, ()),
)


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    return {"Paris": "18 C", "Rome": "21 C"}[city]


def get_time() -> str:
    """The time now."""
    return "12:00"


def results_in(request: Request) -> int:
    """How many tool results the request's history carries, in any protocol."""
    if "contents" in request.json():  # Gemini: functionResponse parts
        parts = [p for turn in request.json()["contents"] for p in turn["parts"]]
        return sum("functionResponse" in part for part in parts)
    messages = request.json()["messages"]
    if request.path.endswith("/chat/completions"):
        return sum(message["role"] == "tool" for message in messages)
    blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
    return sum(block["type"] == "tool_result" for block in blocks)


def is_stream(request: Request) -> bool:
    """Whether the request asks for a stream: a `stream` field, or Gemini's streaming path."""
    return bool(request.json().get("stream")) or ":streamGenerateContent" in request.path


def conversation(
    streamed: Callable[..., list[bytes]], whole: Callable[..., object]
) -> Callable[[Request], Reply]:
    """Answer by how far the conversation got: steps after 0, 1, 3 and 4 tool results."""
    by_results = {0: STEPS[0], 1: STEPS[1], 3: STEPS[2], 4: STEPS[3]}

    def answer(request: Request) -> Reply:
        text, calls = by_results[results_in(request)]
        if is_stream(request):
            return sse_reply(streamed(text, calls))
        return json_reply(whole(text, calls))

    return answer


def check_result(result: RunResult) -> None:
    assert result.error is None
    assert (result.stop_reason, result.output) == (StopReason.COMPLETED, FINAL)
    assert len(result.steps) == 4
    assert list(result.tools_used) == ["get_weather", "get_time"]
    assert [r.content for s in result.steps for r in s.tool_results] == [
        "18 C",
        "21 C",
        "12:00",
        "12:00",
    ]


async def run_both_ways(loop: ReActLoop) -> tuple[RunResult, list[Event]]:
    plain = await loop.run("Weather in Paris and Rome, and the time?")
    events: list[Event] = []
    async with loop.stream("Weather in Paris and Rome, and the time?") as stream:
        async for event in stream:
            events.append(event)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    check_result(plain)
    check_result(finished.result)
    return finished.result, events


def check_events(events: list[Event]) -> None:
    texts = "".join(e.text for e in events if isinstance(e, TextStreamed))
    assert texts == "Let me look.One more check." + FINAL
    names = {e.name for e in events if isinstance(e, ToolCallStreamed) and e.name}
    assert names == {"get_weather", "get_time"}


async def test_openai_runs_three_tool_steps(
    server: WireServer, openai: OpenAIModel, openai_schema: OpenAIRequestSchema
) -> None:
    server.handler = conversation(openai_stream, openai_json)
    _, events = await run_both_ways(ReActLoop(openai, tools=[get_weather, get_time]))
    check_events(events)
    assert len(server.requests) == 8
    for request in server.requests:
        openai_schema.check(request.json())
        assert request.headers["authorization"].startswith("Bearer ")


async def test_anthropic_runs_three_tool_steps(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    server.handler = conversation(anthropic_stream, anthropic_json)
    _, events = await run_both_ways(
        ReActLoop(anthropic, tools=[get_weather, get_time], instructions="Be brief.")
    )
    check_events(events)
    assert len(server.requests) == 8
    for request in server.requests:
        check_anthropic_request(request.json())
        check_anthropic_headers(request.headers)
        assert request.json()["system"] == "Be brief."


async def test_gemini_runs_three_tool_steps(server: WireServer, gemini: GeminiModel) -> None:
    server.handler = conversation(gemini_answer_stream, gemini_answer)
    _, events = await run_both_ways(
        ReActLoop(gemini, tools=[get_weather, get_time], instructions="Be brief.")
    )
    check_events(events)
    assert len(server.requests) == 8
    for request in server.requests:
        assert request.headers["x-goog-api-key"] == API_KEY
        assert request.json()["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    paths = {request.path.split(":")[-1] for request in server.requests}
    assert paths == {"generateContent", "streamGenerateContent?alt=sse"}


async def test_a_capped_run_makes_its_final_call_without_tools(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    def answer(request: Request) -> Reply:
        text, calls = STEPS[0] if results_in(request) == 0 else (FINAL, ())
        return json_reply(anthropic_json(text, calls))

    server.handler = answer
    loop = ReActLoop(anthropic, tools=[get_weather, get_time], max_iterations=1)
    result = await loop.run("Weather?")
    final = server.requests[-1].json()
    check_anthropic_request(final)
    assert final["tool_choice"] == {"type": "none"}
    assert result.output == FINAL


async def close(model: Model) -> None:
    assert isinstance(model, OpenAIModel | AnthropicModel | GeminiModel)
    await model.aclose()


SPECS = {
    "openai": "openai:gpt-4o-mini",
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai-compatible": "openai-compatible:qwen2.5:7b@{url}/v1",
    "google": "google:gemini-2.5-flash",
}


@pytest.mark.parametrize("prefix", sorted(SPECS))
async def test_a_model_string_drives_the_loop(
    server: WireServer, monkeypatch: pytest.MonkeyPatch, prefix: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-env")
    monkeypatch.setenv("GEMINI_BASE_URL", server.url)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    spec = SPECS[prefix].format(url=server.url)
    if prefix == "anthropic":
        server.handler = conversation(anthropic_stream, anthropic_json)
    elif prefix == "google":
        server.handler = conversation(gemini_answer_stream, gemini_answer)
    else:
        server.handler = conversation(openai_stream, openai_json)
    loop = ReActLoop(model=spec, tools=[get_weather, get_time])
    try:
        result, _ = await run_both_ways(loop)
    finally:
        await close(loop.config.model)
    assert result.output == FINAL
    name = spec.split(":", 1)[1].split("@")[0]
    sent = server.requests[0]
    assert sent.json().get("model", sent.path) in (name, f"/v1beta/models/{name}:generateContent")
    key_header = {"openai": "authorization", "anthropic": "x-api-key", "google": "x-goog-api-key"}
    if prefix in key_header:
        assert server.requests[0].headers[key_header[prefix]].endswith("-env")
    else:
        assert "authorization" not in server.requests[0].headers


def failing_first(failure: Reply, then: Callable[[Request], Reply]) -> Callable[[Request], Reply]:
    """Answer the first request with `failure`, every later one with `then`."""
    seen: list[Request] = []

    def answer(request: Request) -> Reply:
        seen.append(request)
        return failure if len(seen) == 1 else then(request)

    return answer


async def test_a_429_is_retried_after_its_wait_and_the_run_completes(
    server: WireServer, openai: OpenAIModel
) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    busy = json_reply(
        {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}},
        429,
        [("retry-after", "2")],
    )
    server.handler = failing_first(busy, conversation(openai_stream, openai_json))
    result = await ReActLoop(openai, tools=[get_weather, get_time], sleep=sleep).run("Weather?")
    check_result(result)
    assert waits == [2.0] and len(server.requests) == 5


async def test_a_401_is_not_retried_and_fails_the_run(
    server: WireServer, anthropic: AnthropicModel
) -> None:
    denied = {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}
    server.handler = failing_first(
        json_reply(denied, 401), conversation(anthropic_stream, anthropic_json)
    )
    result = await ReActLoop(anthropic, tools=[get_weather, get_time]).run("Weather?")
    assert result.stop_reason is StopReason.ERROR and len(server.requests) == 1
    assert result.error is not None and result.error.code.value == "authentication"

"""`FallbackModel` over real loopback servers: Anthropic overloaded (529) or a 503 hands the call
to another vendor after the loop's retries; the switch shows in events, the journal and a
resumed run; errors that must not switch, and cancellation, never do."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from attrs import evolve

from reactloop._core._events import Event, ModelRetrying, ModelSwitched, StepFinished
from reactloop._core._messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    UserMessage,
)
from reactloop._core._records import ResponseSaved
from reactloop._durable._codec import decode, encode
from reactloop._durable._stores import SqliteStore
from reactloop._errors import (
    AuthenticationError,
    ConfigurationError,
    ErrorCode,
    InvalidRequestError,
    ProviderUnavailableError,
)
from reactloop._loop._loop import ReActLoop
from reactloop._policies._retry import RetryPolicy
from reactloop._providers import AnthropicModel, FallbackModel, OpenAIModel
from reactloop.testing import FakeTool, FunctionModel, ScriptedModel
from tests.providers.conftest import API_KEY
from tests.providers.render import anthropic_json, openai_json, openai_stream
from tests.providers.wire_server import Reply, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

CLAUDE, GPT = "anthropic:claude-sonnet-4-5", "openai:gpt-4o"
QUICK = RetryPolicy(max_retries=1, initial_delay=0, max_delay=0)
LOOKUP = ToolCall("lookup", '{"q": "tides"}', "toolu_1")
SIGNATURE = "SIG-opaque-anthropic-0123"


def overloaded() -> Reply:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return json_reply(body, 529)


def unavailable() -> Reply:
    return Reply(503, (b"<html>Service Unavailable</html>",), (("content-type", "text/html"),))


def thinking_then_lookup() -> Reply:
    """Claude thinks (with its signature) and asks for `lookup`."""
    body = anthropic_json(calls=[LOOKUP])
    thought = {"type": "thinking", "thinking": "Look it up.", "signature": SIGNATURE}
    return json_reply({**body, "content": [thought, *body["content"]]})


@pytest.fixture
async def other() -> AsyncIterator[WireServer]:
    """The second vendor's server."""
    async with WireServer.running() as running:
        yield running


@pytest.fixture
async def pair(server: WireServer, other: WireServer) -> AsyncIterator[FallbackModel]:
    """Claude on `server`, then GPT on `other`."""
    claude = AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=server.url)
    gpt = OpenAIModel("gpt-4o", api_key=API_KEY, base_url=f"{other.url}/v1")
    async with claude, gpt:
        yield FallbackModel([claude, gpt])


async def streamed(loop: ReActLoop, question: str) -> list[Event]:
    events: list[Event] = []
    async with loop.stream(question) as stream:
        events.extend([event async for event in stream])
    return events


async def test_an_overloaded_first_model_hands_the_call_to_the_second_after_its_retries(
    server: WireServer, other: WireServer, pair: FallbackModel
) -> None:
    server.reply_with(overloaded())
    other.reply_with(sse_reply(openai_stream("High tide at noon.")))
    events = await streamed(ReActLoop(pair, retry=QUICK), "When is high tide?")
    assert len(server.requests) == 2  # the first try and its one retry
    retried = [e for e in events if isinstance(e, ModelRetrying)]
    switched = [e for e in events if isinstance(e, ModelSwitched)]
    assert [e.code for e in retried] == [ErrorCode.PROVIDER_UNAVAILABLE]
    assert [(e.from_model, e.to_model, e.error.status) for e in switched] == [(CLAUDE, GPT, 529)]
    assert isinstance(switched[0].error, ProviderUnavailableError)
    step = next(e.step for e in events if isinstance(e, StepFinished))
    assert step.response is not None
    assert (step.response.answered_by, step.response.model) == (GPT, "gpt-4o")


async def test_another_vendor_never_gets_claudes_signature_after_a_switch(
    server: WireServer, other: WireServer, pair: FallbackModel, tmp_path: Path
) -> None:
    server.reply_with(thinking_then_lookup(), unavailable(), unavailable())
    other.reply_with(json_reply(openai_json("High tide at noon.")))
    store = SqliteStore(tmp_path / "runs.db")
    loop = ReActLoop(pair, tools=[FakeTool("lookup")], retry=QUICK, store=store)
    result = await loop.run("When is high tide?")
    assert result.output == "High tide at noon."
    sent = other.requests[0].body
    assert SIGNATURE.encode() not in sent and b"Look it up." not in sent
    assert b"toolu_1" in sent  # the call and its result still go: only Claude's thinking stays
    saved = [r for r in (await store.load(result.run_id)).records if isinstance(r, ResponseSaved)]
    assert [r.response.answered_by for r in saved] == [CLAUDE, GPT]


async def test_a_resumed_run_goes_on_with_the_model_that_answered_last(
    server: WireServer, other: WireServer, pair: FallbackModel, tmp_path: Path
) -> None:
    server.reply_with(overloaded(), overloaded())
    other.reply_with(json_reply(openai_json(calls=[LOOKUP])), json_reply(openai_json("Noon.")))
    path, gate = tmp_path / "runs.db", anyio.Event()
    blocked = FakeTool("lookup", gate=gate)
    first = ReActLoop(pair, tools=[blocked], retry=QUICK, store=SqliteStore(path))
    async with anyio.create_task_group() as tasks, first.start("When?") as handle:
        while blocked.running == 0:
            await anyio.lowlevel.checkpoint()
        tasks.cancel_scope.cancel()  # the process dies while the tool runs
    again = ReActLoop(pair, tools=[FakeTool("lookup")], retry=QUICK, store=SqliteStore(path))
    result = await again.resume(handle.run_id)
    assert result.output == "Noon."
    assert len(server.requests) == 2  # Claude was not asked again
    assert [s.response.answered_by for s in result.steps if s.response] == [GPT, GPT]


@pytest.mark.parametrize(
    "reply",
    [
        json_reply(
            {"type": "error", "error": {"type": "invalid_request_error", "message": "x"}}, 400
        ),
        json_reply(
            {"type": "error", "error": {"type": "authentication_error", "message": "x"}}, 401
        ),
    ],
    ids=["invalid-request", "authentication"],
)
async def test_a_refused_request_is_not_a_switch(
    server: WireServer, other: WireServer, pair: FallbackModel, reply: Reply
) -> None:
    server.reply_with(reply)
    with pytest.raises((InvalidRequestError, AuthenticationError)):
        await pair.request(ModelRequest((UserMessage("hi"),)))
    assert other.requests == []


async def test_a_status_named_in_switch_on_switches(
    server: WireServer, other: WireServer, pair: FallbackModel
) -> None:
    server.reply_with(
        json_reply(
            {"type": "error", "error": {"type": "invalid_request_error", "message": "x"}}, 400
        )
    )
    other.reply_with(json_reply(openai_json("fine")))
    configured = FallbackModel(pair.models, switch_on=[400])
    response = await configured.request(ModelRequest((UserMessage("hi"),)))
    assert (response.answered_by, response.message.text) == (GPT, "fine")


async def test_when_every_model_fails_the_last_error_is_raised_naming_each_failure(
    server: WireServer, other: WireServer, pair: FallbackModel
) -> None:
    server.reply_with(overloaded(), overloaded())
    other.reply_with(unavailable(), unavailable())
    loop = ReActLoop(pair, retry=QUICK, strict=True)
    with pytest.raises(ProviderUnavailableError) as caught:
        await loop.run("hi")
    assert (caught.value.status, caught.value.provider) == (503, "openai")
    note = "\n".join(caught.value.__notes__)
    assert f"{CLAUDE}: provider_unavailable" in note and f"{GPT}: provider_unavailable" in note


async def test_cancellation_is_never_a_switch(other: WireServer) -> None:
    started = anyio.Event()

    async def hangs(request: ModelRequest) -> ModelResponse:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    second = ScriptedModel(["never"])
    chain = FallbackModel([FunctionModel(hangs), second])
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(chain.request, ModelRequest((UserMessage("hi"),)))
        await started.wait()
        tasks.cancel_scope.cancel()
    assert second.requests == []


async def test_a_model_string_is_resolved_and_keyed_as_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    chain = FallbackModel([CLAUDE, ScriptedModel(["x"]), ScriptedModel(["y"])])
    assert chain.names == (CLAUDE, "ScriptedModel", "ScriptedModel#2")
    assert isinstance(chain.models[0], AnthropicModel)
    await chain.aclose()


def test_one_model_is_not_a_fallback() -> None:
    with pytest.raises(ConfigurationError, match="at least two models"):
        FallbackModel([ScriptedModel(["x"])])


def test_the_journal_of_a_run_without_fallback_is_unchanged() -> None:
    plain = ModelResponse(AssistantMessage("hi"))
    assert b"answered_by" not in encode(ResponseSaved(1, plain, plain.usage))
    switched = evolve(plain, answered_by=GPT)
    assert decode(encode(ResponseSaved(1, switched, plain.usage))) == ResponseSaved(
        1, switched, plain.usage
    )

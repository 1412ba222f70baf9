"""A server that reuses tool call ids (`call_0` in every response, twice in one response), over
real sockets: each call keeps an identity of its own, approvals never carry over to a later call
with the same provider id, and the wire pairs every result with its own call."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import pytest

from reactloop import Approve, Deny, ReActLoop, tool
from reactloop._core._contracts import Model
from reactloop._core._events import RunFinished
from reactloop._core._messages import AssistantMessage, ToolCall, unique_calls
from reactloop._core._state import RunResult
from reactloop._providers import AnthropicModel, GeminiModel, OpenAIModel
from reactloop._providers._wire import wire_ids
from reactloop.stores import MemoryStore
from tests.providers.protocol import check_anthropic_request
from tests.providers.render import anthropic_json, anthropic_stream, openai_json, openai_stream
from tests.providers.render_gemini import gemini_answer, gemini_answer_stream
from tests.providers.test_loop import is_stream, results_in
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

REPLIES: dict[int, tuple[ToolCall, ...]] = {  # by the number of tool results the request carries
    0: (
        ToolCall("lookup", '{"city": "Paris"}', "call_0"),
        ToolCall("lookup", '{"city": "Rome"}', "call_0"),  # the same id twice in one response
        ToolCall("lookup", '{"city": "Oslo"}', "toolu_7"),  # a unique id: sent back unchanged
    ),
    3: (ToolCall("pay", '{"amount": 5}', "call_0"),),
    4: (ToolCall("pay", '{"amount": 9999}', "call_0"),),  # reused again: a different call
    5: (),
}


def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def replying(protocol: str) -> Callable[[Request], Reply]:
    """Answer each request by how many tool results it carries, in `protocol`, streamed or not."""
    renders: dict[str, tuple[Callable[..., list[bytes]], Callable[..., object]]] = {
        "openai": (openai_stream, openai_json),
        "anthropic": (anthropic_stream, anthropic_json),
        "gemini": (  # Gemini sends a call's id when it has one (the API's optional `id`)
            functools.partial(gemini_answer_stream, with_ids=True),
            functools.partial(gemini_answer, with_ids=True),
        ),
    }
    streamed, whole = renders[protocol]

    def answer(request: Request) -> Reply:
        calls = REPLIES[results_in(request)]
        text = "" if calls else "Done."
        if is_stream(request):
            return sse_reply(streamed(text, calls))
        return json_reply(whole(text, calls))

    return answer


def wire(request: Request) -> tuple[list[str], list[tuple[str, str]]]:
    """The call ids of a request in order, and its results as (call id, content)."""
    calls: list[str] = []
    results: list[tuple[str, str]] = []
    if "contents" in request.json():  # Gemini: functionCall and functionResponse parts
        parts = [part for turn in request.json()["contents"] for part in turn["parts"]]
        calls = [part["functionCall"]["id"] for part in parts if "functionCall" in part]
        answers = [part["functionResponse"] for part in parts if "functionResponse" in part]
        return calls, [(a["id"], "".join(a["response"].values())) for a in answers]
    for message in request.json()["messages"]:
        if request.path.endswith("/chat/completions"):
            calls += [call["id"] for call in message.get("tool_calls") or ()]
            if message["role"] == "tool":
                results.append((message["tool_call_id"], message["content"]))
            continue
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block["type"] == "tool_use":
                calls.append(block["id"])
            elif block["type"] == "tool_result":
                results.append((block["tool_use_id"], block["content"]))
    return calls, results


async def finish(loop: ReActLoop, streamed: bool, run_id: str | None, **options: Any) -> RunResult:
    """Start (run_id None) or resume a run, plainly or as a stream (the model streams then)."""
    if not streamed:
        if run_id is None:
            return await loop.run("Weather, then pay.")
        return await loop.resume(run_id, **options)
    opened = loop.stream("Weather, then pay.") if run_id is None else None
    async with opened or loop.resume_stream(run_id, **options) as events:
        last = [event async for event in events][-1]
    assert isinstance(last, RunFinished)
    return last.result


@pytest.fixture
def models(openai: OpenAIModel, anthropic: AnthropicModel, gemini: GeminiModel) -> dict[str, Model]:
    """A model of each protocol, by its name."""
    return {"openai": openai, "anthropic": anthropic, "gemini": gemini}


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("protocol", ["openai", "anthropic", "gemini"])
async def test_reused_provider_ids_get_identities_of_their_own(
    server: WireServer, models: dict[str, Model], protocol: str, streamed: bool
) -> None:
    paid: list[int] = []

    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Pay an amount."""
        paid.append(amount)
        return f"paid {amount}"

    server.handler = replying(protocol)
    model = models[protocol]
    store = MemoryStore()
    loop = ReActLoop(model, tools=[lookup, pay], store=store)
    first = await finish(loop, streamed, None)
    assert first.paused and paid == []
    [held] = first.pending
    assert (held.tool, held.arguments) == ("pay", {"amount": 5})

    second = await finish(loop, streamed, first.run_id, decisions={held.call_id: Approve()})
    assert paid == [5]
    assert second.paused, "a later call the provider gave the same id must wait for a person"
    [later] = second.pending
    assert later.arguments == {"amount": 9999} and later.call_id != held.call_id
    assert (await store.load(first.run_id)).pending == second.pending

    again = await finish(loop, streamed, first.run_id, decisions={held.call_id: Approve()})
    assert again.paused and paid == [5], "a decision already applied never covers another call"
    done = await finish(loop, streamed, first.run_id, decisions={later.call_id: Deny("too much")})
    assert done.output == "Done." and paid == [5]

    ids = [call.id for step in done.steps for call in step.tool_calls]
    assert len(set(ids)) == len(ids) == 5
    assert ids[0] == "call_0" and ids[2] == "toolu_7" and held.call_id == ids[3]
    assert [r.call_id for step in done.steps for r in step.tool_results] == ids
    stored = await store.load(first.run_id)
    assert [c.id for s in stored.steps for c in s.tool_calls] == ids  # the journal keeps them

    requests = server.requests
    sent_calls, sent_results = wire(requests[-1])
    assert len(set(sent_calls)) == 5 and sent_calls[0] == "call_0" and sent_calls[2] == "toolu_7"
    assert [call for call, _ in sent_results] == sent_calls
    contents = [content for _, content in sent_results]
    assert contents[:3] == ["sunny in Paris", "sunny in Rome", "sunny in Oslo"]
    assert contents[3] == "paid 5" and "too much" in contents[4]
    first_calls, _ = wire(requests[1])  # sent before any resume: the same ids after it
    assert sent_calls[:3] == first_calls
    if protocol == "anthropic":
        for request in requests:
            check_anthropic_request(request.json())


async def test_unique_provider_ids_go_back_unchanged(
    server: WireServer, openai: OpenAIModel
) -> None:
    distinct = {
        0: (ToolCall("lookup", '{"city": "Paris"}', "call_a"),),
        1: (ToolCall("lookup", '{"city": "Rome"}', "call:b"),),  # not [A-Za-z0-9_-]: kept
        2: (),
    }

    def answer(request: Request) -> Reply:
        calls = distinct[results_in(request)]
        return json_reply(openai_json("" if calls else "Done.", calls))

    server.handler = answer
    result = await ReActLoop(openai, tools=[lookup]).run("Weather?")
    assert [c.id for s in result.steps for c in s.tool_calls] == ["call_a", "call:b"]
    calls, results = wire(server.requests[-1])
    assert calls == ["call_a", "call:b"] and [call for call, _ in results] == calls


def test_a_fresh_id_uses_only_the_characters_anthropic_accepts() -> None:
    used = dict.fromkeys(["call:0", "call_0_3"])
    calls = (ToolCall("lookup", "{}", "call:0"), ToolCall("lookup", "{}", "call:0"))
    message = unique_calls(AssistantMessage(tool_calls=calls), used)
    ids = [call.id for call in message.tool_calls]
    assert len(set(ids)) == 2 and not set(ids) & {"call:0", "call_0_3"}
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", call_id) for call_id in ids)
    assert [call.wire_id for call in message.tool_calls] == ["call:0", "call:0"]
    assert set(ids) <= set(used)


def test_a_message_with_new_ids_is_kept_as_it_is() -> None:
    message = AssistantMessage(tool_calls=(ToolCall("lookup", "{}", "a"), ToolCall("x", "{}", "b")))
    assert unique_calls(message, {}) is message
    assert wire_ids((message,)) == (message,)

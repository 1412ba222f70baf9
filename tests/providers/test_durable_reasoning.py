"""Opaque reasoning of the new providers survives what the loop keeps of a run, over loopback: a
Gemini tool loop journaled to a real SQLite file, its process gone mid-tool, resumed by a new
loop on a new model sends the thought signatures back exactly as the uninterrupted run does
(read from the journal); so does OpenRouter's `reasoning_details`. A Gemini run's signatures
also survive a state token (a storeless pause) and a cassette written to disk and replayed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.lowlevel
import orjson
import pytest

from reactloop import Approve, ReActLoop, tool
from reactloop._core._messages import ToolCall
from reactloop.approval import ApprovalOptions
from reactloop.messages import ReasoningPart
from reactloop.providers import GeminiModel, OpenAIModel
from reactloop.stores import SqliteStore
from reactloop.testing import Cassette, FakeTool, RecordingModel, ReplayModel
from tests.providers.conftest import API_KEY
from tests.providers.harnesses_hosts import path_of
from tests.providers.render import openai_json
from tests.providers.render_gemini import call_part, gemini_answer, gemini_json, thought_part
from tests.providers.wire_server import Reply, WireServer, json_reply

pytestmark = pytest.mark.anyio

LOOKUP = ToolCall("lookup", '{"q": "tides"}', "call_1")
THOUGHT_SIG, CALL_SIG = "R0VNSU5JLXRob3VnaHQtc2ln", "R0VNSU5JLWNhbGwtc2ln"
DETAILS = [
    {"type": "reasoning.text", "text": "Look it up.", "signature": "c2lnLW9y", "index": 0},
    {"type": "reasoning.encrypted", "data": "ZW5jcnlwdGVk", "index": 1},
]
KEY = "an-example-key-of-at-least-32-bytes!"


def gemini(url: str) -> GeminiModel:
    return GeminiModel("gemini-3-pro-preview", api_key=API_KEY, base_url=url)


def openrouter(url: str) -> OpenAIModel:
    base = url + path_of("openrouter")
    return OpenAIModel(
        "anthropic/claude-sonnet-4.5", host="openrouter", api_key=API_KEY, base_url=base
    )


def gemini_lookup() -> Reply:
    parts = [thought_part("Look it up.", THOUGHT_SIG), call_part(LOOKUP, CALL_SIG, with_id=True)]
    return json_reply(gemini_json(parts))


def openrouter_lookup() -> Reply:
    body = openai_json("", [LOOKUP])
    body["choices"][0]["message"] |= {"reasoning": "Look it up.", "reasoning_details": DETAILS}
    return json_reply(body)


Build = Callable[[str], GeminiModel | OpenAIModel]
VENDORS: dict[str, tuple[Build, Callable[[], Reply], Callable[[], Reply]]] = {
    "gemini": (gemini, gemini_lookup, lambda: json_reply(gemini_answer("Noon."))),
    "openrouter": (openrouter, openrouter_lookup, lambda: json_reply(openai_json("Noon."))),
}


async def _uninterrupted(vendor: str) -> bytes:
    """The second request of the run left alone: what a resumed run must send too."""
    build, lookup, answer = VENDORS[vendor]
    async with WireServer.running() as alone:
        alone.reply_with(lookup(), answer())
        async with build(alone.url) as model:
            await ReActLoop(model, tools=[FakeTool("lookup")]).run("When?")
        return alone.requests[1].body


@pytest.mark.parametrize("vendor", list(VENDORS))
async def test_a_run_resumed_in_a_new_process_sends_the_journaled_reasoning_back(
    server: WireServer, tmp_path: Path, vendor: str
) -> None:
    build, lookup, answer = VENDORS[vendor]
    server.reply_with(lookup(), answer())
    path, gate = tmp_path / "runs.db", anyio.Event()
    blocked = FakeTool("lookup", gate=gate)
    async with build(server.url) as model:
        first = ReActLoop(model, tools=[blocked], store=SqliteStore(path))
        async with anyio.create_task_group() as tasks, first.start("When?") as handle:
            while blocked.running == 0:
                await anyio.lowlevel.checkpoint()
            tasks.cancel_scope.cancel()  # the process dies while the tool runs
    async with build(server.url) as fresh:  # a new process: a new loop, a new model
        again = ReActLoop(fresh, tools=[FakeTool("lookup")], store=SqliteStore(path))
        result = await again.resume(handle.run_id)
    assert result.output == "Noon." and len(server.requests) == 2
    # the model's turn goes back as the run left alone sends it (the tool's result differs: a
    # call cut off by the crash is answered as interrupted, never run twice)
    field = "contents" if vendor == "gemini" else "messages"
    turn = orjson.loads(server.requests[1].body)[field][1]
    assert turn == orjson.loads(await _uninterrupted(vendor))[field][1]
    if vendor == "gemini":
        assert [part.get("thoughtSignature") for part in turn["parts"]] == [THOUGHT_SIG, CALL_SIG]
    else:
        assert turn["reasoning_details"] == DETAILS


@tool(requires_approval=True)
def lookup(q: str) -> str:
    """Look something up."""
    return f"{q}: noon"


async def test_a_state_token_carries_geminis_signatures_to_the_next_request(
    server: WireServer,
) -> None:
    server.reply_with(gemini_lookup(), json_reply(gemini_answer("Noon.")))
    sealed = ApprovalOptions(state_key=KEY)
    async with gemini(server.url) as model:
        paused = await ReActLoop(model, tools=[lookup], approval=sealed).run("When?")
    token, [held] = paused.state, paused.pending
    assert token is not None
    async with gemini(server.url) as fresh:
        second = ReActLoop(fresh, tools=[lookup], approval=ApprovalOptions(state_key=KEY))
        done = await second.resume(state=token, decisions={held.call_id: Approve()})
    assert done.output == "Noon."
    parts = orjson.loads(server.requests[1].body)["contents"][1]["parts"]
    assert parts == [
        thought_part("Look it up.", THOUGHT_SIG),
        call_part(LOOKUP, CALL_SIG, with_id=True),
    ]


async def test_a_gemini_runs_cassette_replays_its_signatures_from_disk(
    server: WireServer, tmp_path: Path
) -> None:
    server.reply_with(gemini_lookup(), json_reply(gemini_answer("Noon.")))
    async with gemini(server.url) as model:
        recording = RecordingModel(model)
        result = await ReActLoop(recording, tools=[FakeTool("lookup")]).run("When?")
    path = tmp_path / "gemini.cassette.json"
    recording.cassette(result).save(path)
    replay = ReplayModel(Cassette.load(path))
    again = await ReActLoop(replay, tools=[FakeTool("lookup")]).run("When?")
    replay.assert_complete()
    assert again.output == "Noon."
    first = again.steps[0].response
    assert first is not None
    signatures = [p.signature for p in first.message.reasoning if isinstance(p, ReasoningPart)]
    assert signatures == [THOUGHT_SIG, CALL_SIG]
    assert first.message.reasoning == result.steps[0].response.message.reasoning  # type: ignore[union-attr]

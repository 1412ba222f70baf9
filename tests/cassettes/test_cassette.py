"""Cassettes: a run recorded live or exported from a store replays to the same result; a changed
prompt, instructions or tool result is reported as a diff naming the interaction; tools re-run or
are served from the recording."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from reactloop import Limits
from reactloop._cassettes._cassette import Cassette
from reactloop._cassettes._models import RecordingModel, ReplayModel
from reactloop._core._contracts import Hook, Model, Tool
from reactloop._core._decisions import (
    PROCEED,
    HookDecision,
    Override,
    PhaseDecision,
    Reject,
    StopReason,
    ToolCallDecision,
)
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._core._state import RunResult
from reactloop._durable._stores import MemoryStore, SqliteStore
from reactloop._errors import ConfigurationError, ProviderUnavailableError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._phases import default_phases
from reactloop._stored_errors import (
    CassetteExhaustedError,
    CassetteFormatError,
    CassetteMismatchError,
)
from reactloop.testing import FakeTool, ScriptedModel, call, reply
from tests.helpers.strategies import cassettes, examples

pytestmark = pytest.mark.anyio

INSTRUCTIONS = "You answer with the weather."


def weather_script() -> ScriptedModel:
    return ScriptedModel(
        [
            reply("Looking.", call("weather", city="Paris"), call("clock")),
            call("weather", city="Rome"),
            "Paris is sunny, Rome is rainy.",
        ]
    )


def weather_tools() -> list[FakeTool]:
    return [FakeTool("weather", result={"sky": "sunny"}), FakeTool("clock", result="12:00")]


def loop_of(model: Model, tools: Sequence[Tool], **options: Any) -> ReActLoop:
    options.setdefault("instructions", INSTRUCTIONS)
    return ReActLoop(model, tools=tools, **options)


async def recorded(
    script: ScriptedModel | None = None, tools: Sequence[Tool] | None = None, **options: Any
) -> tuple[Cassette, RunResult]:
    recorder = RecordingModel(script or weather_script())
    tools = weather_tools() if tools is None else tools
    result = await loop_of(recorder, tools, **options).run("Weather?")
    return recorder.cassette(result), result


async def replayed(
    cassette: Cassette, tools: Sequence[Tool] | None = None, **options: Any
) -> tuple[RunResult, ReplayModel]:
    replay = ReplayModel(cassette)
    loop = loop_of(replay, weather_tools() if tools is None else tools, **options)
    result = await loop.run(cassette.input, history=cassette.history)
    return result, replay


def same_run(replay: RunResult, original: RunResult) -> None:
    assert replay.error is None
    assert replay.output == original.output
    assert replay.stop_reason == original.stop_reason
    assert replay.messages == original.messages


# --- recorded live ----------------------------------------------------------------------------


async def test_a_run_recorded_live_replays_to_the_same_result() -> None:
    cassette, original = await recorded()
    result, replay = await replayed(cassette)
    same_run(result, original)
    replay.assert_complete()
    assert len(cassette.interactions) == 3


async def test_a_streamed_run_is_recorded_and_replays_as_a_stream() -> None:
    recorder = RecordingModel(weather_script())
    async with loop_of(recorder, weather_tools()).stream("Weather?") as events:
        streamed = [event async for event in events]
        original = await events.result()
    cassette = recorder.cassette(original)
    replay = ReplayModel(cassette)
    async with loop_of(replay, weather_tools()).stream(cassette.input) as events:
        again = [event async for event in events]
        result = await events.result()
    same_run(result, original)
    assert [type(e) for e in again] == [type(e) for e in streamed]


async def test_the_cassette_takes_the_input_and_history_from_the_result() -> None:
    recorder = RecordingModel(ScriptedModel(["fine"]))
    history: list[Message] = [UserMessage("earlier"), AssistantMessage("noted")]
    result = await loop_of(recorder, []).run("How are you?", history=history)
    cassette = recorder.cassette(result)
    assert cassette.input == "How are you?"
    assert cassette.history == tuple(history)


async def test_failed_attempts_are_not_recorded_and_the_retried_run_replays() -> None:
    flaky = ScriptedModel([ProviderUnavailableError("down"), "fine"])

    async def no_sleep(seconds: float) -> None:
        return None

    cassette, original = await recorded(flaky, [], sleep=no_sleep)
    assert len(cassette.interactions) == 1
    result, _ = await replayed(cassette, [])
    same_run(result, original)


# --- exported from a store --------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore | SqliteStore:
    return MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "runs.db")


async def test_a_stored_run_is_exported_saved_loaded_and_replayed(
    store: MemoryStore | SqliteStore, tmp_path: Path
) -> None:
    original = await loop_of(weather_script(), weather_tools(), store=store).run("Weather?")
    cassette = Cassette.from_stored(await store.load(original.run_id))
    await store.aclose()
    path = tmp_path / "weather.cassette.json"
    cassette.save(path)
    loaded = Cassette.load(path)
    assert loaded == cassette
    result, replay = await replayed(loaded)
    same_run(result, original)
    replay.assert_complete()


async def test_stored_and_live_cassettes_hold_the_same_requests(store: MemoryStore) -> None:
    live, _ = await recorded(store=store)
    [summary] = await store.list_runs()
    exported = Cassette.from_stored(await store.load(summary.run_id))
    assert [i.request for i in exported.interactions] == [i.request for i in live.interactions]
    assert [i.response for i in exported.interactions] == [i.response for i in live.interactions]


class Rewrite:
    """A phase that changes the run's instructions after the first step (they are journaled)."""

    async def __call__(self, run: Run) -> PhaseDecision:
        if run.state.iteration == 1:
            run.state.instructions = "Now answer in French."
        return PROCEED


async def test_instructions_changed_mid_run_are_rebuilt_as_they_stood(store: MemoryStore) -> None:
    phases = [*default_phases(), Rewrite()]
    loop = ReActLoop(weather_script(), tools=weather_tools(), store=store, phases=phases)
    original = await loop.run("Weather?", deps=None)
    cassette = Cassette.from_stored(await store.load(original.run_id))
    seen = [i.request.instructions for i in cassette.interactions]
    assert seen == [None, "Now answer in French.", "Now answer in French."]
    replay = ReplayModel(cassette)
    again = ReActLoop(replay, tools=weather_tools(), phases=phases)
    same_run(await again.run(cassette.input), original)


async def test_a_capped_run_replays_with_its_last_tool_less_call(store: MemoryStore) -> None:
    script = ScriptedModel([call("clock"), call("clock", n=2), "Stopped here."])
    original = await loop_of(script, weather_tools(), store=store, max_iterations=2).run("go")
    assert original.stop_reason is StopReason.MAX_ITERATIONS
    cassette = Cassette.from_stored(await store.load(original.run_id))
    assert cassette.interactions[-1].request.tools is None
    result, replay = await replayed(cassette, max_iterations=2)
    same_run(result, original)
    replay.assert_complete()


async def test_a_session_run_is_exported_with_its_earlier_turns(store: MemoryStore) -> None:
    loop = loop_of(ScriptedModel(["Hello.", "Sunny."]), [], store=store)
    await loop.run("Hi", session_id="s1")
    second = await loop.run("Weather?", session_id="s1")
    cassette = await Cassette.from_store(store, second.run_id)
    assert cassette.history == (UserMessage("Hi"), AssistantMessage("Hello."))
    result, replay = await replayed(cassette, [])
    same_run(result, second)
    replay.assert_complete()


# --- mismatches -------------------------------------------------------------------------------


async def test_changed_instructions_are_reported_as_a_diff_naming_the_interaction() -> None:
    cassette, _ = await recorded()
    with pytest.raises(CassetteMismatchError) as caught:
        await replayed(cassette, instructions="You answer with the news.", strict=True)
    error = caught.value
    assert error.index == 0
    assert "at interaction 0" in str(error)
    assert '-instructions: "You answer with the weather."' in error.diff
    assert '+instructions: "You answer with the news."' in error.diff


async def test_a_changed_prompt_fails_the_run_and_assert_matched_raises_the_diff() -> None:
    cassette, _ = await recorded()
    replay = ReplayModel(cassette)
    result = await loop_of(replay, weather_tools()).run("Weather in Oslo?")
    assert result.stop_reason is StopReason.ERROR
    assert isinstance(result.error, CassetteMismatchError)
    assert replay.requests and len(replay.requests) == 1  # not retried
    with pytest.raises(CassetteMismatchError) as caught:
        replay.assert_matched()
    assert '-    content: "Weather?"' in caught.value.diff
    assert '+    content: "Weather in Oslo?"' in caught.value.diff


async def test_a_changed_tool_result_is_reported_at_the_next_interaction() -> None:
    cassette, _ = await recorded()
    tools = [FakeTool("weather", result={"sky": "grey"}), FakeTool("clock", result="12:00")]
    with pytest.raises(CassetteMismatchError) as caught:
        await replayed(cassette, tools, strict=True)
    assert caught.value.index == 1
    assert "grey" in caught.value.diff


async def test_unchecked_requests_are_answered_and_their_differences_kept() -> None:
    cassette, original = await recorded()
    replay = ReplayModel(cassette, check_requests=False)
    result = await loop_of(replay, weather_tools(), instructions="Be brief.").run("Weather?")
    assert result.error is None
    assert result.output == original.output
    assert [getattr(error, "index", None) for error in replay.errors] == [0, 1, 2]
    with pytest.raises(CassetteMismatchError, match="at interaction 0"):
        replay.assert_complete()


class RewriteInput(Hook):
    """From the second request on, sends a changed first message (the transcript keeps it)."""

    async def before_reasoning(
        self, run: Run, request: ModelRequest
    ) -> HookDecision[ModelRequest] | None:
        if len(request.messages) == 1:
            return None
        return Override(
            attrs.evolve(request, messages=(UserMessage("Weather!"), *request.messages[1:]))
        )


async def test_a_change_to_an_earlier_message_is_found_at_a_later_interaction() -> None:
    cassette, _ = await recorded()
    with pytest.raises(CassetteMismatchError) as caught:
        await replayed(cassette, hooks=[RewriteInput()], strict=True)
    assert caught.value.index == 1
    assert '+    content: "Weather!"' in caught.value.diff


async def test_a_recording_whose_earlier_message_changed_is_found_at_that_interaction() -> None:
    cassette, _ = await recorded()
    second = cassette.interactions[1]
    edited = attrs.evolve(
        second.request, messages=(UserMessage("Other?"), *second.request.messages[1:])
    )
    interactions = (
        cassette.interactions[0],
        attrs.evolve(second, request=edited),
        *cassette.interactions[2:],
    )
    with pytest.raises(CassetteMismatchError) as caught:
        await replayed(attrs.evolve(cassette, interactions=interactions), strict=True)
    assert caught.value.index == 1
    assert '-    content: "Other?"' in caught.value.diff


async def test_a_request_past_the_end_of_the_recording_is_a_typed_error() -> None:
    cassette, _ = await recorded()
    short = attrs.evolve(cassette, interactions=cassette.interactions[:2])
    with pytest.raises(CassetteExhaustedError, match="all 2 recorded interactions"):
        await replayed(short, strict=True)


async def test_unused_interactions_fail_assert_complete() -> None:
    cassette, _ = await recorded()
    replay = ReplayModel(cassette)
    replay.assert_matched()
    with pytest.raises(AssertionError, match="3 of 3 recorded interactions were not used"):
        replay.assert_complete()


# --- tools ------------------------------------------------------------------------------------


async def test_tools_are_re_run_by_default() -> None:
    cassette, _ = await recorded()
    tools = weather_tools()
    await replayed(cassette, tools)
    assert [len(tool.calls) for tool in tools] == [2, 1]


async def test_served_tools_answer_from_the_recording_without_running() -> None:
    cassette, original = await recorded()
    tools = [FakeTool("weather", result="never"), FakeTool("clock", result="never")]
    result, replay = await replayed(cassette, cassette.recorded_tools(tools))
    same_run(result, original)
    assert [tool.calls for tool in tools] == [[], []]
    replay.assert_complete()


async def test_served_failures_and_cut_results_read_as_recorded() -> None:
    tools = [FakeTool("weather", raises=ValueError("no sky\nat all")), FakeTool("clock", "x" * 50)]
    cassette, original = await recorded(tools=tools, limits=Limits(max_result_chars=20))
    assert any(m.is_error for m in original.messages if isinstance(m, ToolMessage))
    served = cassette.recorded_tools(weather_tools())
    result, _ = await replayed(cassette, served, limits=Limits(max_result_chars=20))
    same_run(result, original)


class RejectFirst(Hook):
    """Refuses the call with id c1 (the loop gives it its refusal; the tool never runs)."""

    async def before_tool_call(self, run: Run, call: ToolCall) -> ToolCallDecision[ToolCall] | None:
        return Reject("not now") if call.id == "c1" else None


async def test_a_refused_call_is_refused_again_and_its_twin_gets_the_served_result() -> None:
    script = ScriptedModel([ToolCall("clock", id="c1"), ToolCall("clock", id="c2"), "Noon."])
    cassette, original = await recorded(script, hooks=[RejectFirst()])
    clock = FakeTool("clock", result="never")
    served = cassette.recorded_tools([FakeTool("weather"), clock])
    result, replay = await replayed(cassette, served, hooks=[RejectFirst()])
    same_run(result, original)
    assert clock.calls == []
    replay.assert_complete()


async def test_a_call_that_is_not_in_the_recording_gets_a_typed_error_result() -> None:
    cassette, _ = await recorded()
    weather = FakeTool("weather")
    [served] = cassette.recorded_tools([weather])
    model = ScriptedModel([call("weather", city="Oslo"), "done"])
    result = await ReActLoop(model, tools=[served]).run("Weather?")
    [answer] = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert answer.is_error
    assert "UnrecordedCallError" in answer.text
    assert 'weather({"city":"Oslo"}) is not in the recording' in answer.text
    assert weather.calls == []


async def test_served_tools_keep_the_real_tools_names_and_specs() -> None:
    cassette, _ = await recorded()
    tools = weather_tools()
    served = cassette.recorded_tools(tools)
    assert [(t.name, t.spec, t.timeout, t.exclusive) for t in served] == [
        (t.name, t.spec, t.timeout, t.exclusive) for t in tools
    ]


# --- the file ---------------------------------------------------------------------------------


async def test_the_file_is_indented_with_sorted_keys_and_saves_identically(tmp_path: Path) -> None:
    cassette, _ = await recorded()
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    cassette.save(first)
    Cassette.load(first).save(second)
    text = first.read_bytes()
    assert text == second.read_bytes()
    assert text.startswith(b'{\n  "input"') and text.endswith(b"}\n")
    assert orjson.loads(text)["version"] == 2


async def test_the_same_run_recorded_twice_gives_the_same_file() -> None:
    def script() -> ScriptedModel:
        return ScriptedModel([ToolCall("clock", id="c1"), "It is noon."])

    first, _ = await recorded(script())
    second, _ = await recorded(script())
    assert first.to_json() == second.to_json()  # no timing in the file


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "it is not JSON"),
        (b"[1, 2]", "it is not a JSON object"),
        (b'{"version": 3, "input": "x", "interactions": []}', "format version is 3"),
        (b'{"input": "x", "interactions": []}', "format version is None"),
        (b'{"version": true, "input": "x", "interactions": []}', "format version is True"),
        (b'{"version": 1, "interactions": []}', "required field missing @ file.input"),
    ],
)
def test_a_file_that_is_not_a_readable_cassette_is_a_typed_error(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(CassetteFormatError, match=problem) as caught:
        Cassette.load(path)
    assert caught.value.source == str(path)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cassettes())
def test_a_cassette_reads_back_as_itself(cassette: Cassette) -> None:
    assert Cassette.from_json(cassette.to_json()) == cassette


def test_the_models_refuse_what_they_cannot_use() -> None:
    with pytest.raises(ConfigurationError, match=r"RecordingModel\.model"):
        RecordingModel("openai:gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"RecordingModel\.cassette\(result\)"):
        RecordingModel(ScriptedModel([])).cassette("run-1")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"ReplayModel\.cassette"):
        ReplayModel("weather.json")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"ReplayModel\.check_requests"):
        ReplayModel(Cassette("x", ()), check_requests="no")  # type: ignore[arg-type]


async def test_exporting_refuses_what_is_not_a_store_or_a_stored_run() -> None:
    with pytest.raises(ConfigurationError, match=r"Cassette\.from_store\(store\)"):
        await Cassette.from_store("sqlite:///runs.db", "run-1")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"Cassette\.from_stored\(stored\)"):
        Cassette.from_stored("run-1")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"Cassette\.recorded_tools\(tools\)"):
        Cassette("x", ()).recorded_tools(["weather"])  # type: ignore[list-item]

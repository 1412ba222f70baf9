"""Text that is not valid Unicode is repaired where it enters a run, and said so; ids a caller
chooses keep one rule, refused alike on every store (adr/0022). The surrogates are real ones:
a file name that is not UTF-8, decoded by `os.fsdecode`."""

from __future__ import annotations

import os
from typing import Any

import anyio
import attrs
import pytest

from reactloop import ConfigurationError, Hook, Limits, Override, ReActLoop, StopReason, tool
from reactloop.messages import AssistantMessage, Message, RepairKind, ToolCall, UserMessage
from reactloop.phases import Run, ToolResult
from reactloop.stores import RunCreated
from reactloop.testing import ScriptedModel, call, reply
from tests.conftest import Store

pytestmark = pytest.mark.anyio

BAD = os.fsdecode(b"report-\xff.txt")
SHOWN = "report-\ufffd.txt"


@tool
def list_files() -> str:
    """The files in the folder."""
    return BAD


@tool
def file_info() -> dict[str, Any]:
    """A file's details, as JSON."""
    return {"name": BAD, "size": 3}


def test_the_surrogates_are_real() -> None:
    assert BAD != SHOWN
    with pytest.raises(UnicodeEncodeError):
        BAD.encode()


@pytest.mark.parametrize("returns", [list_files, file_info])
async def test_a_tool_result_is_repaired_noted_and_kept(any_store: Store, returns: Any) -> None:
    model = ScriptedModel([reply("", call(returns.name)), "done"])
    result = await ReActLoop(model, tools=[returns], store=any_store).run("What files?")
    assert (result.stop_reason, result.error) == (StopReason.COMPLETED, None)
    content = result.steps[0].tool_results[0].content
    assert SHOWN in content and "not valid Unicode" in content  # the model is told
    assert SHOWN in model.requests[1].messages[-1].text
    [note] = result.repairs
    assert (note.kind, note.tool_name, note.index) == (RepairKind.INVALID_UNICODE, returns.name, 2)
    assert note.call_id == result.steps[0].tool_results[0].call_id
    stored = await any_store.load(result.run_id)
    assert stored.steps[0].tool_results[0].content == content  # journaled, not lost


async def test_model_text_is_repaired(any_store: Store) -> None:
    model = ScriptedModel([reply(BAD, call("list_files", path=BAD)), BAD])
    result = await ReActLoop(model, tools=[list_files], store=any_store).run("Hi")
    assert (result.stop_reason, result.output) == (StopReason.COMPLETED, SHOWN)
    first = result.messages[1]
    assert isinstance(first, AssistantMessage)
    assert first.text == SHOWN and SHOWN in first.tool_calls[0].arguments
    assert [(n.kind, n.index) for n in result.repairs if not n.call_id] == [
        (RepairKind.INVALID_UNICODE, 1),
        (RepairKind.INVALID_UNICODE, 3),
    ]
    assert (await any_store.load(result.run_id)).messages == result.messages


async def test_user_input_history_and_instructions_are_repaired_on_every_entry(
    any_store: Store,
) -> None:
    model = ScriptedModel(["one", "two", "three"])
    loop = ReActLoop(model, store=any_store, instructions=f"Files: {BAD}")
    history: list[Message] = [UserMessage(BAD), AssistantMessage("ok")]
    results = [await loop.run(BAD, history=history)]
    async with loop.start(BAD, history=history) as handle:
        results.append(await handle.result())
    async with loop.stream(BAD, history=history) as events:
        async for _ in events:
            pass
        results.append(await events.result())
    for result in results:
        assert result.error is None and result.messages[2] == UserMessage(SHOWN)
        assert result.messages[0] == UserMessage(SHOWN)
        assert [n.index for n in result.repairs] == [-1, 0, 2]
        assert (await any_store.load(result.run_id)).messages == result.messages
    assert all(request.instructions == f"Files: {SHOWN}" for request in model.requests)


WRONG_IDS = [BAD, "", "  ", "a\x00b", "line\nbreak", "x" * 257, 7]


@pytest.mark.parametrize("option", ["run_id", "user_id", "session_id"])
@pytest.mark.parametrize("value", WRONG_IDS, ids=repr)
async def test_a_wrong_id_is_refused_before_anything_runs(
    any_store: Store, option: str, value: object
) -> None:
    model = ScriptedModel(["never"])
    loop = ReActLoop(model, store=any_store)
    given: dict[str, Any] = {option: value}
    with pytest.raises(ConfigurationError) as refused:
        await loop.run("Hi", **given)
    assert (refused.value.option, refused.value.value) == (option, value)
    assert "1 to 256 characters" in str(refused.value.rule)
    with pytest.raises(ConfigurationError, match=option):
        async with loop.start("Hi", **given):
            pass
    with pytest.raises(ConfigurationError, match=option):
        async with loop.stream("Hi", **given):
            pass
    assert model.requests == [] and await any_store.list_runs() == []


@pytest.mark.parametrize("value", WRONG_IDS, ids=repr)
async def test_every_store_refuses_a_wrong_id_alike(any_store: Store, value: Any) -> None:
    with pytest.raises(ConfigurationError, match="run_id"):
        await ReActLoop(ScriptedModel([]), store=any_store).resume(value)
    for method in (any_store.load, any_store.delete_run):
        with pytest.raises(ConfigurationError, match="run_id"):
            await method(value)
    for session_call in (any_store.delete_session, any_store.session_history):
        with pytest.raises(ConfigurationError, match="session_id"):
            await session_call(value)
    with pytest.raises(ConfigurationError, match="user_id"):
        await any_store.list_runs(user_id=value)
    created = RunCreated("r-1", "Hi", None, (), 0.0, session_id=value)
    with pytest.raises(ConfigurationError, match="session_id"):
        await any_store.create_run(created)


async def test_every_store_takes_the_longest_id(any_store: Store) -> None:
    """256 random characters (up to 4 bytes each in UTF-8) fit every store's index."""
    longest = "".join(chr(0x10000 + (b % 0x1000)) for b in os.urandom(256))
    model = ScriptedModel(["Hello."])
    loop = ReActLoop(model, store=any_store)
    result = await loop.run("Hi", run_id=longest, session_id=longest, user_id=longest)
    assert (result.run_id, result.output) == (longest, "Hello.")
    assert (await loop.resume(longest)).output == "Hello."
    [summary] = await any_store.list_runs(session_id=longest, user_id=longest)
    assert summary.run_id == longest


async def test_a_repair_is_prompt() -> None:
    with anyio.fail_after(30):
        huge = BAD * 100_000
        model = ScriptedModel([reply("", call("echo", text=huge)), "done"])

        @tool
        def echo(text: str) -> str:
            """Echo."""
            return text

        result = await ReActLoop(model, tools=[echo], limits=Limits(max_result_chars=10**7)).run(
            "Hi"
        )
        assert result.steps[0].tool_results[0].content.startswith(SHOWN * 10)


@tool
def count_files() -> int:
    """How many files the folder holds."""
    return 3


class ReplaceWithBadText(Hook):
    """Replaces every tool result by one whose text is not valid Unicode."""

    async def after_tool_call(
        self, run: Run, call: ToolCall, result: ToolResult
    ) -> Override[ToolResult]:
        return Override(attrs.evolve(result, content=BAD))


async def test_a_result_a_hook_put_in_place_is_repaired_too() -> None:
    model = ScriptedModel([reply("", call("count_files")), "done"])
    loop = ReActLoop(model, tools=[count_files], hooks=[ReplaceWithBadText()])
    result = await loop.run("How many files?")
    content = result.steps[0].tool_results[0].content
    assert SHOWN in content and BAD not in content and "not valid Unicode" in content
    assert [note.tool_name for note in result.repairs] == ["count_files"]

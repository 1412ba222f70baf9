"""A run starts from text, a user message, or a list of parts: the model sees them in order."""

from __future__ import annotations

import pytest

from reactloop import ImagePart, ReActLoop, StopReason, UserMessage
from reactloop.errors import ConfigurationError
from reactloop.events import RunStarted
from reactloop.messages import TextPart
from reactloop.testing import ScriptedModel

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)


async def test_a_list_of_parts_reaches_the_model_as_one_user_message() -> None:
    model = ScriptedModel(["a cat"])
    result = await ReActLoop(model).run(["What is in ", ImagePart(PNG), "?"])
    assert result.output == "a cat"
    said = model.requests[0].messages[-1]
    assert said == UserMessage(parts=[TextPart("What is in "), ImagePart(PNG), TextPart("?")])


async def test_a_user_message_is_taken_as_it_is() -> None:
    model = ScriptedModel(["ok"])
    message = UserMessage(parts=[ImagePart(url="https://example.com/a.png")])
    await ReActLoop(model).run(message)
    assert model.requests[0].messages[-1] is message


async def test_the_run_started_event_carries_the_input_s_text() -> None:
    loop = ReActLoop(ScriptedModel(["ok"]))
    async with loop.stream(["Describe", ImagePart(PNG)]) as events:
        started = [event async for event in events if isinstance(event, RunStarted)]
    assert started[0].input == "Describe"


@pytest.mark.parametrize("wrong", [5, b"bytes", None, {"text": "hi"}])
async def test_an_input_that_is_neither_text_nor_parts_is_refused(wrong: object) -> None:
    model = ScriptedModel(["never"])
    with pytest.raises(ConfigurationError, match=r"text must be a string, a UserMessage"):
        await ReActLoop(model).run(wrong)  # type: ignore[arg-type]
    assert model.requests == []


async def test_a_list_holding_something_else_is_refused_naming_it() -> None:
    model = ScriptedModel(["never"])
    with pytest.raises(ConfigurationError, match=r"UserMessage.parts.*got 42"):
        await ReActLoop(model).run(["look", 42])  # type: ignore[list-item]
    assert model.requests == []


async def test_an_image_without_text_is_not_empty_input() -> None:
    model = ScriptedModel(["a chart"])
    result = await ReActLoop(model).run([ImagePart(PNG)])
    assert result.output == "a chart" and len(model.requests) == 1


async def test_parts_whose_text_is_blank_and_nothing_else_are_empty_input() -> None:
    model = ScriptedModel(["never"])
    result = await ReActLoop(model).run(["  ", " "])
    assert result.stop_reason is StopReason.GUARD_REJECTED and model.requests == []


async def test_a_history_holding_an_image_only_user_message_is_taken() -> None:
    model = ScriptedModel(["seen"])
    history = [UserMessage(parts=[ImagePart(PNG)])]
    result = await ReActLoop(model).run("and now?", history=history)
    assert result.output == "seen" and model.requests[0].messages[0] == history[0]

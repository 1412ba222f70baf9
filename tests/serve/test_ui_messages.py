"""A session's stored turns as the AI SDK's UI messages (`GET /{chat_id}/messages`, a page that
reloads): the shape ai 7's UIMessage has (checked by the SDK's own `safeValidateUIMessages`),
readable reasoning only, tool parts in the state the run left them."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop._core import (
    AssistantMessage,
    HoldKind,
    ImagePart,
    Message,
    PendingCall,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._serve import ui_messages
from reactloop._serve._ui_messages import run_ui_messages
from tests.serve.node import run_node

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)
SIGNED = ReasoningPart(text="Think.", signature="sig-secret", encrypted="enc-secret")
LOOK = ToolCall("look", '{"q": "x"}', "c1")
PAY = ToolCall("pay", '{"to": "bob"}', "c2")

TURN: tuple[Message, ...] = (
    SystemMessage("You are terse."),
    UserMessage(parts=["What is this?", ImagePart(PNG)]),
    AssistantMessage(parts=(SIGNED, TextPart("Looking."), LOOK, PAY)),
    ToolMessage("c1", "look", "found", False),
    ToolMessage("c2", "pay", "not run: a reviewer denied this call (no)", True),
    AssistantMessage("It was denied."),
)


def parts_of(messages: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = messages[n]["parts"]
    return found


def test_a_turn_is_a_user_message_and_one_assistant_message_of_its_steps() -> None:
    shown = ui_messages(TURN, "chat-1")
    assert [(m["id"], m["role"]) for m in shown] == [
        ("chat-1-1", "user"),
        ("chat-1-2", "assistant"),
    ]
    types = [p["type"] for p in parts_of(shown, 1)]
    assert types == [
        "step-start",
        "reasoning",
        "text",
        "tool-look",
        "tool-pay",
        "step-start",
        "text",
    ]


def test_a_users_image_is_a_file_part_with_a_data_url() -> None:
    [text, image] = parts_of(ui_messages(TURN, "chat-1"), 0)
    assert text == {"type": "text", "text": "What is this?"}
    assert image["mediaType"] == "image/png" and image["url"].startswith("data:image/png;base64,")


def test_reasoning_shows_its_text_never_its_signature_or_encrypted_value() -> None:
    shown = ui_messages(TURN, "chat-1")
    assert parts_of(shown, 1)[1] == {"type": "reasoning", "text": "Think.", "state": "done"}
    assert "secret" not in str(shown)


def test_tool_parts_carry_their_input_and_output_or_denial() -> None:
    parts = parts_of(ui_messages(TURN, "chat-1"), 1)
    assert parts[3] == {
        "type": "tool-look",
        "toolCallId": "c1",
        "state": "output-available",
        "input": {"q": "x"},
        "output": "found",
    }
    assert parts[4]["state"] == "output-denied" and parts[4]["approval"]["approved"] is False


def test_a_call_the_paused_run_holds_shows_as_approval_requested() -> None:
    pending = PendingCall("c2", "pay", {"to": "bob"}, "needs a person")
    shown = ui_messages(TURN[:4], "chat-2", [pending])
    pay = parts_of(shown, 1)[4]
    assert pay["state"] == "approval-requested"
    assert pay["approval"] == {"id": "c2", "requestReason": "needs a person"}


def test_a_held_calls_stand_in_result_does_not_settle_it() -> None:
    pending = PendingCall("c2", "pay", {"to": "bob"}, "needs a person")
    stand_in = ToolMessage("c2", "pay", "not run: the run stopped (awaiting_approval)", True)
    shown = ui_messages((*TURN[:4], stand_in), "chat-1", [pending])
    assert parts_of(shown, 1)[4]["state"] == "approval-requested"


def test_an_external_call_waiting_shows_as_input_available() -> None:
    pending = PendingCall("c2", "pay", {"to": "bob"}, "runs elsewhere", HoldKind.EXTERNAL)
    assert parts_of(ui_messages(TURN[:4], "chat-1", [pending]), 1)[4]["state"] == "input-available"


def test_a_runs_messages_take_the_ids_its_stream_used() -> None:
    shown = run_ui_messages("run-7", TURN)
    assert [m["id"] for m in shown] == ["run-7-user", "run-7-assistant"]


@pytest.mark.anyio
async def test_the_ai_sdk_accepts_them_as_ui_messages() -> None:
    pending = PendingCall("c2", "pay", {"to": "bob"}, "needs a person")
    messages = ui_messages(TURN, "chat-1") + ui_messages(TURN[:4], "chat-2", [pending])
    assert await run_node("ui_validate.mjs", {"messages": messages}) == {
        "success": True,
        "error": None,
    }

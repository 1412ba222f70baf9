"""What the run host's tests share: a tool the test holds open until it says so (a run still
going), a paying tool that needs approval and counts its runs, and reading a LiveRun to its end
under a hang guard."""

from __future__ import annotations

from typing import Any

import anyio

from reactloop import ReActLoop, tool
from reactloop._core import Event, RunFinished
from reactloop._serve import ChatTurn, LiveRun
from reactloop.messages import ToolMessage
from reactloop.models import ModelRequest
from reactloop.testing import FunctionModel, ScriptedModel, call, reply
from reactloop.tools import Tool

HANG = 20.0
"""A hang guard: every wait ends long before it unless something hangs."""


class Gate:
    """A tool call that waits until the test opens the gate; `entered` is set once it runs."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.opened = anyio.Event()
        self.calls: list[str] = []

    def tool(self, *, approval: bool = False) -> Tool:
        @tool(idempotent=True, requires_approval=approval)
        async def wait_here(label: str) -> str:
            """Waits for the test."""
            self.calls.append(label)
            self.entered.set()
            await self.opened.wait()
            return f"waited for {label}"

        return wait_here


class Payments:
    """A tool that needs a person's approval and records each time it runs."""

    def __init__(self) -> None:
        self.paid: list[int] = []

    def tool(self) -> Tool:
        @tool(requires_approval=True)
        def pay(amount: int) -> str:
            """Pay an amount."""
            self.paid.append(amount)
            return f"paid {amount}"

        return pay


def _pay_or_answer(request: ModelRequest) -> Any:
    last = request.messages[-1]
    if isinstance(last, ToolMessage):
        return "Paid 5." if not last.is_error else "Not paid."
    return reply("Paying.", call("pay", amount=5))


def paying_model() -> FunctionModel:
    """Asks to pay 5 (held for approval), then says it is done: from the conversation, so a
    worker that takes the run over answers as the one that started it would."""
    return FunctionModel(_pay_or_answer)


def waiting_model() -> ScriptedModel:
    """Calls the gated tool, then answers."""
    return ScriptedModel([reply("Waiting.", call("wait_here", label="a")), "Done waiting."])


def _wait_or_answer(request: ModelRequest) -> Any:
    if isinstance(request.messages[-1], ToolMessage):
        return "Done waiting."
    return reply("Waiting.", call("wait_here", label="a"))


def waiting_function_model() -> FunctionModel:
    """`waiting_model` answering from the conversation (any worker may take the run over)."""
    return FunctionModel(_wait_or_answer)


def turn(text: str, *, run_id: str | None = None, session_id: str | None = None) -> ChatTurn:
    return ChatTurn(session_id=session_id, run_id=run_id, content=(text,))


def answer(
    run_id: str | None, decisions: dict[str, Any], session_id: str | None = None
) -> ChatTurn:
    return ChatTurn(session_id=session_id, run_id=run_id, decisions=decisions)


async def read_all(live: LiveRun, after: int = 0) -> list[Event]:
    """Every event of `live` after seq `after`, to its end."""
    with anyio.fail_after(HANG):
        return [event async for _, event in live.follow(after)]


async def finished(live: LiveRun) -> RunFinished:
    """`live`'s last event, its end."""
    events = await read_all(live)
    last = events[-1]
    assert isinstance(last, RunFinished), events
    return last


def loop_of(model: ScriptedModel | FunctionModel, *tools: Tool, **options: Any) -> ReActLoop[Any]:
    return ReActLoop(model, tools=list(tools), **options)

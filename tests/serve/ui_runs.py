"""Scripted runs encoded as the AI SDK's UI message stream, for the encoder's tests and the
Node client checks: a run's events through `UIStreamEncoder`, and the chunks read back from the
SSE bytes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from reactloop import Approve, Deny, ReActLoop, tool
from reactloop._core import Decision, Event, RunFinished, RunResult
from reactloop._serve import StreamContext
from reactloop._serve._ui_stream import UIStreamEncoder
from reactloop.stores import MemoryStore
from reactloop.testing import ScriptedModel, call, reply

RUN = "run-1"
THOUGHT = "The user wants money sent."


@tool(requires_approval=True)
def transfer(to: str, amount: int) -> str:
    """Send money (a person approves each call)."""
    return f"sent {amount} to {to}"


@tool
def balance(account: str) -> str:
    """An account's balance."""
    return f"{account}: 120"


@tool
def broken(account: str) -> str:
    """A tool that fails."""
    raise RuntimeError(f"no account {account}")


def paying_loop() -> ReActLoop[Any]:
    """Looks up a balance (runs at once) and asks to transfer (held), then answers."""
    first = reply(
        "Checking first.",
        call("balance", account="main"),
        call("transfer", to="bob", amount=5),
        reasoning=THOUGHT,
    )
    model = ScriptedModel([first, "Done: the transfer went through."])
    return ReActLoop(model, tools=[transfer, balance], store=MemoryStore())


async def events_of(loop: ReActLoop[Any], text: str, run_id: str = RUN) -> list[Event]:
    """A new run's events, in order, and its result as the last event's."""
    async with loop.stream(text, run_id=run_id, session_id="chat-1") as stream:
        return [event async for event in stream]


async def resumed_events(
    loop: ReActLoop[Any], result: RunResult[Any], decision: Decision, run_id: str = RUN
) -> list[Event]:
    """The events of the paused run resumed with `decision` for its one held call."""
    [held] = result.pending
    decisions = {held.call_id: decision}
    async with loop.resume_stream(run_id, decisions=decisions) as stream:
        return [event async for event in stream]


def result_of(events: Sequence[Event]) -> RunResult[Any]:
    """The run's result, from its last event (`RunFinished`)."""
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last.result


def encode(
    events: Iterable[Event], encoder: UIStreamEncoder | None = None, *, close: bool = True
) -> bytes:
    """The SSE bytes of `events` (ids `e-{n}`), ended by `[DONE]` when `close`."""
    encoder = encoder or UIStreamEncoder(StreamContext(run_id=RUN))
    body = encoder.opening()
    for n, event in enumerate(events, start=1):
        body += encoder.encode(event, f"e-{n}")
    return body + (encoder.closing() if close else b"")


def chunks(sse: bytes) -> list[dict[str, Any]]:
    """The JSON chunks of an SSE body (`[DONE]` left out)."""
    found = []
    for frame in sse.split(b"\n\n"):
        for line in frame.split(b"\n"):
            if line.startswith(b"data: ") and line != b"data: [DONE]":
                found.append(orjson.loads(line[len(b"data: ") :]))
    return found


def of_type(found: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [chunk for chunk in found if chunk["type"] == kind]


APPROVE: Decision = Approve()
DENY: Decision = Deny("over budget")

"""A console approval prompt: the agent books a flight only once a person says yes.

`python -m reactloop.examples.approval` (offline: a scripted model plays the model). The run
pauses on `book_flight`; the prompt shows the held call and reads `y` (approve), `n` (deny) or a
new seat class (edit); the run then resumes with that decision. End of input denies.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from reactloop import (
    Approve,
    AssistantMessage,
    Deny,
    Edit,
    Message,
    ReActLoop,
    RunResult,
    ToolMessage,
    tool,
)
from reactloop.approval import Decision, PendingCall
from reactloop.stores import MemoryStore
from reactloop.testing import ScriptedModel, call

Ask = Callable[[str], str]


@tool(requires_approval=True)
def book_flight(destination: str, seat: str = "economy") -> str:
    """Book a flight (needs a person's approval: it spends money).

    Args:
        destination: Where to fly.
        seat: economy, premium or business.
    """
    return f"booked a {seat} seat to {destination}"


def scripted_model() -> ScriptedModel:
    """The model's side: book, then report what happened."""
    return ScriptedModel(
        [call("book_flight", destination="Lima", seat="business"), "Here is what I could do."]
    )


def decide(held: PendingCall, ask: Ask) -> Decision:
    """Ask the person about one held call: y approves, n (or no answer) denies, else an edit."""
    answer = ask(f"{held.tool}({held.arguments}) — {held.reason}. Approve? [y/n/seat] ").strip()
    if answer.lower() in ("y", "yes"):
        return Approve()
    if answer.lower() in ("", "n", "no"):
        return Deny("the traveller said no")
    return Edit({**held.arguments, "seat": answer})


def _ask_console(prompt: str) -> str:
    try:
        return input(prompt)
    except EOFError:
        return ""


async def run_example(ask: Ask = _ask_console) -> RunResult:
    """Run until the pause, ask about each held call, resume with the answers."""
    loop = ReActLoop(scripted_model(), tools=[book_flight], store=MemoryStore())
    result = await loop.run("Book me a flight to Lima")
    while result.paused:
        decisions = {}
        for held in result.pending:
            decisions[held.call_id] = await anyio.to_thread.run_sync(decide, held, ask)
        result = await loop.resume(result.run_id, decisions=decisions)
    for message in result.messages:
        print(f"  {_shown(message)}")
    return result


def _shown(message: Message) -> str:
    if isinstance(message, AssistantMessage):
        calls = ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
        return f"assistant: {message.text}{' -> ' + calls if calls else ''}"
    if isinstance(message, ToolMessage):
        return f"{message.name}: {message.text}"
    return f"{type(message).__name__.removesuffix('Message').lower()}: {message.text}"


if __name__ == "__main__":
    anyio.run(run_example)

"""Loops the serving tests serve, importable as `module:attr` (`reactloop serve
tests.serve.loops:weather_loop`): a model that answers from the conversation (so any number of
chats work), a weather tool that needs a person's approval, and one that does not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio

from reactloop import ReActLoop, tool
from reactloop.errors import AuthenticationError
from reactloop.messages import ToolMessage
from reactloop.models import ModelRequest
from reactloop.stores import MemoryStore
from reactloop.testing import FunctionModel, ScriptedModel, call, reply

FORECAST = "21°C, sunny <b>warm</b>"
"""The tool's answer: its markup must show as text, never as HTML."""
THOUGHT = "The user asks about the weather; the tool knows it."


@tool(requires_approval=True)
def get_weather(city: str) -> str:
    """Today's weather in a city (a person approves each call)."""
    return f"{city}: {FORECAST}"


@tool
def look_up(city: str) -> str:
    """Today's weather in a city (no approval needed)."""
    return f"{city}: {FORECAST}"


def _answer(tool_name: str) -> Any:
    """A model that calls `tool_name` for Paris, then says what came back (or that it was
    denied)."""

    def answer(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if isinstance(last, ToolMessage):
            if last.is_error:
                return "I could not check the weather: the call was not run."
            return f"The forecast for {last.text}."
        return reply("Let me check the weather.", call(tool_name, city="Paris"), reasoning=THOUGHT)

    return answer


def weather_loop() -> ReActLoop[Any]:
    """A loop whose tool needs approval, journaled in a memory store (paused runs resume from it,
    and the trace pages read it)."""
    return ReActLoop(
        FunctionModel(_answer("get_weather")), tools=[get_weather], store=MemoryStore()
    )


def chat_loop() -> ReActLoop[Any]:
    """A loop without a store whose tool needs no approval (`--store` gives it one)."""
    return ReActLoop(FunctionModel(_answer("look_up")), tools=[look_up])


REFUSED = "the provider refused the key <script>alert(1)</script>"
"""What the failing loop's model raises: the page shows it as text."""


def failing_loop() -> ReActLoop[Any]:
    """A loop whose model fails at once (a refused key): the run ends with an error."""
    return ReActLoop(ScriptedModel([AuthenticationError(REFUSED)]), tools=[look_up])


def stalling_loop() -> ReActLoop[Any]:
    """A loop whose model's first call never answers (until the run is stopped); later calls
    say "Back again."."""
    calls: list[ModelRequest] = []

    async def answer(request: ModelRequest) -> str:
        calls.append(request)
        if len(calls) == 1:
            await anyio.sleep_forever()
        return "Back again."

    return ReActLoop(FunctionModel(answer), store=MemoryStore())


@dataclass
class Weather:
    """A structured answer: a city's weather."""

    city: str
    degrees: int


def weather_report_loop() -> ReActLoop[Weather]:
    """A loop whose answer is a `Weather` (its model calls the output tool with it)."""
    report = reply("Here it is.", call("final_answer", city="Paris", degrees=21))
    return ReActLoop(ScriptedModel([report] * 4), store=MemoryStore()).with_output(Weather)


not_a_loop = "a string, not a loop"

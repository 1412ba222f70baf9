"""The demo agent: a travel assistant with two tools, a planning phase and a reflection phase.

Offline by default (a `ScriptedModel` plays the model); every step is printed as it streams.
Run it with `make demo`.
"""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Awaitable, Callable
from typing import Literal

import anyio

from reactloop import ConfigurationError, Event, Model, ReActLoop, RunResult, Usage, tool
from reactloop.events import (
    PhaseFinished,
    RunFinished,
    StepFinished,
    StepStarted,
    TextStreamed,
    ToolCallFinished,
    ToolCallStarted,
)
from reactloop.examples.planning import PlanningPhase
from reactloop.examples.reflection import ReflectionPhase
from reactloop.models import ModelDelta, ModelRequest, ModelResponse, TextDelta
from reactloop.phases import default_phases, default_start_phases
from reactloop.testing import ScriptedModel, call, reply

WEATHER = {"paris": (18, "light rain"), "tokyo": (24, "sunny"), "lima": (16, "overcast")}
RATES = {("EUR", "JPY"): 161.2, ("JPY", "EUR"): 1 / 161.2, ("EUR", "USD"): 1.08}


class Currency(enum.StrEnum):
    """Currencies the converter knows."""

    EUR = "EUR"
    JPY = "JPY"
    USD = "USD"


@tool
async def get_weather(city: str, units: Literal["c", "f"] = "c") -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
        units: Temperature units.
    """
    if city.lower() not in WEATHER:
        raise LookupError(f"no weather station for {city!r}")
    celsius, sky = WEATHER[city.lower()]
    degrees = celsius if units == "c" else round(celsius * 9 / 5 + 32)
    return f"{city}: {degrees}°{units.upper()}, {sky}"


@tool
def convert_currency(amount: float, source: Currency, target: Currency) -> dict[str, float]:
    """Convert an amount between currencies (runs in a worker thread: it is a sync function).

    Args:
        amount: How much money.
        source: Currency to convert from.
        target: Currency to convert to.
    """
    rate = RATES[(source.value, target.value)]
    return {"amount": round(amount * rate, 2), "rate": rate}


def scripted_model() -> ScriptedModel:
    """The offline model: a plan, two tool steps (one in parallel), then the answer."""
    usage = Usage(input_tokens=120, output_tokens=30)
    return ScriptedModel(
        [
            reply("1. Weather in both cities. 2. Convert the budget. 3. Answer.", usage=usage),
            reply(
                "Checking both cities at once.",
                call("get_weather", city="Paris"),
                call("get_weather", city="Tokyo"),
                usage=usage,
            ),
            reply("Now the budget.", call("get_exchange_rate", pair="EURJPY"), usage=usage),
            reply(
                "That tool does not exist; converting directly.",
                call("convert_currency", amount=500, source="EUR", target="JPY"),
                usage=usage,
            ),
            reply(
                "Tokyo is sunny (24°C) while Paris has light rain (18°C): pack for Tokyo. "
                "Your 500 EUR is about 80,600 JPY.",
                usage=usage,
            ),
        ]
    )


PACE = 0.5
"""The demo's pace in a terminal: seconds of thinking before each model turn (`demo --pace`)."""

Sleep = Callable[[float], Awaitable[None]]
DeltaSink = Callable[[ModelDelta], Awaitable[None]]


class PacedModel:
    """A model slowed to a human pace: `pace` seconds before each answer and a tenth of that
    before each streamed word, so that the live view can be read and Ctrl-C tried. `sleep` is
    the clock waited on (`anyio.sleep`; a test passes its own)."""

    def __init__(self, model: Model, pace: float, sleep: Sleep = anyio.sleep) -> None:
        if isinstance(pace, bool) or not isinstance(pace, int | float) or not pace >= 0:
            raise ConfigurationError.invalid("pace", pace, "a number of seconds >= 0")
        if not math.isfinite(pace):
            raise ConfigurationError.invalid("pace", pace, "a finite number of seconds >= 0")
        self.model, self.pace, self.sleep = model, float(pace), sleep

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The model's answer, after the pause."""
        await self.sleep(self.pace)
        return await self.model.request(request)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """The model's answer streamed, after the pause, each word of text after a short one."""
        await self.sleep(self.pace)

        async def paced(delta: ModelDelta) -> None:
            if isinstance(delta, TextDelta):
                await self.sleep(self.pace / 10)
            await on_delta(delta)

        return await self.model.stream(request, paced)


def build_loop(model: Model | str) -> ReActLoop:
    """The demo agent: default phases plus planning (once) and reflection (after tools)."""
    return ReActLoop(
        model,
        tools=[get_weather, convert_currency],
        instructions="You are a travel assistant. Use the tools; answer briefly.",
        start_phases=[*default_start_phases(), PlanningPhase()],
        phases=[*default_phases(), ReflectionPhase()],
    )


def describe(event: Event) -> str | None:
    """One readable line for the events worth showing."""
    match event:
        case StepStarted(index=index):
            return f"\n── step {index} ──"
        case PhaseFinished(phase=phase, decision=decision):
            return f"   phase {phase:<20} -> {type(decision).__name__}"
        case ToolCallStarted(call=tool_call):
            return f"   tool  {tool_call.name}({tool_call.arguments})"
        case ToolCallFinished(result=result):
            mark = "ok " if not result.is_error else "ERR"
            return f"   {mark}   {result.name} -> {result.content}"
        case StepFinished(step=step):
            u = step.usage
            return (
                f"   usage in={u.input_tokens} out={u.output_tokens}, {step.duration * 1e3:.1f} ms"
            )
        case _:
            return None


async def stream_and_print(loop: ReActLoop, question: str) -> RunResult:
    """Stream one run, printing each step; return its result."""
    print(f"user: {question}")
    text: list[str] = []
    async with loop.stream(question) as events:
        async for event in events:
            if isinstance(event, TextStreamed):
                text.append(event.text)
                continue
            if isinstance(event, RunFinished):
                result = event.result
            if isinstance(event, PhaseFinished) and text:
                print(f"   model: {''.join(text)}")
                text.clear()
            line = describe(event)
            if line is not None:
                print(line)
    print(f"\nanswer ({result.stop_reason.value}): {result.output}")
    if result.error is not None:
        print(f"error [{result.error.code.value}]: {result.error.message}")
    in_steps = sum(step.usage.total_tokens for step in result.steps)
    print(
        f"tools used: {', '.join(result.tools_used)}; total tokens: {result.usage.total_tokens}"
        f" (setup {result.setup_usage.total_tokens} + steps {in_steps})"
    )
    return result


async def run_demo(model: Model | str, question: str) -> RunResult:
    """The demo agent on `model` (a model object, or a string such as "openai:gpt-4o-mini")."""
    async with build_loop(model) as loop:
        return await stream_and_print(loop, question)


QUESTION = "Paris or Tokyo this weekend? And what is 500 EUR in yen?"


def main() -> None:
    """Run the demo: offline by default, with a real model when REACTLOOP_MODEL is set."""
    spec = os.environ.get("REACTLOOP_MODEL")
    if spec:
        print(f"(model: {spec})\n")
        anyio.run(run_demo, spec, QUESTION)
    else:
        print("(offline: a scripted model plays the LLM; set REACTLOOP_MODEL for a real one)\n")
        anyio.run(run_demo, scripted_model(), QUESTION)


if __name__ == "__main__":
    main()

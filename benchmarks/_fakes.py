"""The instant model, the tools and the histories that both loops under comparison share.

The model answers from precomputed responses (its own cost is a lookup and one scheduler
checkpoint, like `reactloop.testing.FunctionModel`), and stamps `time.perf_counter()` at every
call, so per-step cost is read the same way in both loops, with no hooks.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
from attrs import define, field

from reactloop import AssistantMessage, FunctionTool, Message, ToolCall, UserMessage, tool
from reactloop._core._contracts import DeltaSink
from reactloop.models import FinishReason, ModelRequest, ModelResponse, TextDelta

FINAL_TEXT = "done"
ToolFn = Callable[..., Awaitable[object]]


def tool_response(name: str, step: int, fanout: int) -> ModelResponse:
    """`fanout` calls of tool `name`, with arguments that differ per call (no repetition)."""
    calls = tuple(
        ToolCall(name, f'{{"n": {step * fanout + j}}}', f"call_{step}_{j}") for j in range(fanout)
    )
    return ModelResponse(AssistantMessage("", calls), finish_reason=FinishReason.TOOL_CALLS)


@define
class Script:
    """Which response answers which request: `steps` steps of tool calls, then a text answer.

    The step is read from the request's length (`base` messages precede the first call), so the
    same script serves any number of sequential or concurrent runs.
    """

    steps: int
    base: int = 1
    fanout: int = 1
    tool_name: str = "echo"
    deltas: int = 0
    stamps: list[float] = field(factory=list)
    _responses: list[ModelResponse] = field(init=False)
    _pieces: list[TextDelta] = field(init=False)

    def __attrs_post_init__(self) -> None:
        self._responses = [
            tool_response(self.tool_name, step, self.fanout) for step in range(self.steps)
        ]
        text = "x" * self.deltas if self.deltas else FINAL_TEXT
        self._responses.append(ModelResponse(AssistantMessage(text)))
        self._pieces = [TextDelta("x") for _ in range(self.deltas)]

    def answer(self, request: ModelRequest) -> ModelResponse:
        """The response for this request; stamps the time of the call."""
        self.stamps.append(time.perf_counter())
        step = (len(request.messages) - self.base) // (1 + self.fanout)
        return self._responses[min(step, self.steps)]

    def pieces(self, response: ModelResponse) -> list[TextDelta]:
        """The deltas that stream `response` (only the final answer streams in pieces)."""
        return self._pieces if not response.message.tool_calls else []


@define
class InstantModel:
    """A `Model` that answers at once from a `Script` (one checkpoint, like a network await)."""

    script: Script

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The scripted response."""
        await anyio.lowlevel.checkpoint()
        return self.script.answer(request)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """The scripted response, its text delivered as deltas first."""
        await anyio.lowlevel.checkpoint()
        response = self.script.answer(request)
        for piece in self.script.pieces(response):
            await on_delta(piece)
        return response


async def echo(n: int) -> str:
    """Return the number as text (the trivial tool).

    Args:
        n: Any number.
    """
    return f"ok {n}"


def napping(seconds: float) -> ToolFn:
    """A tool function `nap(n)` that sleeps `seconds` and returns."""

    async def nap(n: int) -> str:
        """Sleep, then return.

        Args:
            n: Any number.
        """
        await anyio.sleep(seconds)
        return f"slept {n}"

    return nap


def as_tool(fn: ToolFn) -> FunctionTool[..., Any]:
    """The same function as reactloop sees it (schema derived, arguments validated)."""
    return tool(fn)


def history(length: int) -> list[Message]:
    """A finished conversation of `length` messages, alternating user and assistant."""
    return [
        UserMessage(f"question {i}") if i % 2 == 0 else AssistantMessage(f"answer {i}")
        for i in range(length)
    ]


def tools_by_name(*fns: ToolFn) -> dict[str, ToolFn]:
    """The hand-written loop's tool table."""
    return {fn.__name__: fn for fn in fns}

"""The baseline: a minimal hand-written anyio agent loop doing the same work as reactloop.

Per step it builds the same typed request, awaits the same model, appends the same typed
messages, parses each call's JSON arguments, awaits the tool (the calls of one step concurrently),
and stops at the same point: the first answer without tool calls. Nothing else: no hooks, events,
limits, timeouts, validation or step records; that difference is the framework's overhead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import orjson

from reactloop import Message, Model, ToolCall, ToolMessage, UserMessage
from reactloop.events import TextStreamed
from reactloop.models import ModelDelta, ModelRequest, ModelResponse, TextDelta, ToolSpec

ToolFn = Callable[..., Awaitable[object]]
OnDelta = Callable[[ModelDelta], Awaitable[None]]


async def _call_tool(tools: dict[str, ToolFn], call: ToolCall) -> ToolMessage:
    arguments: dict[str, Any] = orjson.loads(call.arguments)
    value = await tools[call.name](**arguments)
    return ToolMessage(call.id, call.name, str(value))


async def _call_tools(tools: dict[str, ToolFn], calls: Sequence[ToolCall]) -> list[ToolMessage]:
    if len(calls) == 1:
        return [await _call_tool(tools, calls[0])]
    slots: list[Any] = [None] * len(calls)

    async def one(index: int, call: ToolCall) -> None:
        slots[index] = await _call_tool(tools, call)

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(one, index, call)
    return slots


async def run(
    model: Model,
    tools: dict[str, ToolFn],
    specs: tuple[ToolSpec, ...],
    text: str,
    *,
    history: Sequence[Message] = (),
    on_delta: OnDelta | None = None,
) -> str:
    """Loop until the model answers without tool calls; return that answer's text."""
    messages: list[Message] = [*history, UserMessage(text)]
    while True:
        request = ModelRequest(tuple(messages), tools=specs)
        response: ModelResponse
        if on_delta is None:
            response = await model.request(request)
        else:
            response = await model.stream(request, on_delta)
        messages.append(response.message)
        calls = response.message.tool_calls
        if not calls:
            return response.message.text
        messages.extend(await _call_tools(tools, calls))


async def stream(
    model: Model, tools: dict[str, ToolFn], specs: tuple[ToolSpec, ...], text: str
) -> int:
    """`run` with its text deltas delivered as typed events through a memory stream; the count."""
    send, receive = anyio.create_memory_object_stream[TextStreamed](256)

    async def forward(delta: ModelDelta) -> None:
        if isinstance(delta, TextDelta):
            await send.send(TextStreamed(delta.text))

    async def produce() -> None:
        async with send:
            await run(model, tools, specs, text, on_delta=forward)

    count = 0
    async with anyio.create_task_group() as group:
        group.start_soon(produce)
        async with receive:
            async for _ in receive:
                count += 1
    return count

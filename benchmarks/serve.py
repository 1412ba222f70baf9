"""`python -m benchmarks.serve`: what serving a run over HTTP adds to `loop.stream()` alone.

The same scripted run (per step: reasoning and text streamed in pieces and two tool calls, then
an answer) is driven three ways, consumed from
`loop.stream()` in-process (the baseline); posted to `ChatServer.ai_sdk()` as the AI SDK's
`useChat` posts it, and to `ChatServer.ag_ui()` as a RunAgentInput, each ASGI app called directly
(no socket: the figure is reactloop's own cost, the run host, the encoder, Starlette's routing
and streaming response, not an HTTP server's). Figures are medians over `--repeats` runs:
microseconds per run and per event, and the served run's time over the baseline's.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import orjson

from benchmarks._measure import median
from reactloop import ReActLoop, tool
from reactloop.serve import ChatServer
from reactloop.stores import MemoryStore
from reactloop.testing import ScriptedModel, call, reply

WORDS = "The forecast for Paris is mild and sunny with a light breeze from the west. " * 4
Scope = dict[str, Any]


@tool
def look_up(city: str, day: int) -> str:
    """The weather in a city."""
    return f"{city} on day {day}: 21 C, sunny"


def make_loop(steps: int, runs: int) -> ReActLoop[Any]:
    """A loop for `runs` runs one after another, each `steps` answers of text and two calls,
    then a final answer; a memory store."""
    answers: list[Any] = [
        reply(WORDS, call("look_up", city="Paris", day=n), call("look_up", city="Rome", day=n))
        for n in range(steps)
    ]
    model = ScriptedModel([*answers, "Mild and sunny in both."] * runs)
    return ReActLoop(model, tools=[look_up], store=MemoryStore())


async def direct(loop: ReActLoop[Any], number: int) -> int:
    """The baseline: the run's events read from `loop.stream()`; the number of events."""
    seen = 0
    async with loop.stream("Weather?", run_id=f"r{number}") as events:
        async for _ in events:
            seen += 1
    return seen


def ai_sdk_body(number: int) -> bytes:
    """What `useChat` posts for a new chat's first question."""
    message = {"id": f"m{number}", "role": "user", "parts": [{"type": "text", "text": "Weather?"}]}
    body = {"id": f"chat{number}", "messages": [message], "trigger": "submit-message"}
    return orjson.dumps(body)


def ag_ui_body(number: int) -> bytes:
    """A RunAgentInput for a new thread's first question."""
    message = {"id": f"m{number}", "role": "user", "content": "Weather?"}
    return orjson.dumps({"threadId": f"t{number}", "runId": f"r{number}", "messages": [message]})


async def call_asgi(app: Callable[..., Awaitable[None]], body: bytes) -> int:
    """POST `body` to the app at `/`, as an ASGI server would; the response's bytes."""
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    sent = False
    ended = anyio.Event()
    written = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await ended.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal written
        written += len(message.get("body", b""))
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            ended.set()

    await app(scope, receive, send)
    return written


async def served(steps: int, protocol: str, repeats: int) -> float:
    """Median seconds per run posted to one server's endpoint (a new chat each: the server is
    made and its lifespan entered once, as a deployed one is)."""
    server = ChatServer(make_loop(steps, repeats + 2))
    app = server.ai_sdk() if protocol == "ai-sdk" else server.ag_ui()
    body = ai_sdk_body if protocol == "ai-sdk" else ag_ui_body
    async with server.lifespan():
        return await timed(lambda n: call_asgi(app, body(n)), repeats)


async def timed(run: Callable[[int], Awaitable[int]], repeats: int) -> float:
    """Median seconds per run over `repeats` runs (after two warm-up runs)."""
    for number in range(2):
        await run(-1 - number)
    samples = []
    for number in range(repeats):
        started = time.perf_counter()
        await run(number)
        samples.append(time.perf_counter() - started)
    return median(samples)


async def measure(steps: int = 3, repeats: int = 50) -> dict[str, float]:
    """Median microseconds per run: the baseline and each protocol; and the events per run."""
    events = await direct(make_loop(steps, 1), 0)
    figures = {"events": float(events)}
    loop = make_loop(steps, repeats + 2)
    figures["loop.stream"] = await timed(lambda n: direct(loop, n), repeats) * 1e6
    for protocol in ("ai-sdk", "ag-ui"):
        figures[protocol] = await served(steps, protocol, repeats) * 1e6
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.serve", description=__doc__)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    args = parser.parse_args(argv)
    figures = anyio.run(measure, args.steps, args.repeats, backend=args.backend)
    events, base = figures["events"], figures["loop.stream"]
    print(f"a run of {events:.0f} events ({args.steps} steps), medians of {args.repeats} runs")
    print(f"  loop.stream()  {base:9.0f} us/run  {base / events:6.2f} us/event")
    for protocol in ("ai-sdk", "ag-ui"):
        cost = figures[protocol]
        extra = (cost - base) / events
        print(f"  {protocol:<13} {cost:9.0f} us/run  +{extra:5.2f} us/event  {cost / base:4.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

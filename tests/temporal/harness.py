"""The multi-process harness of the Temporal tests: the scripted vendor the workers' model talks
to (a real loopback HTTP server in the test process) and the worker processes themselves.

The vendor answers Chat Completions by script: a run's input `run KEY: TOOL TOOL ...` makes its
model call one tool per step, in order, then answer `done KEY: <the tool results>`. It counts
requests per (KEY, step), so "no model call was repeated" is checked where the calls arrive.
It also serves the gate the blocking tools wait at (tests/temporal/agents.py).
"""

from __future__ import annotations

import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import Process
from attrs import define, field, frozen
from temporalio.client import Client

from reactloop import ToolCall
from reactloop._temporal._session import SessionWorkflow
from reactloop._temporal._workflow import LOOPS, RunWorkflow
from reactloop.temporal import TemporalLoop
from tests.providers.render import openai_json, openai_stream
from tests.providers.wire_server import Reply, Request, WireServer, json_reply, sse_reply
from tests.temporal.servers import assert_replays

ROOT = Path(__file__).resolve().parents[2]
READY_SECONDS = 60.0
"""How long a worker process may take to import and start polling (a hang guard, not a wait)."""
STOP_SECONDS = 30.0


def script(key: str, *tools: str) -> str:
    """A run's input: the vendor's model calls `tools` one per step, then answers."""
    return f"run {key}: {' '.join(tools)}"


def final_answer(key: str, results: list[str]) -> str:
    """What the vendor's model answers once every scripted tool has a result."""
    return f"done {key}: {'; '.join(results)}"


@frozen
class Visit:
    """A tool call that reached the gate, in process `pid`."""

    tool: str
    run_id: str
    call_id: str
    pid: int


def user_text(messages: list[dict[str, Any]]) -> str:
    """The first user message's text (a string, or text parts)."""
    content = next(m["content"] for m in messages if m["role"] == "user")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def tool_results(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


@define
class Vendor:
    """The scripted vendor: model answers by script, request counts, and the tools' gate."""

    server: WireServer
    model_calls: Counter[tuple[str, int]] = field(factory=Counter)
    visits: list[Visit] = field(factory=list)
    opened: anyio.Event = field(factory=anyio.Event)
    _arrived: anyio.Event = field(factory=anyio.Event)

    @property
    def url(self) -> str:
        return self.server.url

    async def answer(self, request: Request) -> Reply:
        if request.path.startswith("/gate/"):
            return await self._gate(request)
        if request.path == "/v1/chat/completions":
            return self._model(request.json())
        return json_reply({"error": {"message": f"no route {request.path}"}}, status=404)

    def _model(self, body: dict[str, Any]) -> Reply:
        """One model call: the next scripted tool call, or the final answer."""
        key, _, planned = user_text(body["messages"]).removeprefix("run ").partition(": ")
        tools, results = planned.split(), tool_results(body["messages"])
        step = len(results)
        self.model_calls[(key, step)] += 1
        text, calls = final_answer(key, results), list[ToolCall]()
        if step < len(tools):
            arguments = orjson.dumps({"note": key}).decode()
            text, calls = "", [ToolCall(tools[step], arguments, f"call_{step}")]
        if body.get("stream"):
            return sse_reply(openai_stream(text, calls))
        return json_reply(openai_json(text, calls))

    async def _gate(self, request: Request) -> Reply:
        """A gated tool arrived: note it, wake whoever waits for it, hold it until opened."""
        path, _, query = request.path.partition("?")
        _, _, tool, run_id, call_id = path.split("/")
        self.visits.append(Visit(tool, run_id, call_id, int(query.removeprefix("pid="))))
        self._arrived.set()
        self._arrived = anyio.Event()
        await self.opened.wait()
        return json_reply({"open": True})

    async def wait_for_visits(self, count: int) -> list[Visit]:
        """Return once `count` gated calls have arrived (the caller bounds the wait)."""
        while len(self.visits) < count:
            await self._arrived.wait()
        return list(self.visits)

    def repeated_model_calls(self) -> dict[tuple[str, int], int]:
        """The (run, step) model calls the vendor received more than once."""
        return {step: n for step, n in self.model_calls.items() if n > 1}


@asynccontextmanager
async def vendor() -> AsyncIterator[Vendor]:
    """The scripted vendor on a loopback port, for the test's duration."""
    async with WireServer.running() as server:
        scripted = Vendor(server)
        server.handler = scripted.answer
        yield scripted


def address_of(client: Client) -> str:
    """The `host:port` a worker process connects to."""
    return client.service_client.config.target_host


@define
class Workers:
    """Worker processes (tests/temporal/worker_main.py) serving the test loop on one queue."""

    address: str
    task_queue: str
    vendor: str
    counts: Path
    logs: Path
    running: list[Process] = field(factory=list)
    started: int = 0

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "tests.temporal.worker_main", "--address", self.address,
            "--task-queue", self.task_queue, "--vendor", self.vendor, "--counts", str(self.counts),
        ]  # fmt: skip

    async def start(self) -> Process:
        """Start a worker process and return once it polls the task queue."""
        self.started += 1
        with (self.logs / f"worker-{self.started}.log").open("wb") as log:
            process = await anyio.open_process(self.command(), cwd=ROOT, stderr=log)
        self.running.append(process)
        await self._ready(process)
        return process

    async def _ready(self, process: Process) -> None:
        assert process.stdout is not None
        said = b""
        with anyio.fail_after(READY_SECONDS):
            while b"ready\n" not in said:
                try:
                    said += await process.stdout.receive()
                except anyio.EndOfStream:
                    tail = self.log_tail()
                    raise AssertionError(f"a worker ended before it was ready: {tail}") from None

    async def kill(self, process: Process) -> None:
        """SIGKILL: the worker is lost mid-work, as when its host dies."""
        process.send_signal(signal.SIGKILL)
        await process.wait()
        self.running.remove(process)

    async def stop_all(self) -> None:
        """SIGTERM every worker and wait until each has exited cleanly."""
        for process in self.running:
            process.send_signal(signal.SIGTERM)
        with anyio.fail_after(STOP_SECONDS):
            codes = [await process.wait() for process in self.running]
        assert codes == [0] * len(codes), f"a worker did not stop cleanly: {self.log_tail()}"
        self.running.clear()

    def log_tail(self) -> str:
        logs = sorted(self.logs.glob("worker-*.log"))
        return "\n".join(f"{log.name}: {log.read_text()[-3000:]}" for log in logs)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            for process in self.running:
                if process.returncode is None:
                    process.kill()
                await process.wait()
                await process.aclose()
            self.running.clear()


@asynccontextmanager
async def workers(
    client: Client, task_queue: str, scripted: Vendor, counts: Path, logs: Path
) -> AsyncIterator[Workers]:
    """A pool of worker processes; whichever are still running at the end are killed."""
    pool = Workers(address_of(client), task_queue, scripted.url, counts, logs)
    try:
        yield pool
    finally:
        await pool.aclose()


async def assert_runs_replay(client: Client, support: TemporalLoop, *run_ids: str) -> None:
    """Replay each run's workflow history in this process (which serves no worker: the loop
    is registered by name for the replayer, as `temporal_worker` registers it)."""
    LOOPS[support.name] = support
    for run_id in run_ids:
        await assert_replays(client, support.workflow_id(run_id), [RunWorkflow, SessionWorkflow])

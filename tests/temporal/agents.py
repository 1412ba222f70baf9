"""The loop the Temporal tests run, built the same way in the test process (a local run to
compare with) and in each worker process (tests/temporal/worker_main.py).

Its model is a real `OpenAIModel` speaking HTTP to the scripted vendor in the test process
(tests/temporal/harness.py `Vendor`), which counts the requests of each run and step. Each tool
invocation appends a `start` row, and a `finish` row when it returns, to a SQLite file the
processes share (WAL), so the tests count invocations across processes, killed ones included.
`charge` (not idempotent) and `lookup` (`idempotent=True`) wait at the vendor's gate until the
test opens it: a worker is killed while they are in flight, never by timing.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import httpx
from attrs import frozen

from reactloop import OpenAIModel, ReActLoop, RunContext, tool
from reactloop.stores import MemoryStore
from reactloop.temporal import ActivityOptions, TemporalLoop, ToolActivity

NAME = "agents"
API_KEY = "sk-test"
HEARTBEAT = 2.0
"""The heartbeat timeout of the gated tools: a lost worker is known within 2 s (default 10)."""
GATE_TIMEOUT = 120.0
"""How long a gated tool waits for the test to open the gate (the tests' own guards are shorter)."""
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS invocations (run_id TEXT, call_id TEXT, tool TEXT, pid INTEGER,"
    " event TEXT)"
)


@frozen
class Invocation:
    """One row of the counts file: a tool's start or finish in a process."""

    run_id: str
    call_id: str
    tool: str
    pid: int
    event: str


def connect(counts: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(counts, timeout=30.0)
    connection.execute("PRAGMA journal_mode=WAL")
    return connection


def create_counts(counts: Path) -> None:
    """Create the counts file (before any worker starts)."""
    connection = connect(counts)
    with connection:
        connection.execute(SCHEMA)
    connection.close()


def record(counts: Path, ctx: RunContext[Any], name: str, event: str) -> None:
    """Append one row: this process started or finished a call of tool `name`."""
    connection = connect(counts)
    with connection:
        row = (ctx.run_id, ctx.call_id, name, os.getpid(), event)
        connection.execute("INSERT INTO invocations VALUES (?, ?, ?, ?, ?)", row)
    connection.close()


def invocations(counts: Path) -> list[Invocation]:
    """Every row so far, in the order written."""
    connection = connect(counts)
    rows = connection.execute("SELECT * FROM invocations ORDER BY rowid").fetchall()
    connection.close()
    return [Invocation(*row) for row in rows]


async def wait_at_gate(vendor: str, ctx: RunContext[Any], name: str) -> None:
    """Tell the test this call reached the gate, and return when the test opens it."""
    url = f"{vendor}/gate/{name}/{ctx.run_id}/{ctx.call_id}?pid={os.getpid()}"
    async with httpx.AsyncClient(timeout=GATE_TIMEOUT) as client:
        (await client.get(url)).raise_for_status()


def tools(vendor: str, counts: Path) -> list[Any]:
    """The loop's tools, recording each invocation in `counts`."""

    @tool
    async def charge(ctx: RunContext[None], note: str) -> str:
        """Charge the customer (not idempotent: a second call charges twice)."""
        record(counts, ctx, "charge", "start")
        await wait_at_gate(vendor, ctx, "charge")
        record(counts, ctx, "charge", "finish")
        return f"charged {note}"

    @tool(idempotent=True)
    async def lookup(ctx: RunContext[None], note: str) -> str:
        """Look the order up (idempotent: safe to run again)."""
        record(counts, ctx, "lookup", "start")
        await wait_at_gate(vendor, ctx, "lookup")
        record(counts, ctx, "lookup", "finish")
        return f"found {note}"

    @tool
    def step(ctx: RunContext[None], note: str) -> str:
        """One quick step of work."""
        record(counts, ctx, "step", "start")
        record(counts, ctx, "step", "finish")
        return f"stepped {note}"

    @tool(requires_approval=True)
    def refund(ctx: RunContext[None], note: str) -> str:
        """Refund the customer (a person approves each call)."""
        record(counts, ctx, "refund", "start")
        record(counts, ctx, "refund", "finish")
        return f"refunded {note}"

    return [charge, lookup, step, refund]


def vendor_model(vendor: str) -> OpenAIModel:
    """The model speaking to the scripted vendor. The loop does not own a model object it is
    given, so a test running the plain loop closes this one itself (`async with`)."""
    return OpenAIModel("gpt-4o", api_key=API_KEY, base_url=f"{vendor}/v1")


def loop(vendor: str, counts: Path, model: OpenAIModel | None = None) -> ReActLoop[Any]:
    """The plain loop (a memory store, so a local run can pause for approval and resume)."""
    chosen = vendor_model(vendor) if model is None else model
    return ReActLoop(chosen, tools=tools(vendor, counts), store=MemoryStore())


def temporal_loop(vendor: str, counts: Path) -> TemporalLoop:
    """The loop wrapped for Temporal; the gated tools heartbeat on a short timeout."""
    gated = ToolActivity(heartbeat=HEARTBEAT)
    activities = ActivityOptions(tools={"charge": gated, "lookup": gated})
    return TemporalLoop(loop(vendor, counts), name=NAME, activities=activities)

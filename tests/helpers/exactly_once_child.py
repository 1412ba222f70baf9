"""The child process of tests/durable/test_exactly_once.py: one worker of a run several processes
share.

`python -m tests.helpers.exactly_once_child <folder> <stage> <backend> <store URL> [tag]`:
- `pause`: start a run that pays twice with approval, pause; its id and pending calls go to
  `folder/paused.json`.
- `approve`: approve every pending call of that run (the paying tool takes a while, so two
  approvers overlap); the outcome goes to `folder/approve-<tag>.json`.
- `stall-tool` / `stall-after`: start a run (lease 1 s) that pays once then answers; the process
  stops itself (SIGSTOP) inside the tool, or after the tool's result was committed; the parent
  lets another worker finish the run, then continues this one. Outcome: `folder/stalled.json`.
- `finish`: resume the stalled run by id (`folder/run_id`) to its end: `folder/finished.json`.
Each payment appends a line to `folder/pay.calls`, each model call a line to `model.calls`.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson

from reactloop._core._approvals import Approve, Decision
from reactloop._core._contracts import Hook
from reactloop._core._events import ToolResultDiscarded
from reactloop._core._messages import ModelRequest, ModelResponse, ToolCall, ToolMessage
from reactloop._core._state import RunContext, ToolResult
from reactloop._durable._stores import PostgresStore, SqliteStore, store_from_url
from reactloop._errors import ReactLoopError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._tools._tool import FunctionTool, tool
from reactloop.testing import FunctionModel, call, reply


def note(folder: Path, name: str, line: str) -> None:
    with (folder / name).open("a") as file:
        file.write(f"{line}\n")


def stop_myself(folder: Path, run_id: str) -> None:
    """Tell the parent which run stalls, then stall (until SIGCONT)."""
    (folder / "run_id").write_text(run_id)
    os.kill(os.getpid(), signal.SIGSTOP)


def pay_tool(folder: Path, *, approval: bool, stall: bool) -> FunctionTool[..., Any]:
    @tool(requires_approval=approval)
    async def pay(ctx: RunContext[None], amount: int) -> str:
        """Pay an amount."""
        note(folder, "pay.calls", str(amount))
        if stall:
            stop_myself(folder, ctx.run_id)
        await anyio.sleep(0.3 if approval else 0)  # a slow payment API: approvers overlap
        return f"paid {amount}"

    return pay


class StallAfterResult(Hook):
    """Stall once the tool's result is committed (before the next model call)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def after_tool_call(self, run: Run, call: ToolCall, result: ToolResult) -> None:
        stop_myself(self.folder, run.state.run_id)


def model(folder: Path, tag: str, *amounts: int) -> FunctionModel:
    def answer(request: ModelRequest) -> ModelResponse | str:
        note(folder, "model.calls", tag)
        if isinstance(request.messages[-1], ToolMessage):
            return f"done by {tag}"
        return reply("", *(call("pay", amount=amount) for amount in amounts))

    return FunctionModel(answer)


def store_for(url: str, lease_seconds: float) -> Any:
    store = store_from_url(url)
    if isinstance(store, SqliteStore):
        return SqliteStore(store.path, lease_seconds=lease_seconds)
    if isinstance(store, PostgresStore):
        return PostgresStore(store.url, lease_seconds=lease_seconds)
    return store


def outcome(result: Any = None, error: BaseException | None = None) -> dict[str, Any]:
    if error is not None:
        return {"error": type(error).__name__, "message": str(error)}
    failure = result.error
    return {
        "stop": result.stop_reason,
        "output": result.output,
        "error": None if failure is None else type(failure).__name__,
    }


async def approve(folder: Path, url: str, tag: str) -> None:
    paused = orjson.loads((folder / "paused.json").read_bytes())
    loop = ReActLoop(
        model(folder, tag),
        tools=[pay_tool(folder, approval=True, stall=False)],
        store=store_for(url, 30),
    )
    decisions: dict[str, Decision] = {call_id: Approve() for call_id in paused["pending"]}
    async with loop:
        try:
            found = outcome(await loop.resume(paused["run_id"], decisions=decisions))
        except ReactLoopError as error:
            found = outcome(error=error)
    (folder / f"approve-{tag}.json").write_bytes(orjson.dumps(found))


async def stalled(folder: Path, url: str, where: str) -> None:
    """Drive a run that stalls; what this process saw once it went on."""
    store = store_for(url, 1.0)
    hooks = [StallAfterResult(folder)] if where == "after" else []
    pay = pay_tool(folder, approval=False, stall=where == "tool")
    loop = ReActLoop(model(folder, "stalled", 5), tools=[pay], store=store, hooks=hooks)
    discarded = 0
    async with loop, loop.stream("go") as events:
        async for event in events:
            if isinstance(event, ToolResultDiscarded):
                discarded += 1
        result = await events.result()
    found = outcome(result) | {"discarded": discarded}
    (folder / "stalled.json").write_bytes(orjson.dumps(found))


async def main(folder: Path, stage: str, url: str, tag: str) -> None:
    if stage == "pause":
        pay = pay_tool(folder, approval=True, stall=False)
        loop = ReActLoop(model(folder, "pause", 1, 2), tools=[pay], store=store_for(url, 30))
        async with loop:
            result = await loop.run("go")
        pending = [p.call_id for p in result.pending]
        summary = {"run_id": result.run_id, "pending": pending}
        (folder / "paused.json").write_bytes(orjson.dumps(summary))
    elif stage == "approve":
        await approve(folder, url, tag)
    elif stage in ("stall-tool", "stall-after"):
        await stalled(folder, url, stage.removeprefix("stall-"))
    else:  # finish
        pay = pay_tool(folder, approval=False, stall=False)
        loop = ReActLoop(model(folder, "finisher", 5), tools=[pay], store=store_for(url, 30))
        async with loop:
            result = await loop.resume((folder / "run_id").read_text())
        (folder / "finished.json").write_bytes(orjson.dumps(outcome(result)))


if __name__ == "__main__":
    folder_arg, stage_arg, backend_arg, url_arg = sys.argv[1:5]
    tag_arg = sys.argv[5] if len(sys.argv) > 5 else ""
    anyio.run(main, Path(folder_arg), stage_arg, url_arg, tag_arg, backend=backend_arg)

"""The child process of the crash tests (tests/durable/test_crash.py): runs or resumes a durable
run.

`python -m tests.helpers.durable_child <folder> <how> <run|resume> <backend> <store URL>`: in `run`,
the run stops dead at the point `how` names (a batch with two of three tools done, a model call,
between two phases) and waits there to be killed; in `resume` it resumes the run in a fresh process
and writes the result. Side effects go to files in `folder`: one line per tool call and per request.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import orjson

from reactloop._core._contracts import RunStore
from reactloop._core._decisions import PROCEED, PhaseDecision
from reactloop._core._messages import ModelRequest, ModelResponse, ToolCall, ToolMessage
from reactloop._core._records import ResultSaved
from reactloop._core._state import RunContext
from reactloop._durable._stores import store_from_url
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._phases import default_phases
from reactloop._tools._tool import FunctionTool, tool
from reactloop.testing import FunctionModel, reply

FOREVER = 3600.0
DEADLINE, POLL = 60.0, 0.01


def note(folder: Path, name: str, line: str) -> None:
    """Append a line to a side-effect file (flushed at once: the process may die next)."""
    with (folder / name).open("a") as file:
        file.write(line + "\n")


async def saved_results(store: RunStore, run_id: str) -> int:
    records = (await store.load(run_id)).records
    return sum(isinstance(record, ResultSaved) for record in records)


async def until_saved(store: RunStore, run_id: str, count: int) -> None:
    """Poll the store (another task writes it, in a thread) until `count` results are saved."""
    for _ in range(int(DEADLINE / POLL)):
        if await saved_results(store, run_id) >= count:
            return
        await anyio.sleep(POLL)
    raise AssertionError(f"{count} results were never saved")


def tools(folder: Path, how: str, stage: str, store: RunStore) -> list[FunctionTool[..., Any]]:
    """Three tools counting their calls in files; in a crash `run`, t3 hangs once the results
    of t1 and t2 are saved (polled: the tools run in parallel, in any order)."""

    def make(name: str) -> FunctionTool[..., Any]:
        async def work(n: int, context: RunContext[None]) -> str:
            note(folder, f"{name}.calls", stage)
            if name == "t3" and how == "batch" and stage == "run":
                await until_saved(store, context.run_id, 2)
                note(folder, "marker", "t3 running")
                await anyio.sleep(FOREVER)
            return f"{name} did {n}"

        work.__name__ = name
        work.__doc__ = f"Tool {name}."
        return tool(work)

    return [make(name) for name in ("t1", "t2", "t3")]


def model(folder: Path, how: str, stage: str) -> FunctionModel:
    """Asks for t1, t2, t3 in one step, then answers; in a crash `run`, hangs in the second
    call (`how == "model"`)."""

    async def answer(request: ModelRequest) -> ModelResponse:
        done = any(isinstance(m, ToolMessage) for m in request.messages)
        note(folder, f"model.{stage}", "after tools" if done else "first")
        if not done:
            calls = [ToolCall(f"t{i}", f'{{"n": {i}}}', f"c{i}") for i in (1, 2, 3)]
            return reply("", *calls)
        if how == "model" and stage == "run":
            note(folder, "marker", "model called")
            await anyio.sleep(FOREVER)
        return reply("finished")

    return FunctionModel(answer)


class Halt:
    """Between the reasoning and the tool phase: in a crash `run`, stops dead there."""

    def __init__(self, folder: Path, active: bool) -> None:
        self.folder, self.active = folder, active

    async def __call__(self, run: Run) -> PhaseDecision:
        if self.active:
            note(self.folder, "marker", "between phases")
            await anyio.sleep(FOREVER)
        return PROCEED


async def main(folder: Path, how: str, stage: str, url: str) -> None:
    phases = default_phases()
    phases.insert(2, Halt(folder, how == "phases" and stage == "run"))
    store = store_from_url(url)
    loop = ReActLoop(
        model(folder, how, stage),
        tools=tools(folder, how, stage, store),
        store=store,
        phases=phases,
    )
    if stage == "run":
        async with loop.start("go") as handle:
            (folder / "run_id").write_text(handle.run_id)
        return
    result = await loop.resume((folder / "run_id").read_text())
    await store.aclose()
    messages = [type(m).__name__ for m in result.messages]
    calls = [c.id for m in result.messages for c in getattr(m, "tool_calls", ())]
    answered = [m.call_id for m in result.messages if isinstance(m, ToolMessage)]
    contents = {m.call_id: m.content for m in result.messages if isinstance(m, ToolMessage)}
    summary = {"output": result.output, "stop": result.stop_reason.value, "messages": messages,
               "calls": calls, "answered": answered, "contents": contents}  # fmt: skip
    (folder / "result.json").write_bytes(orjson.dumps(summary))


if __name__ == "__main__":
    folder_arg, how_arg, stage_arg, backend_arg, url_arg = sys.argv[1:6]
    anyio.run(main, Path(folder_arg), how_arg, stage_arg, url_arg, backend=backend_arg)

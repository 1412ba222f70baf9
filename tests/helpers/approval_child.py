"""The child process of tests/approval/test_approval_restart.py: starts a run that pauses for
approval, or resumes it with decisions, each in a fresh process sharing one store.

`python -m tests.helpers.approval_child <folder> <run|resume> <backend> <store URL>`: `run` writes
the paused result to `folder/paused.json`; `resume` approves every pending call (read from that
file) and writes the result to `folder/done.json`. Each tool call appends a line to a file."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import orjson

from reactloop._core._approvals import Approve, Decision
from reactloop._core._messages import ModelRequest, ModelResponse, ToolMessage
from reactloop._durable._stores import store_from_url
from reactloop._loop._loop import ReActLoop
from reactloop._tools._tool import FunctionTool, tool
from reactloop.testing import FunctionModel, call, reply


def pay_tool(folder: Path) -> FunctionTool[[int], str]:
    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Pay an amount."""
        with (folder / "pay.calls").open("a") as file:
            file.write(f"{amount}\n")
        return f"paid {amount}"

    return pay


def answer(request: ModelRequest) -> ModelResponse | str:
    """Pay twice, then answer once the results are in."""
    if isinstance(request.messages[-1], ToolMessage):
        return "done"
    return reply("", call("pay", amount=1), call("pay", amount=2))


async def main(folder: Path, stage: str, url: str) -> None:
    store = store_from_url(url)
    loop = ReActLoop(FunctionModel(answer), tools=[pay_tool(folder)], store=store)
    async with loop:
        if stage == "run":
            result = await loop.run("go")
            pending = [p.call_id for p in result.pending]
            summary = {"run_id": result.run_id, "pending": pending, "stop": result.stop_reason}
            (folder / "paused.json").write_bytes(orjson.dumps(summary))
            return
        paused = orjson.loads((folder / "paused.json").read_bytes())
        decisions: dict[str, Decision] = {call_id: Approve() for call_id in paused["pending"]}
        result = await loop.resume(paused["run_id"], decisions=decisions)
        done = {"output": result.output, "stop": result.stop_reason}
        (folder / "done.json").write_bytes(orjson.dumps(done))
    await store.aclose()


if __name__ == "__main__":
    folder_arg, stage_arg, backend_arg, url_arg = sys.argv[1:5]
    anyio.run(main, Path(folder_arg), stage_arg, url_arg, backend=backend_arg)

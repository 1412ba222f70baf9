"""`reactloop serve module:loop` speaks AG-UI: @ag-ui/client 1.0.0's HttpAgent, in Node, asks
the served loop a question at `/ag-ui`, gets the held call as an interrupt, approves it in its
next run's `resume`, and reads the tool's result and the final answer (asyncio and trio, the
command run with `--trio` under trio)."""

from __future__ import annotations

import pytest

from tests.cli.test_cli_serve import serving
from tests.serve.loops import FORECAST
from tests.serve.node import run_node

pytestmark = pytest.mark.anyio


async def test_the_agui_client_completes_an_approval_conversation_with_reactloop_serve(
    anyio_backend: str,
) -> None:
    approve = {"status": "resolved", "payload": {"approved": True}}
    steps = [{"say": "What is the weather in Paris?", "runId": "run-1"}, {"answer": approve}]
    async with serving("tests.serve.loops:weather_loop", trio=anyio_backend == "trio") as (url, _):
        payload = {"url": f"{url.rstrip('/')}/ag-ui", "threadId": "thread-1", "steps": steps}
        seen = await run_node("agui_chat.mjs", payload)
    asked, done = seen["steps"]
    assert asked["outcome"] == "interrupt"
    assert [i["reason"] for i in asked["interrupts"]] == ["tool_call"]
    assert done["outcome"] == "success" and "failed" not in done
    assert done["result"] == f"The forecast for Paris: {FORECAST}."
    tool_message = next(m for m in seen["messages"] if m["role"] == "tool")
    assert tool_message["content"] == f"Paris: {FORECAST}"

"""docs/serving.md says any ASGI server works: its FastAPI app (tests/serve/test_docs_app.py's
`docs_app`) run by Uvicorn, the other common server, in a child process on a loopback socket,
and the real clients in Node (ai 7's chat, @ag-ui/client's HttpAgent) each complete a
tool-using, approval-needing conversation through it (the test itself on asyncio and trio)."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from tests.serve.docs_app import ANN, QUESTION
from tests.serve.loops import FORECAST
from tests.serve.node import run_node

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 30.0


@asynccontextmanager
async def uvicorn_serving() -> AsyncIterator[str]:
    """`uvicorn --factory tests.serve.docs_app:docs_app` on a socket bound here (so its port is
    known); its base URL once its lifespan has started. Stopped after the block."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    command = [sys.executable, "-m", "uvicorn", "--factory", "--fd", str(listener.fileno())]
    command += ["--log-level", "info", "tests.serve.docs_app:docs_app"]
    process = await anyio.open_process(
        command, cwd=ROOT, stdin=subprocess.DEVNULL, pass_fds=(listener.fileno(),)
    )
    listener.close()
    try:
        assert process.stderr is not None
        said = b""
        with anyio.fail_after(HANG_GUARD):
            while b"Application startup complete" not in said:
                said += await process.stderr.receive()
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        with anyio.move_on_after(HANG_GUARD):
            await process.wait()
        if process.returncode is None:
            process.kill()
        await process.aclose()


async def test_the_ai_sdk_chat_completes_an_approval_conversation_over_uvicorn() -> None:
    async with uvicorn_serving() as url:
        steps = [{"say": QUESTION}, {"answer": True}]
        payload = {"url": f"{url}/api/chat", "chatId": "chat-1", "headers": ANN, "steps": steps}
        seen = await run_node("ai_chat.mjs", payload)
    asked, done = seen["steps"]
    assert asked["finishes"][0]["finishReason"] == "tool-calls"
    assert done["error"] is None and done["finishes"][0]["finishReason"] == "stop"
    [weather] = [p for p in seen["messages"][-1]["parts"] if p["type"] == "tool-get_weather"]
    assert weather["state"] == "output-available" and weather["output"] == f"Paris: {FORECAST}"


async def test_the_agui_client_completes_an_approval_conversation_over_uvicorn() -> None:
    approve = {"status": "resolved", "payload": {"approved": True}}
    steps = [{"say": QUESTION, "runId": "run-1"}, {"answer": approve}]
    async with uvicorn_serving() as url:
        payload = {"url": f"{url}/ag-ui", "threadId": "thread-1", "headers": ANN, "steps": steps}
        seen = await run_node("agui_chat.mjs", payload)
    asked, done = seen["steps"]
    assert asked["outcome"] == "interrupt" and done["outcome"] == "success"
    assert done["result"] == f"The forecast for Paris: {FORECAST}."

"""`reactloop serve module:loop`: the command starts a server (Hypercorn, on the backend the test
runs on: `--trio` under trio), says where, serves the chat page, the AI SDK endpoint and the trace
pages, and stops on Ctrl-C (SIGINT); a `module:attr` that names no loop is one error line."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import orjson
import pytest
from anyio.abc import Process

from reactloop._cli import run_cli
from reactloop._cli._server import served_loop
from reactloop._errors import ConfigurationError
from tests.serve.loops import FORECAST

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 30.0


async def _first_line(process: Process) -> str:
    """The child's first line of standard output (where it says its URL)."""
    assert process.stdout is not None
    read = b""
    while b"\n" not in read:
        read += await process.stdout.receive()
    return read.decode().splitlines()[0]


@asynccontextmanager
async def serving(*arguments: str, trio: bool) -> AsyncIterator[tuple[str, Process]]:
    """`reactloop serve ARGUMENTS --port 0` in a child process, from the repository root (so
    `tests.serve.loops` imports); yields its URL and the process, killed if still running."""
    command = [sys.executable, "-m", "reactloop", "serve", *arguments, "--port", "0"]
    command += ["--trio"] if trio else []
    process = await anyio.open_process(command, cwd=ROOT, stdin=subprocess.DEVNULL)
    try:
        with anyio.fail_after(HANG_GUARD):
            line = await _first_line(process)
        assert line.startswith("reactloop serve: http://127.0.0.1:"), line
        yield line.split()[2], process
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.move_on_after(HANG_GUARD):
            await process.wait()
        await process.aclose()


def _chunks(body: str) -> list[dict[str, object] | str]:
    """The SSE `data:` payloads of a UI message stream (`[DONE]` as a string)."""
    found: list[dict[str, object] | str] = []
    for line in body.splitlines():
        if line.startswith("data: "):
            data = line.removeprefix("data: ")
            found.append(data if data == "[DONE]" else orjson.loads(data))
    return found


def _question(chat_id: str) -> dict[str, object]:
    """What the AI SDK's transport posts for a first question."""
    message = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Paris?"}]}
    return {"id": chat_id, "messages": [message], "trigger": "submit-message"}


async def _rest(process: Process) -> str:
    """What the child wrote to standard error, to its end."""
    assert process.stderr is not None
    read = b""
    try:
        while True:
            read += await process.stderr.receive()
    except anyio.EndOfStream:
        return read.decode()


@pytest.mark.anyio
async def test_serve_serves_the_page_the_chat_endpoint_and_trace_pages_until_sigint(
    anyio_backend: str, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    trio = anyio_backend == "trio"
    async with serving("tests.serve.loops:chat_loop", "--store", store, trio=trio) as (url, child):
        with anyio.fail_after(HANG_GUARD):
            async with httpx.AsyncClient(base_url=url) as client:
                page = await client.get("/")
                assert page.status_code == 200 and "<title>reactloop chat</title>" in page.text
                assert "connect-src 'self'" in page.headers["content-security-policy"]
                assert 'data-trace="on"' in page.text  # the loop journals: answers link traces

                answer = await client.post("/api/chat", json=_question("chat-1"))
                assert answer.headers["x-vercel-ai-ui-message-stream"] == "v1"
                chunks = _chunks(answer.text)
                assert chunks[-1] == "[DONE]"
                said = "".join(str(c["delta"]) for c in chunks if isinstance(c, dict)
                               and c["type"] == "text-delta")  # fmt: skip
                assert said.endswith(f"The forecast for Paris: {FORECAST}.")
                finish = next(c for c in chunks if isinstance(c, dict) and c["type"] == "finish")
                run_id = finish["messageMetadata"]["runId"]  # type: ignore[index]

                trace = await client.get(f"/runs/{run_id}/trace")
                assert trace.status_code == 200 and run_id in trace.text
                assert "connect-src 'none'" in trace.headers["content-security-policy"]
                assert (await client.get("/runs/no-such-run/trace")).status_code == 404

            child.send_signal(signal.SIGINT)
            assert await child.wait() == 0
            assert "reactloop serve: stopped" in await _rest(child)


@pytest.mark.anyio
async def test_without_a_store_there_are_no_trace_pages(anyio_backend: str) -> None:
    trio = anyio_backend == "trio"
    async with serving("tests.serve.loops:chat_loop", trio=trio) as (url, child):
        with anyio.fail_after(HANG_GUARD):
            async with httpx.AsyncClient(base_url=url) as client:
                assert 'data-trace="off"' in (await client.get("/")).text
                missing = await client.get("/runs/any/trace")
                assert missing.status_code == 404 and "no store" in missing.text
            child.send_signal(signal.SIGINT)
            assert await child.wait() == 0


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("no_such_module_here:loop", "module 'no_such_module_here' cannot be imported"),
        ("tests.serve.loops:missing", "'tests.serve.loops' has no attribute 'missing'"),
        ("tests.serve.loops:not_a_loop", "ReActLoop, or a function of no arguments"),
        ("tests.serve.loops", "module:loop must be 'module:attr'"),
        ("tests.serve.loops:get_weather", "function of no arguments that returns one"),
    ],
)
def test_a_module_attr_that_names_no_loop_is_one_error_line(
    spec: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["serve", spec]) == 1
    error = capsys.readouterr().err
    assert error.startswith("reactloop: error: ") and said in error
    assert error.count("\n") == 1


def test_a_bad_port_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run_cli(["serve", "tests.serve.loops:chat_loop", "--port", "70000"])
    assert exited.value.code == 2
    assert "'70000' is not a port" in capsys.readouterr().err


def test_a_port_in_use_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert run_cli(["serve", "tests.serve.loops:chat_loop", "--port", str(port)]) == 1
    error = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port} (Address already in use)" in error
    assert error.count("\n") == 1


def test_without_the_serve_extra_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "hypercorn", None)  # import hypercorn -> ImportError
    assert run_cli(["serve", "tests.serve.loops:chat_loop"]) == 1
    error = capsys.readouterr().err
    assert "pip install 'reactloop[serve]'" in error and error.count("\n") == 1


@pytest.mark.anyio
async def test_a_store_is_refused_for_a_loop_that_has_its_own(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="without a store of its own"):
        await served_loop("tests.serve.loops:weather_loop", f"sqlite:///{tmp_path / 'x.db'}")


@pytest.mark.anyio
async def test_a_function_of_no_arguments_is_called_for_the_loop() -> None:
    loop = await served_loop("tests.serve.loops:weather_loop", None)
    assert loop.config.store is not None and "get_weather" in loop.config.tools

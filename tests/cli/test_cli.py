"""The command line in subprocesses, plain mode (stdout is a pipe): one line per event, no
colours or cursor movement; errors are one line and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import orjson
import pytest

from reactloop._cli._lines import usage_text
from reactloop._cli._trace import usage_of
from reactloop._core._messages import Usage
from reactloop._core._records import RunCreated, RunParked
from reactloop._durable._stores import SqliteStore
from reactloop._errors import ErrorCode
from tests.helpers.cli_model import FakeModel, Turn, fake_model

PROJECT = Path(__file__).resolve().parents[2]
TIMEOUT = 60


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m reactloop ARGS` from the project's folder, output captured (a pipe)."""
    environment = {name: value for name, value in os.environ.items() if name != "REACTLOOP_STORE"}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "reactloop", *args],
        cwd=PROJECT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def assert_error_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    """One line on standard error naming `words`, a non-zero exit, no traceback."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("reactloop: error: ")
    assert all(word in lines[0] for word in words), lines[0]


ADDING = [Turn("Adding.", (("add", {"a": 2, "b": 3}),)), Turn("The sum is 5.")]


@pytest.fixture
def adding() -> Iterator[FakeModel]:
    with fake_model(ADDING) as fake:
        yield fake


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.db'}"


def test_run_prints_one_plain_line_per_event(adding: FakeModel) -> None:
    done = cli(
        "run", "--model", adding.model, "--tools", "tests.helpers.cli_tools:add", "what is 2+3?"
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("run ") and lines[0].endswith(": what is 2+3?")
    assert lines[1:6] == [
        "step 1",
        "model: Adding.",
        "call add(a=2, b=3)",
        lines[4],
        lines[5],
    ]
    assert lines[4].startswith("done add (") and lines[4].endswith(" ms) -> 5")
    assert lines[5].startswith("step 1 took ") and "11 in + 7 out = 18 tokens" in lines[5]
    assert lines[-2] == "answer (completed): The sum is 5."
    assert lines[-1].startswith("2 steps, 22 in + 14 out = 36 tokens, cost unknown, ")
    assert "\x1b" not in done.stdout
    assert done.stderr == ""


def test_a_list_of_tools_and_a_plain_function_are_imported() -> None:
    turns = [Turn("", (("shout", {"text": "hi"}), ("add", {"a": 1, "b": 1}))), Turn("ok")]
    with fake_model(turns) as fake:
        done = cli(
            "run",
            "--model",
            fake.model,
            "--tools",
            "tests.helpers.cli_tools:ALL",
            "--tools",
            "tests.helpers.cli_tools:shout",
            "go",
        )
    assert done.returncode == 0, done.stderr
    assert "-> HI" in done.stdout and "-> 2" in done.stdout
    offered = {spec["function"]["name"] for spec in fake.requests[0]["tools"]}
    assert offered == {"add", "double", "shout"}


def test_a_toolset_is_imported_and_its_tools_offered() -> None:
    with fake_model([Turn("", (("triple", {"n": 4}),)), Turn("12")]) as fake:
        done = cli(
            "run", "--model", fake.model, "--tools", "tests.helpers.cli_tools:TOOLSET", "3*4?"
        )
    assert done.returncode == 0, done.stderr
    assert "done triple (" in done.stdout and "-> 12" in done.stdout
    assert [spec["function"]["name"] for spec in fake.requests[0]["tools"]] == ["triple"]


def test_an_mcp_server_started_by_mcp_serves_its_tools() -> None:
    turns = [Turn("", (("echo", {"text": "hi", "times": 2}),)), Turn("Echoed.")]
    with fake_model(turns) as fake:
        server = f"{sys.executable} -m tests.helpers.mcp_server stdio"
        done = cli("run", "--model", fake.model, "--mcp", server, "echo hi twice")
    assert done.returncode == 0, done.stderr
    assert 'call echo(text="hi", times=2)' in done.stdout and "-> hihi" in done.stdout
    assert "echo" in {spec["function"]["name"] for spec in fake.requests[0]["tools"]}


def test_an_agent_tools_sub_run_is_shown_indented_under_its_call() -> None:
    turns = [Turn("", (("researcher", {"input": "what is 2*21?"}),)), Turn("It is 42.")]
    with fake_model(turns) as fake:
        done = cli(
            "run", "--model", fake.model, "--tools", "tests.helpers.cli_tools:RESEARCHER", "q?"
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert 'call researcher(input="what is 2*21?")' in lines
    assert "  [researcher] call double(n=21)" in lines
    assert any(line.startswith("  [researcher] done double (") for line in lines)
    assert "  [researcher] answer (completed): The answer is 42." in lines
    assert lines[-2] == "answer (completed): It is 42."


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "--model", "nope", "hi"], ["'nope'", "openai:MODEL"]),
        (["run", "--model", "gopher:x", "hi"], ["unknown provider 'gopher'"]),
        (
            [
                "run",
                "--model",
                "openai-compatible:m@http://127.0.0.1:9/v1",
                "--tools",
                "nomodule_x:a",
                "hi",
            ],
            ["--tools", "nomodule_x"],
        ),
        (
            [
                "run",
                "--model",
                "openai-compatible:m@http://127.0.0.1:9/v1",
                "--tools",
                "tests.helpers.cli_tools:missing",
                "hi",
            ],
            ["--tools", "'missing'"],
        ),
        (
            [
                "run",
                "--model",
                "openai-compatible:m@http://127.0.0.1:9/v1",
                "--tools",
                "justaname",
                "hi",
            ],
            ["--tools", "'justaname'", "module:attr"],
        ),
        (
            [
                "run",
                "--model",
                "openai-compatible:m@http://127.0.0.1:9/v1",
                "--tools",
                "tests.helpers.cli_tools:NOT_A_TOOL",
                "hi",
            ],
            ["tools", "42"],
        ),
        (
            ["run", "--model", "openai-compatible:m@http://127.0.0.1:9/v1", "--mcp", "", "hi"],
            ["--mcp", "MCP server"],
        ),
        (
            [
                "run",
                "--model",
                "openai-compatible:m@http://127.0.0.1:9/v1",
                "--mcp",
                "'unclosed",
                "hi",
            ],
            ["--mcp", "quotation"],
        ),
        (
            [
                "run",
                "--model",
                "openai-compatible:m@http://127.0.0.1:9/v1",
                "--mcp",
                "no-such-server-xyz --flag",
                "hi",
            ],
            ["'no-such-server-xyz'", "could not be started"],
        ),
        (["runs", "show", "nosuchrun", "--store", "memory://"], ["'nosuchrun'"]),
        (["runs", "list"], ["--store", "REACTLOOP_STORE"]),
        (["runs", "list", "--store", "mysql://x"], ["'mysql'"]),
        (
            ["trace", "nosuchrun", "--html", "/tmp/never.html", "--store", "memory://"],
            ["'nosuchrun'"],
        ),
    ],
)
def test_errors_are_one_line_and_a_nonzero_exit(args: list[str], words: list[str]) -> None:
    assert_error_line(cli(*args), *words)


def test_a_model_that_cannot_be_reached_fails_the_run_with_exit_1() -> None:
    done = cli("run", "--model", "openai-compatible:m@http://127.0.0.1:9/v1", "hi")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr + done.stdout
    assert "run failed [" in done.stdout


def test_the_demo_runs_offline() -> None:
    done = cli("demo")  # not a terminal: no pace
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("call get_weather(") == 2
    assert "failed get_exchange_rate" in done.stdout
    assert "answer (completed): Tokyo is sunny" in done.stdout
    assert "\x1b" not in done.stdout


def test_runs_list_show_and_export_read_the_store(adding: FakeModel, store: str) -> None:
    ran = cli(
        "run",
        "--model",
        adding.model,
        "--tools",
        "tests.helpers.cli_tools:add",
        "2+3?",
        env={"REACTLOOP_STORE": store},
    )
    assert ran.returncode == 0, ran.stderr
    run_id = ran.stdout.split()[1].rstrip(":")
    listed = cli("runs", "list", "--store", store)
    assert listed.returncode == 0 and listed.stdout.startswith(f"{run_id}  finished ")
    assert cli("runs", "list", "--store", store, "--status", "paused").stdout == "no runs\n"
    shown = cli("runs", "show", run_id, "--store", store).stdout
    assert "step 1:" in shown and "call add(a=2, b=3)" in shown and "add -> 5" in shown
    assert "answer (completed): The sum is 5." in shown
    exported = orjson.loads(cli("runs", "export", run_id, "--store", store).stdout)
    assert exported["run_id"] == run_id and exported["format"] == "reactloop.run"
    kinds = [record["type"] for record in exported["records"]]
    assert kinds[0] == "RunCreated" and kinds[-1] == "RunEnded" and "ResultSaved" in kinds


def test_export_to_a_file_feeds_the_trace_page(
    adding: FakeModel, store: str, tmp_path: Path
) -> None:
    ran = cli(
        "run",
        "--model",
        adding.model,
        "--tools",
        "tests.helpers.cli_tools:add",
        "--store",
        store,
        "2+3?",
    )
    run_id = ran.stdout.split()[1].rstrip(":")
    exported = tmp_path / "run.json"
    assert cli("runs", "export", run_id, "--store", store, "-o", str(exported)).returncode == 0
    from_file, from_store = tmp_path / "file.html", tmp_path / "store.html"
    done = cli("trace", str(exported), "--html", str(from_file))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote {from_file} (2 steps)\n"
    assert cli("trace", run_id, "--store", store, "--html", str(from_store)).returncode == 0
    assert from_file.read_text() == from_store.read_text()


def test_trace_refuses_a_file_that_is_not_an_export(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    assert_error_line(
        cli("trace", str(bogus), "--html", str(tmp_path / "x.html")), "bogus.json", "runs export"
    )


def test_a_paused_run_resumes_with_the_decisions_given(store: str) -> None:
    turns = [Turn("", (("transfer", {"amount": 7}),)), Turn("Moved.")]
    with fake_model(turns) as fake:
        agent = [
            "--model",
            fake.model,
            "--tools",
            "tests.helpers.cli_tools:transfer",
            "--store",
            store,
        ]
        paused = cli("run", *agent, "move 7")
        assert paused.returncode == 0, paused.stderr
        assert "held: transfer(amount=7)" in paused.stdout
        assert "answer (awaiting_approval)" in paused.stdout
        run_id = paused.stdout.split()[1].rstrip(":")
        resumed = cli("runs", "resume", run_id, *agent, "--decide", "approve")
    assert resumed.returncode == 0, resumed.stderr
    assert "-> moved 7" in resumed.stdout
    assert "answer (completed): Moved." in resumed.stdout
    assert cli("runs", "list", "--store", store).stdout.startswith(f"{run_id}  finished")


def test_a_paused_run_without_a_terminal_to_ask_is_denied(store: str) -> None:
    turns = [Turn("", (("transfer", {"amount": 7}),)), Turn("Not moved.")]
    with fake_model(turns) as fake:
        agent = [
            "--model",
            fake.model,
            "--tools",
            "tests.helpers.cli_tools:transfer",
            "--store",
            store,
        ]
        run_id = cli("run", *agent, "move 7").stdout.split()[1].rstrip(":")
        resumed = cli("runs", "resume", run_id, *agent)
    assert resumed.returncode == 0, resumed.stderr
    assert "approve transfer(amount=7)?" in resumed.stderr
    assert "failed transfer" in resumed.stdout and "denied" in resumed.stdout


def test_reactloop_and_its_command_line_work_without_the_terminal_library() -> None:
    code = (
        "import sys; sys.modules['rich'] = None\n"  # `import rich` now fails, as if not installed
        "import reactloop\n"
        "from reactloop._cli import main\n"
        "main(['demo'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "answer (completed): Tokyo is sunny" in done.stdout


def test_runs_list_filters_by_time(adding: FakeModel, store: str) -> None:
    ran = cli(
        "run",
        "--model",
        adding.model,
        "--tools",
        "tests.helpers.cli_tools:add",
        "--store",
        store,
        "2+3?",
    )
    run_id = ran.stdout.split()[1].rstrip(":")
    listed = ["runs", "list", "--store", store]
    assert cli(*listed, "--since", "2000-01-01").stdout.startswith(run_id)
    assert cli(*listed, "--since", "2999-01-01T00:00").stdout == "no runs\n"
    assert cli(*listed, "--until", "946684800").stdout == "no runs\n"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["bogus"], ["invalid choice: 'bogus'"]),
        (["runs", "list", "--since", "yesterday"], ["'yesterday'", "ISO 8601"]),
        (["run", "hi"], ["--model"]),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args: list[str], words: list[str]) -> None:
    done = cli(*args)
    assert done.returncode == 2
    assert_error_line(done, *words)


def test_a_parked_run_is_listed_with_its_reason_shown_and_unparked(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"

    async def parked() -> None:
        store = SqliteStore(path, worker_id="w1")
        await store.create_run(RunCreated("r1", "hi", None, ("lookup",), 0.0))
        reason = "run r1 cannot be resumed: it used the tools ['lookup']"
        await store.append("r1", [RunParked(reason, 0.0, ErrorCode.CONFIGURATION, None, "w1")])
        await store.aclose()

    anyio.run(parked)
    store = f"sqlite:///{path}"
    listed = cli("runs", "list", "--store", store)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("r1  parked ")
    assert "parked: run r1 cannot be resumed: it used the tools ['lookup']" in listed.stdout
    shown = cli("runs", "show", "r1", "--store", store).stdout
    assert "parked by worker w1 at 1970-01-01 00:00:00: run r1 cannot be resumed" in shown
    assert "reactloop runs unpark r1" in shown
    unparked = cli("runs", "unpark", "r1", "--store", store)
    assert unparked.returncode == 0, unparked.stderr
    assert cli("runs", "list", "--store", store).stdout.startswith("r1  running ")
    again = cli("runs", "unpark", "r1", "--store", store)
    assert again.returncode == 1 and "r1 is not parked" in again.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["runs", "list"],
        ["runs", "show", "r1"],
        ["runs", "export", "r1"],
        ["runs", "unpark", "r1"],
        ["runs", "resume", "r1", "--model", "openai-compatible:m@http://127.0.0.1:9/v1"],
        ["trace", "r1", "--html", "never.html"],
    ],
)
def test_a_store_file_that_does_not_exist_is_an_error_and_never_created(
    command: list[str], tmp_path: Path
) -> None:
    typo = tmp_path / "typo.db"
    done = cli(*command, "--store", f"sqlite:///{typo}")
    assert_error_line(done, "--store", repr(str(typo)), "no such file")
    assert not typo.exists()
    assert list(tmp_path.iterdir()) == []


def mcp_run(*options: str) -> subprocess.CompletedProcess[str]:
    """A run with tests/helpers/mcp_server.py started by --mcp, writing a line to its stderr."""
    with fake_model([Turn("Done.")]) as fake:
        server = f"{sys.executable} -m tests.helpers.mcp_server stdio --stderr=server-says-hi"
        return cli("run", "--model", fake.model, "--mcp", server, *options, "hi")


def test_an_mcp_servers_log_lines_stay_out_of_the_terminal_unless_asked_for() -> None:
    quiet = mcp_run()
    assert quiet.returncode == 0, quiet.stderr
    assert "server-says-hi" not in quiet.stderr + quiet.stdout
    shown = mcp_run("--show-mcp-stderr")
    assert shown.returncode == 0, shown.stderr
    assert "server-says-hi" in shown.stderr


def test_usage_shows_cache_and_reasoning_tokens_within_in_and_out() -> None:
    cached = Usage(1532, 33, cache_read_tokens=1111, cache_write_tokens=418, reasoning_tokens=20)
    shown = "1532 in (1111 cache read, 418 cache write) + 33 out (20 reasoning) = 1565 tokens"
    assert usage_text(cached) == shown
    assert usage_of(cached) == {"in": 1532, "out": 33, "total": 1565, "cache_read": 1111,
                                "cache_write": 418, "reasoning": 20}  # fmt: skip
    assert usage_text(Usage(11, 7)) == "11 in + 7 out = 18 tokens"
    assert usage_of(Usage(11, 7)) == {"in": 11, "out": 7, "total": 18}

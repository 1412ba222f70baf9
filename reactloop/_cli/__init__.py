"""The `reactloop` command line: run an agent with a live view, the offline demo, a store's runs,
and a run's trace page. `main()` is the console script (and `python -m reactloop`)."""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NoReturn

import anyio

from reactloop._cli import _commands
from reactloop._cli._inert import inert
from reactloop._core import RunStatus
from reactloop._errors import ReactLoopError
from reactloop._version import __version__

Command = Callable[[argparse.Namespace], Awaitable[int]]

USAGE = """\
reactloop {version}: a decomposed ReAct loop for tool-using LLM agents.

  reactloop demo [--pace 0.5]     the offline demo (a scripted model plays the LLM)
  python -m reactloop.examples.demo
                                  the same demo as a module
  reactloop run --model openai:gpt-4o-mini [--tools module:attr] [--mcp "CMD ARGS"]
                [--attach FILE] "question"
  reactloop runs list|show|resume|export|unpark [--store sqlite:///runs.db]
  reactloop trace RUN_OR_FILE --html trace.html
  reactloop serve module:loop [--host 127.0.0.1] [--port 8000] [--store URL] [--trio]
                                  a chat page and the AI SDK / AG-UI endpoints over HTTP

`reactloop COMMAND --help` tells more; the live view needs pip install 'reactloop[cli]'.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (and exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"reactloop: error: {message} (see {self.prog} --help)\n")


def moment(value: str) -> float:
    """A time given as epoch seconds or an ISO 8601 date or time (UTC unless it says)."""
    try:
        return float(value)
    except ValueError:
        pass
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not epoch seconds or an ISO 8601 time such as 2026-11-23T16:00"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed.timestamp()


def port(value: str) -> int:
    """A TCP port, 0 to 65535 (`serve --port`; 0 picks a free one)."""
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (0 to 65535; 0: a free one)")
    return int(value)


def seconds(value: str) -> float:
    """A number of seconds >= 0 (`demo --pace`)."""
    try:
        parsed = float(value)
    except ValueError:
        parsed = -1.0
    if not 0 <= parsed < float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds >= 0")
    return parsed


MODEL_HELP = (
    "a model string, PROVIDER:MODEL (e.g. openai:gpt-4o-mini); PROVIDER is openai,"
    " openai-responses, anthropic, google (or gemini), azure or azure-responses (then"
    " :DEPLOYMENT), a host preset (openrouter, groq, deepseek, cerebras, ollama; vllm:MODEL@URL),"
    " or openai-compatible:MODEL@URL"
)
"""What `--model` takes: every prefix `model_from_string` knows (docs/providers.md has the keys)."""


def _agent_options(parser: argparse.ArgumentParser, *, model_required: bool = True) -> None:
    parser.add_argument("--model", required=model_required, help=MODEL_HELP)
    parser.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="a tool, a list of tools or a function to import (repeatable)",
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar='"COMMAND ARGS"',
        help="an MCP server to start over stdio; its tools join the agent's (repeatable)",
    )
    parser.add_argument(
        "--show-mcp-stderr",
        action="store_true",
        help="let --mcp servers write their own log lines here (default: the reactloop.mcp logger)",
    )
    parser.add_argument("--instructions", help="the agent's instructions")
    _view_options(parser)


def _view_options(parser: argparse.ArgumentParser, *, store: bool = True) -> None:
    if store:
        parser.add_argument("--store", help="run store URL (default: $REACTLOOP_STORE)")
    parser.add_argument("--plain", action="store_true", help="plain lines even on a terminal")
    parser.add_argument("--html", metavar="OUT", help="also write the run's trace page here")


def _runs_parser(commands: Any) -> None:
    runs = commands.add_parser("runs", help="the runs in a store").add_subparsers(
        dest="runs_command", required=True, metavar="list|show|resume|export|unpark"
    )
    listing = runs.add_parser("list", help="runs, newest first")
    listing.add_argument("--status", choices=[status.value for status in RunStatus])
    listing.add_argument("--session")
    listing.add_argument("--user")
    listing.add_argument("--since", type=moment, help="created at or after (ISO 8601 or epoch)")
    listing.add_argument("--until", type=moment, help="created before (ISO 8601 or epoch)")
    listing.add_argument("--limit", type=int, default=50)
    listing.add_argument("--store", help="run store URL (default: $REACTLOOP_STORE)")
    listing.set_defaults(handler=_commands.runs_list_command)
    for name, handler in (
        ("show", _commands.runs_show_command),
        ("export", _commands.runs_export_command),
        ("resume", _commands.runs_resume_command),
        ("unpark", _commands.runs_unpark_command),
    ):
        sub = runs.add_parser(name, help=f"{name} one run")
        sub.add_argument("run_id", metavar="ID")
        sub.set_defaults(handler=handler)
        if name == "resume":
            _agent_options(sub)
            sub.add_argument(
                "--decide",
                choices=["ask", "approve", "deny"],
                default="ask",
                help="decisions for a paused run's held calls (default: ask)",
            )
        else:
            sub.add_argument("--store", help="run store URL (default: $REACTLOOP_STORE)")
        if name == "export":
            sub.add_argument("-o", "--output", help="write to this file, not stdout")


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: one sub-command each, their handlers set as defaults."""
    parser = _Parser(prog="reactloop", description="reactloop's command line")
    parser.add_argument("--version", action="version", version=f"reactloop {__version__}")
    parser.add_argument(
        "--backend", choices=["asyncio", "trio"], default="asyncio", help=argparse.SUPPRESS
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser("run", help="run an agent with a live view")
    _agent_options(run)
    run.add_argument("question")
    run.add_argument(
        "--attach",
        action="append",
        default=[],
        metavar="FILE",
        help="an image, a document (PDF, text) or audio to send with the question (repeatable)",
    )
    run.set_defaults(handler=_commands.run_command)
    demo = commands.add_parser("demo", help="the offline demo agent")
    demo.add_argument("question", nargs="?")
    demo.add_argument(
        "--pace",
        type=seconds,
        metavar="SECONDS",
        help="the scripted model's pause before each turn (default: 0.5 in a terminal, else 0)",
    )
    _view_options(demo, store=False)
    demo.set_defaults(handler=_commands.demo_command)
    _runs_parser(commands)
    trace = commands.add_parser("trace", help="a run's timeline as one HTML file")
    trace.add_argument("source", metavar="RUN_OR_FILE")
    trace.add_argument("--html", required=True, metavar="OUT")
    trace.add_argument("--store", help="run store URL (default: $REACTLOOP_STORE)")
    trace.set_defaults(handler=_commands.trace_command)
    _serve_parser(commands)
    return parser


def _serve_parser(commands: Any) -> None:
    serve = commands.add_parser("serve", help="a loop over HTTP, with a chat page")
    serve.add_argument("loop", metavar="MODULE:ATTR", help="a ReActLoop, or a function making one")
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    serve.add_argument("--port", type=port, default=8000, help="the port (0: a free one)")
    serve.add_argument("--store", help="journal the runs here (for a loop without a store)")
    serve.add_argument("--trio", action="store_true", help="serve on trio (default: asyncio)")
    serve.set_defaults(handler=_commands.serve_command)


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Parse `argv`, run the command and return its exit code; an error is one line on
    standard error (exit 1), never a traceback."""
    args = build_parser().parse_args(argv)
    if args.command is None:
        print(USAGE.format(version=__version__), end="")
        return 0
    handler: Command = args.handler
    try:
        backend = "trio" if getattr(args, "trio", False) else args.backend
        return anyio.run(handler, args, backend=backend)
    except ReactLoopError as error:
        return _failed(error.message)
    except OSError as error:
        return _failed(str(error))
    except KeyboardInterrupt:
        _failed("cancelled")
        return _commands.CANCELLED_EXIT


def _failed(message: str) -> int:
    """The error as one inert line on standard error (its message may quote a run's text)."""
    print(f"reactloop: error: {inert(message)}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: run the command line and exit with its code."""
    sys.exit(run_cli(argv))

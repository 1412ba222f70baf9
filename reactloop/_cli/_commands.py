"""The command line's commands: each takes the parsed arguments and returns the exit code.

Exit codes: 0 a run ended (completed, a cap, interrupted, paused), 1 it failed or a command
could not do its work, 130 it was cancelled (a second Ctrl-C)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import anyio

from reactloop._cli._inert import inert
from reactloop._cli._lines import Kind, Line
from reactloop._cli._load import (
    STORE_ENV,
    attachments,
    import_tools,
    mcp_servers,
    open_store,
    store_url,
)
from reactloop._cli._runs import decide, export_document, stored_lines, summary_lines
from reactloop._cli._session import OpenStream, watch_run
from reactloop._cli._timings import Timings
from reactloop._cli._trace import read_export, stored_trace, watched_trace, write_trace
from reactloop._cli._views import PlainView, choose_view
from reactloop._core import RunResult, RunStatus, RunStore, RunSummary, StoredRun
from reactloop._errors import ConfigurationError
from reactloop._loop import ReActLoop, unpark_run
from reactloop.examples.demo import PACE, QUESTION, PacedModel, build_loop, scripted_model

CANCELLED_EXIT = 130
SERVE_EXTRA = "pip install 'reactloop[serve]'"


def exit_code(result: RunResult[Any] | None) -> int:
    """0 for a run that ended, 1 for a failed one, 130 for a cancelled one (no result)."""
    if result is None:
        return CANCELLED_EXIT
    return 0 if result.error is None else 1


def loop_options(args: argparse.Namespace, *, store_needed: bool = False) -> dict[str, Any]:
    """The loop's options from `--tools`, `--mcp`, `--instructions` and the store (when one is
    given)."""
    servers = mcp_servers(args.mcp, show_stderr=args.show_mcp_stderr)
    options: dict[str, Any] = {"tools": import_tools(args.tools) + servers}
    if args.instructions:
        options["instructions"] = args.instructions
    if store_needed or args.store or _store_from_env():
        options["store"] = store_url(args.store)
    return options


def _store_from_env() -> bool:
    return bool(os.environ.get(STORE_ENV))


async def watched(args: argparse.Namespace, open_stream: OpenStream, text: str) -> int:
    """Watch a run in the view `--plain` asks for; with `--html`, write its trace page."""
    timings = Timings(time.monotonic)
    result = await watch_run(open_stream, choose_view(args.plain), timings.observe)
    if result is not None and args.html:
        page = write_trace(watched_trace(result, text, timings))
        await anyio.Path(args.html).write_text(page, encoding="utf-8")
        PlainView().show([Line(Kind.NOTE, f"wrote {args.html}")])
    return exit_code(result)


async def run_command(args: argparse.Namespace) -> int:
    """`reactloop run`: one run of an agent on `--model`, shown live."""
    parts = attachments(args.attach)
    said: Any = [args.question, *parts] if parts else args.question
    loop: ReActLoop[Any] = ReActLoop(args.model, **loop_options(args))
    async with loop:
        return await watched(args, lambda: loop.stream(said), args.question)


def demo_pace(args: argparse.Namespace) -> float:
    """The demo's pace: `--pace`, else `PACE` when the live view shows it (a terminal), else 0."""
    if args.pace is not None:
        return float(args.pace)
    return PACE if not args.plain and sys.stdout.isatty() else 0.0


async def demo_command(args: argparse.Namespace) -> int:
    """`reactloop demo`: the offline demo agent (a scripted model, at a pace a person can follow
    in a terminal) in the same view."""
    pace = demo_pace(args)
    loop = build_loop(PacedModel(scripted_model(), pace) if pace else scripted_model())
    question = args.question or QUESTION
    async with loop:
        return await watched(args, lambda: loop.stream(question), question)


async def _stored(args: argparse.Namespace) -> StoredRun:
    store = open_store(args.store)
    try:
        return await store.load(args.run_id)
    finally:
        await store.aclose()


async def runs_list_command(args: argparse.Namespace) -> int:
    """`reactloop runs list`: the store's runs, newest first, filtered."""
    store = open_store(args.store)
    try:
        status = None if args.status is None else RunStatus(args.status)
        found = await store.list_runs(
            status=status,
            session_id=args.session,
            user_id=args.user,
            since=args.since,
            until=args.until,
            limit=args.limit,
        )
        parked = await parked_reasons(store, found)
    finally:
        await store.aclose()
    for line in summary_lines(found, parked):
        print(inert(line))
    return 0


async def parked_reasons(store: RunStore, runs: Sequence[RunSummary]) -> dict[str, str]:
    """Why each parked run of `runs` was set aside (read from its journal's last record)."""
    reasons = {}
    for summary in runs:
        if summary.status is RunStatus.PARKED:
            parked = (await store.load(summary.run_id)).parked
            if parked is not None:
                reasons[summary.run_id] = parked.reason
    return reasons


async def runs_unpark_command(args: argparse.Namespace) -> int:
    """`reactloop runs unpark ID`: hand a parked run back to the workers (once fixed)."""
    store = open_store(args.store)
    try:
        unparked = await unpark_run(store, args.run_id)
    finally:
        await store.aclose()
    if not unparked:
        print(f"reactloop: error: run {inert(args.run_id)} is not parked", file=sys.stderr)
        return 1
    print(f"unparked {inert(args.run_id)}: the next worker round claims it")
    return 0


async def runs_show_command(args: argparse.Namespace) -> int:
    """`reactloop runs show ID`: one stored run, step by step."""
    PlainView().show(stored_lines(await _stored(args)))
    return 0


async def runs_export_command(args: argparse.Namespace) -> int:
    """`reactloop runs export ID [-o FILE]`: the run's records as JSON."""
    document = export_document(await _stored(args))
    if args.output is None:
        sys.stdout.buffer.write(document)
        sys.stdout.flush()
    else:
        await anyio.Path(args.output).write_bytes(document)
    return 0


async def runs_resume_command(args: argparse.Namespace) -> int:
    """`reactloop runs resume ID`: go on with a stored run (a paused one with decisions)."""
    stored = await _stored(args)
    decisions = {}
    for held in stored.pending:
        ask = input if sys.stdin.isatty() else _no_answer
        decisions[held.call_id] = await anyio.to_thread.run_sync(decide, held, ask, args.decide)
    loop: ReActLoop[Any] = ReActLoop(args.model, **loop_options(args, store_needed=True))
    async with loop:
        return await watched(
            args,
            lambda: loop.resume_stream(args.run_id, decisions=decisions),
            stored.created.input,
        )


def _no_answer(prompt: str) -> str:
    """What a prompt gets with no terminal to ask on: nothing (a denial or a failure)."""
    print(f"{prompt}(no terminal: no answer)", file=sys.stderr)
    return ""


async def trace_command(args: argparse.Namespace) -> int:
    """`reactloop trace RUN_OR_FILE --html OUT`: the run's timeline as one HTML file."""
    source = anyio.Path(args.source)
    if await source.is_file():
        stored = read_export(await source.read_bytes(), args.source)
    else:
        args.run_id = args.source
        stored = await _stored(args)
    await anyio.Path(args.html).write_text(write_trace(stored_trace(stored)), encoding="utf-8")
    PlainView().show([Line(Kind.NOTE, f"wrote {args.html} ({len(stored.steps)} steps)")])
    return 0


async def serve_command(args: argparse.Namespace) -> int:
    """`reactloop serve module:loop`: the loop over HTTP with the built-in chat page, until
    Ctrl-C; needs the serve extra, which is imported only now."""
    for name in ("starlette", "hypercorn"):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigurationError(
                f"reactloop serve needs the serve extra ({name} is not installed): {SERVE_EXTRA}",
                option="serve",
                rule="the serve extra installed",
            ) from exc
    server: Any = importlib.import_module("reactloop._cli._server")
    return int(await server.serve(args.loop, args.host, args.port, args.store, trio=args.trio))

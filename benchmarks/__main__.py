"""`python -m benchmarks`: run the scenarios, print a table per backend, write results.json.

With several backends each runs in a fresh process of its own; the memory figures (`rss`) come from
a further child process that does only short runs (benchmarks/memory.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import orjson

from benchmarks._report import document, markdown, table, write_json
from benchmarks._scenarios import Sizes
from benchmarks._suite import SCENARIOS, run_suite

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results.json"
BACKENDS = ("asyncio", "trio")


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--backend", action="append", choices=BACKENDS, dest="backends",
        help="event loop backend; repeat for several (default: asyncio)",
    )  # fmt: skip
    parser.add_argument(
        "--repeats", type=int, default=Sizes().repeats,
        help="measured repeats per scenario (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--only", action="append", choices=list(SCENARIOS),
        help="run only these scenarios (repeatable)",
    )  # fmt: skip
    parser.add_argument("--tiny", action="store_true", help="smoke-test sizes, no real figures")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument(
        "--output", type=Path, default=RESULTS,
        help="where to write the JSON figures (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument("--no-output", action="store_true", help="do not write JSON")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _in_this_process(args: argparse.Namespace, backend: str) -> list[dict[str, Any]]:
    sizes = Sizes.tiny() if args.tiny else Sizes(repeats=args.repeats)
    only = frozenset(args.only) if args.only else None
    figures = anyio.run(run_suite, sizes, only, backend=backend)
    print(f"\n{backend}, Python {sys.version.split()[0]}")
    print(markdown(figures) if args.markdown else table(figures), flush=True)
    return [figure.to_json() for figure in figures]


def _child_arguments(args: argparse.Namespace, backend: str, output: Path) -> list[str]:
    flags = ["--backend", backend, "--repeats", str(args.repeats), "--output", str(output)]
    flags += ["--tiny"] * args.tiny + ["--markdown"] * args.markdown + ["--child"]
    for name in args.only or ():
        flags += ["--only", name]
    return flags


def _in_a_child(args: argparse.Namespace, backend: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "figures.json"
        command = [sys.executable, "-m", "benchmarks", *_child_arguments(args, backend, output)]
        subprocess.run(command, check=True, cwd=ROOT)
        figures: list[dict[str, Any]] = orjson.loads(output.read_bytes())["runs"][backend]
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite on each backend, print the tables, write the JSON."""
    args = parse(argv)
    backends = list(dict.fromkeys(args.backends or ["asyncio"]))
    load_before = os.getloadavg()
    run = _in_this_process if len(backends) == 1 else _in_a_child
    runs = {backend: run(args, backend) for backend in backends}
    if not args.no_output:
        sizes = Sizes.tiny() if args.tiny else Sizes(repeats=args.repeats)
        write_json(args.output, document(sizes, runs, load_before))
        if not args.child:
            print(f"\nfigures written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

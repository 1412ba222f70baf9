"""`python -m benchmarks`: run the scenarios, print a table per backend, write results.json."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from benchmarks._figures import Figure
from benchmarks._report import document, markdown, table, write_json
from benchmarks._scenarios import Sizes
from benchmarks._suite import SCENARIOS, run_suite

RESULTS = Path(__file__).resolve().parent / "results.json"
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
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite on each backend, print the tables, write the JSON."""
    args = parse(argv)
    sizes = Sizes.tiny() if args.tiny else Sizes(repeats=args.repeats)
    only = frozenset(args.only) if args.only else None
    runs: dict[str, list[Figure]] = {}
    for backend in args.backends or ["asyncio"]:
        figures = anyio.run(run_suite, sizes, only, backend=backend)
        runs[backend] = figures
        print(f"\n{backend}, Python {sys.version.split()[0]}")
        print(markdown(figures) if args.markdown else table(figures), flush=True)
    if not args.no_output:
        write_json(args.output, document(sizes, runs))
        print(f"\nfigures written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

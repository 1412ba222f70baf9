"""`python -m benchmarks.profile`: where reactloop's per-step time goes (pyinstrument).

Profiles the reactloop side only, on scenario (a)'s script by default (`--runs` runs of `--steps`
steps, after one warm-up run) or (b)'s (`--steps 1`), and prints pyinstrument's call tree.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import anyio
from pyinstrument import Profiler

from benchmarks._fakes import Script, echo
from benchmarks._rig import Rig


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__)
    parser.add_argument("--steps", type=int, default=200, help="tool steps per run")
    parser.add_argument("--runs", type=int, default=200, help="profiled runs")
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--interval", type=float, default=0.0001, help="sampling interval (s)")
    parser.add_argument("--html", action="store_true", help="print HTML instead of text")
    return parser.parse_args(argv)


async def _profile(steps: int, runs: int, profiler: Profiler) -> None:
    rig = Rig.build(lambda: Script(steps), echo)
    await rig.run_ours()
    profiler.start()
    for _ in range(runs):
        await rig.run_ours()
    profiler.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Profile the runs and print the report."""
    args = parse(argv)
    profiler = Profiler(interval=args.interval, async_mode="disabled")
    anyio.run(_profile, args.steps, args.runs, profiler, backend=args.backend)
    if args.html:
        print(profiler.output_html())
    else:
        print(profiler.output_text(unicode=False, color=False, show_all=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m benchmarks.before_after --rev REV --only g`: scenarios on an earlier commit and on
this checkout, alternately, so a change is measured against what it replaced on the same machine
at the same time (a busy machine slows both sides alike).

The earlier commit (and `--after`, when given) is checked out once with `git worktree` (in the
temp folder); both sides run this checkout's benchmark code, each importing its own `reactloop`.
Prints the median of each figure over the rounds, before and after.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.before_after", description=__doc__)
    parser.add_argument("--rev", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--after", help="a later commit (default: this checkout as it is)")
    parser.add_argument("--only", action="append", required=True, help="scenarios (repeatable)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations (default: 3)")
    parser.add_argument("--repeats", type=int, default=15, help="repeats per run (default: 15)")
    parser.add_argument("--backend", default="asyncio", choices=("asyncio", "trio"))
    return parser.parse_args(argv)


def worktree(rev: str) -> Path:
    """A checkout of `rev` in the temp folder (made once, reused)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    folder = Path(tempfile.gettempdir()) / f"reactloop-before-{commit}"
    if not folder.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(folder), commit], cwd=ROOT, check=True
        )
    return folder


def side(package_root: Path, args: argparse.Namespace, output: Path) -> dict[str, float]:
    """One run of the scenarios with `reactloop` imported from `package_root`: metric -> value."""
    with tempfile.TemporaryDirectory() as shim:
        (Path(shim) / "benchmarks").symlink_to(ROOT / "benchmarks")
        (Path(shim) / "reactloop").symlink_to(package_root / "reactloop")
        command = [sys.executable, "-m", "benchmarks", "--backend", args.backend]
        command += ["--repeats", str(args.repeats), "--output", str(output)]
        for name in args.only:
            command += ["--only", name]
        subprocess.run(command, cwd=shim, check=True, stdout=subprocess.DEVNULL)
    figures = orjson.loads(output.read_bytes())["runs"][args.backend]
    return {f["metric"]: f["reactloop"] for f in figures if f["reactloop"] is not None}


def main(argv: Sequence[str] | None = None) -> int:
    """Alternate the two sides for `--rounds` rounds; print medians side by side."""
    args = parse(argv)
    sides = {
        "before": worktree(args.rev),
        "after": ROOT if args.after is None else worktree(args.after),
    }
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
            for name in order:
                values = side(sides[name], args, Path(folder) / f"{name}.json")
                for metric, value in values.items():
                    samples[name].setdefault(metric, []).append(value)
                print(f"round {round_ + 1}: {name} done", file=sys.stderr, flush=True)
    print(f"{'metric':<62} {'before':>10} {'after':>10}  ({args.rounds} rounds, medians)")
    for metric, after in samples["after"].items():
        before = samples["before"].get(metric)
        shown = f"{statistics.median(before):10,.1f}" if before else f"{'-':>10}"
        print(f"{metric:<62} {shown} {statistics.median(after):10,.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m benchmarks.imports`: how long `import reactloop` takes, and what it loads.

Each sample is a fresh interpreter running `python -X importtime -c "import reactloop"`; the
figures are medians over `--runs` of them: the total (the cumulative time of `reactloop`'s line),
the modules that cost most, and the third-party packages loaded. `--compare DIR` measures another
checkout too (for example `git worktree add /tmp/before <rev>`), the two alternating run by run
so that drift in the machine's load lands on both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path

from attrs import frozen

ROOT = Path(__file__).resolve().parent.parent
COMMAND = (sys.executable, "-X", "importtime", "-c", "import reactloop")


@frozen
class Line:
    """One line of `-X importtime`: a module, its own and its cumulative microseconds."""

    module: str
    self_us: int
    cumulative_us: int


def parse_importtime(text: str) -> list[Line]:
    """The module lines of `-X importtime` output (the header line and others are skipped)."""
    lines = []
    for raw in text.splitlines():
        if not raw.startswith("import time:"):
            continue
        fields = raw.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[0].strip().isdigit():
            own, cumulative, module = fields
            lines.append(Line(module.strip(), int(own), int(cumulative)))
    return lines


def sample(tree: Path) -> list[Line]:
    """One fresh interpreter importing reactloop from `tree`."""
    environment = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run(
        COMMAND, cwd=tree, env=environment, capture_output=True, text=True, check=True
    )
    return parse_importtime(done.stderr)


@frozen
class Summary:
    """Medians over the samples of one tree: the total, and each module's own and cumulative
    time (a module missing from a sample counts as 0 there)."""

    tree: Path
    runs: int
    total_ms: float
    quartiles_ms: tuple[float, float]
    modules: int
    own_us: dict[str, float]
    cumulative_us: dict[str, float]

    def top(self, count: int) -> list[str]:
        """The `count` modules with the most own time."""
        return sorted(self.own_us, key=self.own_us.__getitem__, reverse=True)[:count]

    def third_party(self) -> list[str]:
        """The packages outside the standard library and reactloop that `import reactloop` loads
        (`-X importtime` also lists the imports tried that found nothing: those are left out)."""
        tops = {name.split(".")[0] for name in self.own_us} - {"reactloop"}
        outside = (t for t in tops if t not in sys.stdlib_module_names and not t.startswith("_"))
        return sorted(t for t in outside if find_spec(t) is not None)


def summarize(tree: Path, samples: Sequence[list[Line]]) -> Summary:
    """The medians of one tree's samples."""
    totals = [next(line.cumulative_us for line in s if line.module == "reactloop") / 1000
              for s in samples]  # fmt: skip
    own: defaultdict[str, list[int]] = defaultdict(list)
    cumulative: defaultdict[str, list[int]] = defaultdict(list)
    for lines in samples:
        for line in lines:
            own[line.module].append(line.self_us)
            cumulative[line.module].append(line.cumulative_us)
    padding = [0] * len(samples)

    def median(values: list[int]) -> float:
        return statistics.median((values + padding)[: len(samples)])

    quartiles = statistics.quantiles(totals, n=4) if len(totals) > 1 else [totals[0]] * 3
    return Summary(
        tree, len(samples), statistics.median(totals), (quartiles[0], quartiles[2]),
        round(statistics.median(len(lines) for lines in samples)),
        {name: median(values) for name, values in own.items()},
        {name: median(values) for name, values in cumulative.items()},
    )  # fmt: skip


def measure(trees: Sequence[Path], runs: int) -> list[Summary]:
    """`runs` samples of each tree, the trees taking turns (rotating which goes first)."""
    samples: dict[Path, list[list[Line]]] = {tree: [] for tree in trees}
    for round_ in range(runs):
        shift = round_ % len(trees)
        for tree in [*trees[shift:], *trees[:shift]]:
            samples[tree].append(sample(tree))
    return [summarize(tree, samples[tree]) for tree in trees]


def describe(summary: Summary, top: int) -> str:
    """One tree's figures as lines of text."""
    first, third = summary.quartiles_ms
    lines = [
        f"{summary.tree}: import reactloop {summary.total_ms:.1f} ms median of {summary.runs} "
        f"(quartiles {first:.1f}-{third:.1f}), {summary.modules} modules",
        f"  third-party packages loaded: {', '.join(summary.third_party())}",
        f"  {'own ms':>7} {'cumulative ms':>14}  module (top {top} by own time)",
    ]
    for name in summary.top(top):
        own, cumulative = summary.own_us[name] / 1000, summary.cumulative_us[name] / 1000
        lines.append(f"  {own:7.2f} {cumulative:14.2f}  {name}")
    return "\n".join(lines)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.imports", description=__doc__)
    parser.add_argument("--runs", type=int, default=20, help="fresh interpreters per tree")
    parser.add_argument("--top", type=int, default=15, help="modules listed per tree")
    parser.add_argument(
        "--compare", type=Path, action="append", default=[],
        help="another checkout to measure alternately (repeatable)",
    )  # fmt: skip
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure this checkout (and any to compare), print each one's figures."""
    args = parse(argv)
    trees = [ROOT, *(tree.resolve() for tree in args.compare)]
    summaries = measure(trees, args.runs)
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    for summary in summaries:
        print(describe(summary, args.top))
    for summary in summaries[1:]:
        ratio = summaries[0].total_ms / summary.total_ms
        print(f"{ROOT.name} / {summary.tree}: {ratio:.2f}x the import time")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`make mutate`: mutation testing of the core modules with mutmut, one module at a time, and a
score per module.

Each module's mutants are run (`mutmut run "<module>.*"`), then the results mutmut keeps under
`mutants/` are read back. mutmut forks each mutant's test run from its own process, where
reactloop and the tests are already imported: code that ran at import (a module-level `@tool`
compiling its schema, a default built when a module loads) keeps the original code there. So
each survivor is run again in a fresh interpreter, where everything is imported under the
mutant (`mutants/fresh.json` keeps these verdicts); a failure there counts as a kill only if the
same tests pass in a fresh interpreter without the mutant, under the same hang watchdog.

The score of a module is killed / (all mutants - equivalent ones), where killed means a test
failed or the tests hung and were stopped (shown apart); equivalent mutants (no behaviour change
possible) are listed with their reason in `tests/mutation-equivalents.md`. An entry counts only
while its mutant still survives and still makes the change recorded there, so a stale entry
cannot hide a new survivor.

    make mutate CHILDREN=2                     # install what it needs, run all, report
    python -m benchmarks.mutation              # run every core module, then report
    python -m benchmarks.mutation stop hooks   # run some modules
    python -m benchmarks.mutation --report     # report the results of earlier runs only
    python -m benchmarks.mutation --recheck    # run the survivors again in fresh interpreters
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

import orjson
from attrs import frozen

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS = ROOT / "tests" / "mutation-equivalents.md"
TARGET = 95.0

# Module name -> the source files whose mutants make up its score.
CORE: dict[str, tuple[str, ...]] = {
    "phases": (
        "reactloop/_phases/__init__.py",
        "reactloop/_phases/_execute.py",
        "reactloop/_phases/_gate.py",
        "reactloop/_phases/applier.py",
        "reactloop/_phases/guards.py",
        "reactloop/_phases/output.py",
        "reactloop/_phases/reasoning.py",
        "reactloop/_phases/start.py",
        "reactloop/_phases/tools.py",
    ),
    "stop": ("reactloop/_policies/_stop.py",),
    "hooks": ("reactloop/_policies/_hooks.py",),
    "schema": ("reactloop/_schema/_generate.py",),
    "context": ("reactloop/_policies/_context.py",),
    "repair": ("reactloop/_core/_repair.py",),
    "retry": ("reactloop/_policies/_retry.py",),
    "sse": ("reactloop/_providers/_sse.py",),
}

FRESH = ROOT / "mutants" / "fresh.json"
"""Verdicts of survivors run again in a fresh interpreter: mutant name -> pytest's exit code."""
KILLED = {1, 3, 37}  # a failing test (or pytest's internal error), or the type checker
# A mutant that makes the tests hang is stopped by mutmut's CPU-time limit: the tests did not
# pass, so it counts as killed (and is shown apart, as `timeout`).
TIMED_OUT = {36, 24, -24, 152, 255}
NO_VERDICT = -1
"""A survivor's fresh run that failed, whose tests also fail without the mutant: it stays a
survivor (or an equivalent)."""
BASELINE = "baseline.x_none__mutmut_0"
"""No mutant active, named like one so that the tests run under the same hang watchdog
(tests/conftest.py): a slow test fails the baseline too, rather than passing for a kill."""
_ENTRY = re.compile(r"^- `(?P<name>[^`]+)`: `(?P<line>.+)` -- (?P<why>.+)$")


@frozen
class Equivalent:
    """A surviving mutant judged equivalent: the line it writes, and why it changes nothing."""

    name: str
    line: str
    why: str


@frozen
class Score:
    """One source file's mutants by outcome."""

    path: str
    killed: int
    timed_out: int
    survived: tuple[str, ...]
    equivalent: int
    other: int

    @property
    def counted(self) -> int:
        """Mutants that are not equivalent."""
        return self.killed + self.timed_out + len(self.survived) + self.other

    @property
    def percent(self) -> float:
        """Killed (or timed-out) mutants among the non-equivalent ones."""
        detected = self.killed + self.timed_out
        return 100.0 * detected / self.counted if self.counted else 100.0


def pattern(path: str) -> str:
    """The mutmut name glob of one source file's mutants."""
    return path.removesuffix(".py").replace("/", ".") + ".*"


def mutmut(*args: str) -> list[str]:
    """The mutmut command line beside this interpreter."""
    return [str(Path(sys.executable).parent / "mutmut"), *args]


def run_module(module: str, children: int) -> bool:
    """Run mutmut on one module's mutants (output in `mutants/<module>.log`); False when mutmut
    failed, e.g. because the unmutated tests did not pass: its stored results are then stale."""
    log = ROOT / "mutants" / f"{module}.log"
    log.parent.mkdir(exist_ok=True)
    print(f"mutating {module} (log: {log.relative_to(ROOT)})", flush=True)
    command = mutmut("run", "--max-children", str(children), *map(pattern, CORE[module]))
    env = {"REACTLOOP_HYPOTHESIS_PROFILE": "mutation", **os.environ}
    with log.open("w") as out:
        done = subprocess.run(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, check=False
        )
    if done.returncode != 0:
        print(f"mutmut failed on {module} (exit code {done.returncode}): see {log}", flush=True)
    return done.returncode == 0


def fresh_verdicts() -> dict[str, int]:
    """The survivors' verdicts from fresh interpreters so far."""
    return orjson.loads(FRESH.read_bytes()) if FRESH.exists() else {}


def forget_fresh_verdicts(paths: Sequence[str]) -> None:
    """Drop the fresh-interpreter verdicts of the mutants of `paths` (they are about to be run
    again); other modules' verdicts stay, so one module can be re-run alone."""
    if not FRESH.exists():
        return
    prefixes = tuple(pattern(path).removesuffix("*") for path in paths)
    kept = {name: code for name, code in fresh_verdicts().items() if not name.startswith(prefixes)}
    FRESH.write_bytes(orjson.dumps(kept, option=orjson.OPT_SORT_KEYS))


def pytest_options() -> list[str]:
    """The pytest options mutmut adds (pyproject's `[tool.mutmut] pytest_add_cli_args`)."""
    with (ROOT / "pyproject.toml").open("rb") as project:
        options: list[str] = tomllib.load(project)["tool"]["mutmut"]["pytest_add_cli_args"]
    return options


def run_fresh(mutant: str, tests: Sequence[str]) -> int:
    """pytest's exit code for `tests` in a new interpreter with `mutant` active from the start."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", *pytest_options()]
    env = {**os.environ, "REACTLOOP_HYPOTHESIS_PROFILE": "mutation", "MUTANT_UNDER_TEST": mutant}
    done = subprocess.run(
        [*command, *sorted(tests)], cwd=ROOT / "mutants", env=env, capture_output=True, check=False
    )
    return done.returncode


def recheck_survivors(paths: Sequence[str]) -> None:
    """Run each survivor of `paths` again in a fresh interpreter (see the module docstring)."""
    stats = orjson.loads((ROOT / "mutants" / "mutmut-stats.json").read_bytes())
    tests_of: dict[str, list[str]] = stats["tests_by_mangled_function_name"]
    verdicts = fresh_verdicts()
    for path in paths:
        meta = orjson.loads((ROOT / "mutants" / f"{path}.meta").read_bytes())
        for name, code in sorted(meta["exit_code_by_key"].items()):
            tests = tests_of.get(name.partition("__mutmut_")[0], [])
            if code != 0 or name in verdicts or not tests:
                continue
            verdict = run_fresh(name, tests)
            if verdict != 0 and run_fresh(BASELINE, tests) != 0:
                verdict = NO_VERDICT  # they fail (or run out of time) without the mutant too
            verdicts[name] = verdict
            FRESH.write_bytes(orjson.dumps(verdicts, option=orjson.OPT_SORT_KEYS))
            print(f"fresh interpreter: {name}: exit code {verdict}", flush=True)


def _fresh_code(verdict: int) -> int:
    """A survivor's code after its fresh run: any failure the baseline does not share (a test,
    the hang watchdog, a crash) detects the mutant; a pass or no verdict leaves it a survivor."""
    return 0 if verdict in (0, NO_VERDICT) else (verdict if verdict in KILLED | TIMED_OUT else 1)


def load_equivalents(text: str) -> dict[str, Equivalent]:
    """The entries of the equivalents file, by mutant name."""
    found = (_ENTRY.match(line) for line in text.splitlines())
    return {m["name"]: Equivalent(m["name"], m["line"], m["why"]) for m in found if m is not None}


def mutated_line(name: str) -> str | None:
    """The first line the mutant adds, as `mutmut show` prints its diff."""
    shown = subprocess.run(
        mutmut("show", name), cwd=ROOT, capture_output=True, text=True, check=False
    )
    for line in shown.stdout.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            return line[1:].strip()
    return None


def score(path: str, equivalents: dict[str, Equivalent], problems: list[str]) -> Score:
    """Count one file's outcomes; equivalent entries that no longer hold are reported."""
    meta = ROOT / "mutants" / f"{path}.meta"
    codes: dict[str, int | None] = (
        orjson.loads(meta.read_bytes())["exit_code_by_key"] if meta.exists() else {}
    )
    killed, timed_out, equivalent, other = 0, 0, 0, 0
    survived: list[str] = []
    fresh = fresh_verdicts()
    codes = {
        name: _fresh_code(fresh.get(name, 0)) if code == 0 else code for name, code in codes.items()
    }
    for name, code in sorted(codes.items()):
        if code in KILLED | TIMED_OUT and name in equivalents:
            problems.append(f"listed as equivalent but a test tells it apart: {name}")
        if code in KILLED:
            killed += 1
        elif code in TIMED_OUT:
            timed_out += 1
        elif code == 0 and name in equivalents:
            if mutated_line(name) == equivalents[name].line:
                equivalent += 1
            else:
                problems.append(f"stale equivalent entry (the mutant changed): {name}")
                survived.append(name)
        elif code == 0:
            survived.append(name)
        else:
            other += 1
            problems.append(f"not judged (mutmut exit code {code}): {name}")
    return Score(path, killed, timed_out, tuple(survived), equivalent, other)


HEADER = f"{'module':<34} {'killed':>6} {'(timeout)':>9} / {'total':<6} {'equiv':>5}  score"


def row(label: str, scores: Sequence[Score]) -> tuple[str, float]:
    """One table row over `scores` (killed counts timeouts too), and its score."""
    detected = sum(s.killed + s.timed_out for s in scores)
    counted = sum(s.counted for s in scores)
    percent = 100.0 * detected / counted if counted else 100.0
    timed_out = f"({sum(s.timed_out for s in scores)})"
    equivalent = sum(s.equivalent for s in scores)
    counts = f"{detected:>6} {timed_out:>9} / {counted:<6} {equivalent:>5}"
    return f"{label:<34} {counts}  {percent:5.1f}%", percent


def report(modules: Sequence[str]) -> bool:
    """Print a score per module (and per file); True when every module reaches the target."""
    equivalents = load_equivalents(EQUIVALENTS.read_text() if EQUIVALENTS.exists() else "")
    problems: list[str] = []
    survivors: list[str] = []
    ok = True
    print(f"\n{HEADER}")
    for module in modules:
        scores = [score(path, equivalents, problems) for path in CORE[module]]
        line, percent = row(module, scores)
        ok = ok and percent >= TARGET
        print(line)
        for s in scores if len(scores) > 1 else ():
            print(row(f"  {s.path}", [s])[0])
        survivors.extend(name for s in scores for name in s.survived)
    for name in survivors:
        print(f"survived: {name}")
    for problem in problems:
        print(problem)
    print(f"\nscore: killed (timeouts included) / non-equivalent mutants; target {TARGET:g}%")
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen modules (all by default) one after the other, then report."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mutation")
    parser.add_argument("modules", nargs="*", metavar="module", help=", ".join(CORE))
    parser.add_argument("--report", action="store_true", help="only report earlier results")
    parser.add_argument("--recheck", action="store_true", help="recheck survivors, then report")
    parser.add_argument("--children", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    modules = list(args.modules or CORE)
    if unknown := sorted(set(modules) - set(CORE)):
        parser.error(f"unknown modules {unknown}; the core modules are {', '.join(CORE)}")
    running = not (args.report or args.recheck)
    if running:
        # Which tests reach which function is measured anew: mutmut only re-measures tests it
        # has not seen, so an edited test could otherwise be skipped for a mutant it now kills.
        (ROOT / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
        forget_fresh_verdicts([path for module in modules for path in CORE[module]])
    failed = [m for m in modules if not run_module(m, args.children)] if running else []
    if running or args.recheck:
        recheck_survivors([path for module in modules for path in CORE[module]])
    ok = report(modules)
    if failed:
        print(f"not measured (mutmut failed, results above are stale): {', '.join(failed)}")
    return 0 if ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())

"""Smoke test of the benchmarks: every scenario runs at a tiny size and reports its figures."""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import orjson
import pytest

from benchmarks import _handwritten as handwritten
from benchmarks import cassette as cassette_benchmark
from benchmarks import imports as imports_benchmark
from benchmarks import memory as memory_benchmark
from benchmarks import mutation, output_validation
from benchmarks import partial as partial_benchmark
from benchmarks import providers as providers_benchmark
from benchmarks import reasoning as reasoning_benchmark
from benchmarks import telemetry as telemetry_benchmark
from benchmarks.__main__ import main
from benchmarks._fakes import FINAL_TEXT, InstantModel, Script, as_tool, echo
from benchmarks._figures import Figure, Measure, Target
from benchmarks._rig import IncompleteRunError, Rig
from benchmarks._scenarios import Sizes
from benchmarks._suite import SCENARIOS
from benchmarks.mutation import EQUIVALENTS, Score, load_equivalents
from reactloop import ReActLoop
from tests.helpers.postgres_server import binaries, unavailable

pytestmark = pytest.mark.anyio

MEASURED = sorted(set(SCENARIOS) - {"e-trim"})


@pytest.mark.parametrize("name", MEASURED)
async def test_scenario_reports_positive_figures(name: str) -> None:
    if name == "k" and binaries() is None:
        unavailable()  # (k) measures PostgresStore: skipped locally with how to enable it
    figures = await SCENARIOS[name](Sizes.tiny())
    assert figures
    assert all(f.reactloop is not None and math.isfinite(f.reactloop) for f in figures)
    # A cost one option adds is two timings subtracted: on a busy machine it may come out <= 0.
    assert all(f.reactloop is not None and f.reactloop > 0 for f in figures if not f.difference)


async def test_the_cassette_benchmark_reports_each_contender() -> None:
    figures = await cassette_benchmark.measure(steps=2, repeats=1)
    assert set(figures) == {"ScriptedModel", "ReplayModel", "ReplayModel, served tools"}
    assert all(value > 0 for value in figures.values())


async def test_the_telemetry_benchmark_reports_each_way() -> None:
    figures = await telemetry_benchmark.measure(steps=2, repeats=1)
    assert set(figures) == {"telemetry off", "on, no-op exporter", "on, with phase spans"}
    assert all(value > 0 for value in figures.values())


async def test_the_reasoning_benchmark_reports_each_contender_with_its_quartiles() -> None:
    figures = await reasoning_benchmark.measure(steps=2, repeats=1)
    assert set(figures) == {"none", "one", "two"}
    assert all(0 < first <= median <= third for first, median, third in figures.values())


def test_the_reasoning_benchmarks_responses_carry_the_parts_it_names() -> None:
    for count in (0, 1, 2):
        first, answer = reasoning_benchmark.responses(1, count)
        assert len(first.message.reasoning) == count and first.message.tool_calls
        assert answer.message.text == "done"


def test_the_partial_benchmark_parses_its_answers_and_reports_each_contender() -> None:
    text = partial_benchmark.answer(2_000)
    pieces = partial_benchmark.deltas(text, 10)
    for parse in partial_benchmark.contenders().values():
        assert parse(pieces) == orjson.loads(text)
    figures = partial_benchmark.measure(2_000, 10, repeats=1)
    per_answer = partial_benchmark.measure_fields(50, 10, repeats=1)
    for found in (figures, per_answer):
        assert {"PartialJson", "PartialJson(growing_strings)"} <= set(found)
        assert all(value > 0 for value in found.values())


def test_the_partial_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert partial_benchmark.main(["--size", "500", "--repeats", "1"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("us/delta") >= 4 and "us/answer" in printed


async def test_trim_is_measured_and_drops_messages() -> None:
    [figure] = await SCENARIOS["e-trim"](Sizes.tiny())
    assert figure.reactloop is not None and figure.reactloop > 0
    assert figure.note is not None and figure.note.startswith("kept ")


async def test_both_loops_make_the_same_model_calls() -> None:
    rig = Rig.build(lambda: Script(7), echo)
    await rig.run_ours()
    await rig.run_theirs()
    assert len(rig.ours.stamps) == len(rig.theirs.stamps) == 8


async def test_handwritten_loop_answers_after_the_scripted_steps() -> None:
    spec = (as_tool(echo).spec,)
    text = await handwritten.run(InstantModel(Script(3)), {"echo": echo}, spec, "go")
    assert text == FINAL_TEXT


async def test_a_run_that_ends_early_fails_the_benchmark() -> None:
    rig = Rig.build(lambda: Script(3), echo)
    capped = ReActLoop(InstantModel(rig.ours), tools=[as_tool(echo)], max_iterations=1)
    with pytest.raises(IncompleteRunError, match="max_iterations"):
        await attrs.evolve(rig, loop=capped).run_ours()


def test_ratio_target_judges_the_ratio_not_the_value() -> None:
    figure = Figure("a", "per step", "us", 30.0, 10.0, Target(2.0, Measure.RATIO))
    assert (figure.ratio, figure.met) == (3.0, False)


def test_skipped_figure_has_no_verdict() -> None:
    assert Figure("e", "trim", "ms", None, target=Target(20.0)).met is None


async def test_a_run_that_keeps_an_object_each_time_fails_the_leak_check() -> None:
    kept: list[object] = []

    def make_run() -> memory_benchmark.Run:
        async def run() -> None:
            kept.append([0] * 16)

        return run

    limits = memory_benchmark.Tolerances()
    report = await memory_benchmark.measure(make_run, 100, 20, limits)
    assert not report.objects.flat and not report.heap.flat and not report.flat
    assert "FAIL" in memory_benchmark.describe(report)


def test_the_import_benchmark_reads_the_total_and_only_packages_that_loaded() -> None:
    text = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       300 |        300 |     anyio\n"
        "import time:         2 |          2 |     sitecustomize\n"
        "import time:       100 |        402 |   reactloop\n"
    )
    lines = imports_benchmark.parse_importtime(text)
    summary = imports_benchmark.summarize(Path("tree"), [lines, lines])
    assert (summary.total_ms, summary.modules) == (0.402, 3)
    assert summary.third_party() == ["anyio"] and summary.top(1) == ["anyio"]


def test_runner_writes_json_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    assert main(["--tiny", "--only", "a", "--only", "rss", "--output", str(out)]) == 0
    doc = orjson.loads(out.read_bytes())
    assert [f["scenario"] for f in doc["runs"]["asyncio"]] == ["a", "a"] + ["rss"] * 6
    assert "reactloop" in capsys.readouterr().out


def test_each_backend_runs_in_its_own_process(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    argv = ["--tiny", "--only", "rss", "--backend", "asyncio", "--backend", "trio"]
    assert main([*argv, "--output", str(out)]) == 0
    assert sorted(orjson.loads(out.read_bytes())["runs"]) == ["asyncio", "trio"]


def test_every_listed_equivalent_mutant_is_read_with_its_reason() -> None:
    listed = [line for line in EQUIVALENTS.read_text().splitlines() if line.startswith("- ")]
    entries = load_equivalents(EQUIVALENTS.read_text())
    assert len(entries) == len(listed) and all(e.why for e in entries.values())


def test_a_mutation_score_counts_timeouts_as_killed_and_leaves_equivalents_out() -> None:
    score = Score("m.py", killed=7, timed_out=1, survived=("a", "b"), equivalent=5, other=0)
    assert (score.counted, score.percent) == (10, 80.0)


def test_running_one_module_again_forgets_only_its_fresh_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = tmp_path / "fresh.json"
    monkeypatch.setattr(mutation, "FRESH", fresh)
    mutation.forget_fresh_verdicts(mutation.CORE["stop"])  # nothing recorded yet: no file made
    assert not fresh.exists()
    verdicts = {
        "reactloop._policies._stop.x_a__mutmut_1": 1,
        "reactloop._policies._hooks.x_b__mutmut_2": 0,
    }
    fresh.write_bytes(orjson.dumps(verdicts))
    mutation.forget_fresh_verdicts(mutation.CORE["stop"])
    assert orjson.loads(fresh.read_bytes()) == {"reactloop._policies._hooks.x_b__mutmut_2": 0}


@pytest.mark.parametrize(
    ("verdict", "code"),
    [(0, 0), (mutation.NO_VERDICT, 0), (1, 1), (-24, -24), (-11, 1)],
    ids=["passed", "no-verdict", "failed", "timed-out", "crashed"],
)
def test_a_fresh_run_detects_a_survivor_only_by_a_failure_the_baseline_does_not_share(
    verdict: int, code: int
) -> None:
    assert mutation._fresh_code(verdict) == code


def test_the_output_validation_benchmark_reports_each_way() -> None:
    figures = output_validation.measure(fields=9, number=2, repeats=1)
    assert set(figures) == {"convert", "parse + convert", "strict answer", "raw schema"}
    assert all(value > 0 for value in figures.values())


def test_the_providers_benchmark_encodes_and_decodes_with_every_provider() -> None:
    figures = providers_benchmark.measure(messages=5, repeats=2, inner=1)
    expected = {"openai", "anthropic", "openai-responses", "gemini", "azure", "openai+groq"}
    assert set(figures) == expected
    for row in figures.values():
        assert set(row) == {"encode", "decode"}
        assert all(0 < first <= median <= third for first, median, third in row.values())

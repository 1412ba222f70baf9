"""Smoke test of `python -m benchmarks.sessions`: it measures every contender at a tiny size."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pytest

from benchmarks import sessions

pytestmark = pytest.mark.anyio


async def test_the_sessions_benchmark_reports_every_contender_of_every_age(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sessions.json"
    arguments = ["--ages", "3", "12", "--repeats", "1", "--stores", "memory", "sqlite"]
    figures = await sessions.main([*arguments, "--json", str(out)])
    names = {f"{kind} {age}" for kind in ("after", "cold", "before") for age in (3, 12)}
    assert set(figures) == {"memory", "sqlite"} and orjson.loads(out.read_bytes()) == figures
    assert all(set(each) == names for each in figures.values())
    assert all(math.isfinite(v) and v > 0 for each in figures.values() for v in each.values())
    assert "| sqlite | 12 |" in capsys.readouterr().out

"""The suite runs from a bare clone: nothing the project runs reads files from outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
OUTSIDE = ("../" + "shared", "REACTLOOP_" + "SHARED")  # spelled apart so this file does not match
SCANNED = ("reactloop", "tests", "benchmarks", ".ci", "Makefile", "pyproject.toml")


def _files() -> list[Path]:
    found: list[Path] = []
    for name in SCANNED:
        path = PROJECT / name
        found += [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
    installed = ("__pycache__", "node_modules")  # built or installed here, not the project's
    return [p for p in found if p.suffix != ".pyc" and not installed_in(p, installed)]


def installed_in(path: Path, folders: tuple[str, ...]) -> bool:
    """True for a file under a folder a tool fills (bytecode, npm's packages)."""
    return any(folder in path.parts for folder in folders)


@pytest.mark.parametrize("marker", OUTSIDE)
def test_no_code_tool_or_build_step_points_outside_the_project(marker: str) -> None:
    readers = [
        str(path.relative_to(PROJECT))
        for path in _files()
        if path.suffix != ".md" and marker in path.read_text(errors="replace")
    ]
    assert readers == []


def test_the_fixtures_say_where_they_came_from() -> None:
    note = (PROJECT / "tests" / "fixtures" / "README.md").read_text()
    for folder in ("wire/", "openai/"):
        assert folder in note

"""The floor plan holds: import-linter's contracts (pyproject.toml) keep the layers and the
package fronts, and a deliberate reach-in or upward import breaks them (ADR-0023)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
PACKAGES = ["_core", "_schema", "_policies", "_telemetry", "_output", "_providers", "_durable",
            "_kit", "_tools", "_approval", "_phases", "_loop", "_cassettes", "_cli"]  # fmt: skip
FOUNDATION = {"_errors", "_stored_errors", "_resolver", "_validate", "_moved", "_version",
              "_redact", "_unicode"}  # fmt: skip


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the package under `root`, with the project's contracts."""
    environment = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(PROJECT / "pyproject.toml")],
        cwd=root, env=environment, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the package to break on purpose."""
    shutil.copytree(PROJECT / "reactloop", tmp_path / "reactloop")
    return tmp_path


def test_the_contracts_hold_on_the_package() -> None:
    done = lint(PROJECT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_reach_past_a_front_breaks_the_contract(copy: Path) -> None:
    guards = copy / "reactloop" / "_phases" / "guards.py"
    guards.write_text(guards.read_text() + "\nfrom reactloop._core._messages import Message\n")
    done = lint(copy)
    assert done.returncode != 0
    assert "reactloop._core through its front BROKEN" in done.stdout
    assert "reactloop._phases.guards -> reactloop._core._messages" in done.stdout


def test_an_upward_import_breaks_the_layers(copy: Path) -> None:
    records = copy / "reactloop" / "_core" / "_records.py"
    records.write_text(records.read_text() + "\nfrom reactloop._loop import ReActLoop\n")
    done = lint(copy)
    assert done.returncode != 0
    assert "Layers: a package imports only the layers below it BROKEN" in done.stdout


def test_the_root_holds_only_the_foundation_and_every_package_says_what_it_owns() -> None:
    root = PROJECT / "reactloop"
    private = {path.stem for path in root.glob("_*.py")} - {"__init__", "__main__"}
    assert private == FOUNDATION
    for package in PACKAGES:
        init = root / package / "__init__.py"
        docstring = init.read_text().split('"""')[1]
        assert len(docstring.split()) >= 8, f"{package} says what it owns"

"""`python -m reactloop`: the command line; with no command, the version and the commands."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

import reactloop
from reactloop._cli import main, run_cli
from reactloop._version import __version__


def test_the_version_is_exported() -> None:
    assert reactloop.__version__ == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", __version__)


def test_no_command_prints_the_version_and_runnable_demo_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli([]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"reactloop {__version__}")
    assert "reactloop demo" in out
    modules = re.findall(r"python -m (\S+)", out)
    assert modules
    assert all(importlib.util.find_spec(module) is not None for module in modules)


def test_main_exits_with_the_commands_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["runs", "show", "nosuchrun", "--store", "memory://"])
    assert exited.value.code == 1
    assert capsys.readouterr().err == "reactloop: error: no stored run has the id 'nosuchrun'\n"


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"reactloop {__version__}\n"


def test_the_console_script_and_the_cli_extra_are_declared() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"reactloop": "reactloop._cli:main"}
    assert any(item.startswith("rich") for item in project["optional-dependencies"]["cli"])
    assert not any(item.startswith("rich") for item in project["dependencies"])

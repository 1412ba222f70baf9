"""`python -m reactloop`: the version and a demo command that exists."""

from __future__ import annotations

import importlib.util
import re

import pytest

import reactloop
from reactloop.__main__ import main
from reactloop._version import __version__


def test_the_version_is_exported() -> None:
    assert reactloop.__version__ == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", __version__)


def test_main_prints_the_version_and_runnable_demo_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main()
    out = capsys.readouterr().out
    assert out.startswith(f"reactloop {__version__}")
    modules = re.findall(r"python -m (\S+)", out)
    assert modules
    assert all(importlib.util.find_spec(module) is not None for module in modules)

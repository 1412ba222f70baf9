"""`Telemetry` without the otel extra: a clear error when turned on, and no import otherwise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reactloop import ReActLoop
from reactloop._telemetry._settings import Telemetry
from reactloop.errors import ConfigurationError
from reactloop.testing import ScriptedModel


def test_without_the_api_turning_it_on_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(ConfigurationError, match=r"reactloop\[otel\]"):
        Telemetry()


def test_a_loop_without_telemetry_carries_no_tracing() -> None:
    assert ReActLoop(ScriptedModel(["hi"])).config.tracing is None


def test_importing_reactloop_imports_no_opentelemetry() -> None:
    code = (
        "import sys, reactloop, reactloop.telemetry\n"
        "loaded = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
